// npm test: builds the kernels if their sources changed, runs ava, and ends with one plain
// summary line ("ava: N passed, N failed, N skipped") that CI logs and humans can both read.
// The exit code is ava's.
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const build = spawnSync(process.execPath, ['src/tools/ensure-build.mjs'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
// type errors are defects too: the suite does not run on code that does not type-check
const tsc = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '--noEmit', '-p', '.'], {
  cwd: root, stdio: 'inherit',
});
if (tsc.status !== 0) {
  console.error('typecheck failed (npm run typecheck)');
  console.log('\nava: 0 passed, 1 failed, 0 skipped');
  process.exit(1);
}

const ava = spawn(process.execPath, ['node_modules/ava/entrypoints/cli.mjs', ...process.argv.slice(2)], {
  cwd: root, stdio: ['inherit', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' },
});
let out = '';
ava.stdout.on('data', (d) => { out += d; process.stdout.write(d); });
ava.stderr.on('data', (d) => { out += d; process.stderr.write(d); });
ava.on('exit', (code, signal) => {
  // count the reporter's own marks: with failures ava prints no "N tests passed" line
  const lines = out.split('\n');
  const passed = lines.filter((l) => /^\s*✔/.test(l)).length;
  const crosses = lines.filter((l) => /^\s*✘/.test(l)).length;
  // a run that failed without naming a test (a crash, a timeout) counts as one failure
  const failed = crosses + ((code ?? 1) !== 0 && crosses === 0 ? 1 : 0);
  const skipped = lines.filter((l) => /^\s*- \[skip\]/.test(l)).length;
  const todo = lines.filter((l) => /^\s*- \[todo\]/.test(l)).length;
  console.log(`\nava: ${passed} passed, ${failed} failed, ${skipped} skipped${todo ? `, ${todo} todo` : ''}`);
  process.exit(code ?? (signal ? 1 : 0));
});
