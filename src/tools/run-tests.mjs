// npm test: builds the kernels if their sources changed, type-checks, runs ava, and ends with one
// plain summary line ("ava: N passed, N failed, N skipped in 17m 04s") that CI logs and humans can both
// read. `--quick` (npm run test:quick) runs the quick tier only: the tests that start no svcd, no
// browser, no database, no chain and no child process (test-tiers.mjs). The exit code is ava's.
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { quickTier } from './test-tiers.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const started = Date.now();
const quick = process.argv.includes('--quick');
const passOn = process.argv.slice(2).filter((a) => a !== '--quick');
const files = quick ? quickTier(root) : [];

/** 1023 s → "17m 03s" */
function wall(ms) {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}
const build = spawnSync(process.execPath, ['src/tools/ensure-build.mjs'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
// type errors are defects too: the suite does not run on code that does not type-check
const tsc = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '--noEmit', '-p', '.'], {
  cwd: root, stdio: 'inherit',
});
if (tsc.status !== 0) {
  console.error('typecheck failed (npm run typecheck)');
  console.log(`\nava: 0 passed, 1 failed, 0 skipped in ${wall(Date.now() - started)}`);
  process.exit(1);
}

const ava = spawn(process.execPath, ['node_modules/ava/entrypoints/cli.mjs', ...files, ...passOn], {
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
  const tier = quick ? ` (quick tier: ${files.length} files)` : '';
  const counts = `${passed} passed, ${failed} failed, ${skipped} skipped${todo ? `, ${todo} todo` : ''}`;
  console.log(`\nava: ${counts} in ${wall(Date.now() - started)}${tier}`);
  process.exit(code ?? (signal ? 1 : 0));
});
