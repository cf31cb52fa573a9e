// The launchers (src/bin/launch.mjs) run build/js only while it is the build of the sources as they are: in a
// copy of the tree, a fresh build is current and runs; an edited source makes it stale, and the launcher runs
// the sources through tsx instead (never stale code); building again makes it current.
import test from 'ava';
import { execFile } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function run(cwd: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((done) => {
    execFile(process.execPath, args, { cwd, timeout: 180_000 }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: stdout + stderr });
    });
  });
}

test('launchers: a current build/js runs; an edited source runs from the sources until built again', async (t) => {
  t.timeout(300_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-launch-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) {
    cpSync(join(ROOT, f), join(dir, f), { recursive: true });
  }
  cpSync(join(ROOT, 'build'), join(dir, 'build'), { recursive: true, filter: (s) => !s.includes('/build/js') });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const current = async () => (await run(dir, ['--input-type=module', '-e',
    'import { jsBuildCurrent } from "./src/bin/js-build-info.mjs"; console.log(jsBuildCurrent())'])).out.trim();

  t.is(await current(), 'false', 'no build yet');
  const built = await run(dir, ['src/tools/build-js.mjs']);
  t.is(built.code, 0, built.out);
  t.is(await current(), 'true');
  const compiled = await run(dir, ['src/bin/svc.mjs', '--version']);
  t.is(compiled.code, 0, compiled.out);
  // the compiled file is what runs: broken, the launcher fails with it
  const js = join(dir, 'build/js/cli/svc.js');
  writeFileSync(js, `throw new Error('the compiled svc ran');\n${readFileSync(js, 'utf8')}`);
  t.regex((await run(dir, ['src/bin/svc.mjs', '--version'])).out, /the compiled svc ran/);

  appendFileSync(join(dir, 'src/cli/svc.ts'), '\n// an edit\n');
  t.is(await current(), 'false', 'an edited source makes the build stale');
  const sources = await run(dir, ['src/bin/svc.mjs', '--version']);
  t.is(sources.code, 0, sources.out);
  t.is(sources.out, compiled.out, 'the same program, from its sources (not the broken build)');
  t.is((await run(dir, ['src/tools/build-js.mjs'])).code, 0);
  t.is(await current(), 'true', 'built again');
});
