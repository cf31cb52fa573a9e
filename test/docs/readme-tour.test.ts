// The README's tours run as written (issue 10): the quick start's service, then every ```sh block of
// "Try it over HTTP" and "Try it with the CLI", pasted into bash in order, on a copy of the working
// tree (git-initialised, so `git status` shows what the tour leaves behind). svcd is started the
// way `npm start` does (package.json's start script, cwd the copy, its embedded defaults) with three
// changes a second service on a shared machine needs: ephemeral ports (the test rewrites the
// README's `localhost:8080` and `127.0.0.1:9443` to them), a ready file, and pulses every second
// (the tour waits for the next pulse). The blocks run under `set -euo pipefail` with curl failing on
// an HTTP error status, so a step that fails, an unset variable or a refused request fails the test.
import test from 'ava';
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { until } from '../support/until.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The ```sh blocks of the README section under `heading`. */
export function shBlocks(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README has no section "## ${heading}"`);
  const next = markdown.indexOf('\n## ', start + 4);
  const section = markdown.slice(start, next < 0 ? undefined : next);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

function run(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; input?: string }) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    const p = execFile(cmd, args, { ...opts, maxBuffer: 64 << 20, timeout: 240_000 }, (err, stdout, stderr) => {
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    if (opts.input !== undefined) p.stdin!.end(opts.input);
  });
}

/** The files git would check out: tracked ones and new ones not ignored (this working tree's state). */
async function copyWorkingTree(to: string): Promise<void> {
  const ls = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT });
  for (const f of ls.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(ROOT, f))) continue; // deleted in the working tree
    mkdirSync(dirname(join(to, f)), { recursive: true });
    cpSync(join(ROOT, f), join(to, f));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(to, 'node_modules'));
  const git = (...a: string[]) => run('git', ['-c', 'user.name=tour', '-c', 'user.email=tour@localhost', ...a], {
    cwd: to,
  });
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-qm', 'the working tree under test');
}

test('README: the quick start serves, and the HTTP and CLI tours run as written; git status stays clean', async (t) => {
  t.timeout(300_000);
  const http = shBlocks(README, 'Try it over HTTP');
  const cli = shBlocks(README, 'Try it with the CLI');
  t.true(http.length >= 1 && cli.length >= 1, 'both tours have a sh block');

  const tmp = mkdtempSync(join(tmpdir(), 'svc-tour-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const repo = join(tmp, 'repo');
  const home = join(tmp, 'home');
  mkdirSync(home);
  await copyWorkingTree(repo);

  const start = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { scripts: { start: string } })
    .scripts.start.split(' ');
  const readyFile = join(tmp, 'ready.json');
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  for (const k of Object.keys(env)) if (k.startsWith('SVC_')) delete env[k];
  const svcdEnv = {
    ...env, SVC_HTTP_PORT: '0', SVC_EDGE_PORT: '0', SVC_BACKEND_PORT: '0', SVC_READY_FILE: readyFile,
    SVC_PULSE_PERIOD_MS: '1000',
  };
  const svcd = spawn(start[0]!, start.slice(1), { cwd: repo, env: svcdEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  svcd.stderr.on('data', (d) => { stderr += d; });
  svcd.stdout.resume();
  t.teardown(() => { if (svcd.exitCode === null) svcd.kill('SIGKILL'); });
  await until('svcd ready', () => existsSync(readyFile) || svcd.exitCode !== null, { ms: 90_000 });
  t.is(svcd.exitCode, null, stderr);
  const ready = JSON.parse(readFileSync(readyFile, 'utf8')) as { http: string; edge: string };
  const httpAt = new URL(ready.http).host;
  const edgePort = ready.edge.slice(ready.edge.lastIndexOf(':') + 1);

  const ports = (block: string) => block.replaceAll('localhost:8080', httpAt)
    .replaceAll('127.0.0.1:9443', `127.0.0.1:${edgePort}`);
  // curl fails on an HTTP error status (and prints the body) so a refused request fails the step
  const prelude = 'set -euo pipefail\ncurl() { command curl --fail-with-body "$@"; }\nset -x\n';
  for (const [name, blocks] of [['HTTP tour', http], ['CLI tour', cli]] as const) {
    const script = prelude + blocks.map(ports).join('\n');
    const began = Date.now();
    const r = await run('bash', ['-c', script], { cwd: repo, env });
    t.log(`${name}: ${Date.now() - began} ms`);
    t.is(r.code, 0, `${name} failed:\n${r.stderr.slice(-4000)}\n${r.stdout.slice(-2000)}`);
    if (name === 'HTTP tour') {
      // the sandbox execution prints a short answer, not pages of hex
      t.true(r.stdout.length < 20_000, `the HTTP tour printed ${r.stdout.length} characters`);
    }
  }

  const status = await run('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: repo });
  t.is(status.stdout, '', 'the tour leaves nothing git would show');

  svcd.kill('SIGTERM');
  await until('svcd to stop', () => svcd.exitCode !== null, { ms: 30_000 });
  t.is(svcd.exitCode, 0);
  t.is(stderr, '', 'npm start prints nothing on stderr (its log is on stdout)');
});
