import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { selfCheck } from '../../src/kernels/self-check.ts';

test('self-check: every kernel passes its known answer', (t) => {
  const r = selfCheck();
  t.true(r.length >= 8);
  t.deepEqual(r.filter((x) => !x.ok), []);
});

test('svcd selfcheck prints the build and exits 0; an unknown command exits 2', async (t) => {
  const run = promisify(execFile);
  const main = new URL('../../src/main.ts', import.meta.url).pathname;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', main, 'selfcheck']);
  t.regex(stdout, /ABI 1, sha256 [0-9a-f]{64}/);
  t.regex(stdout, /self-check passed/);
  const e = await t.throwsAsync(run(process.execPath, ['--import', 'tsx', main, 'frobnicate']));
  t.is((e as any).code, 2);
});
