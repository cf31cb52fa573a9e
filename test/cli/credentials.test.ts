// The CLI's credentials file under concurrent `svc` processes (CI caught two `svc fund-account` for
// different machines at once: one token was lost, and one process failed on the other's temp file).
// Separate processes, not async calls: the file is what they share.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CREDENTIALS = fileURLToPath(new URL('../../src/cli/credentials.ts', import.meta.url));

/** Runs saveToken for each machine in one child process. */
function saver(path: string, machines: string[]): Promise<void> {
  const code = `const { saveToken } = await import(${JSON.stringify(CREDENTIALS)});
for (const m of ${JSON.stringify(machines)}) saveToken(m, 'token-' + m, ${JSON.stringify(path)});`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], (e, _out, err) =>
      (e ? reject(new Error(err || e.message)) : resolve()));
  });
}

test('tokens saved by 8 svc processes at once are all kept, and no temp or lock file is left', async (t) => {
  t.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-creds-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'credentials.json');
  const procs = Array.from({ length: 8 }, (_, p) => Array.from({ length: 25 }, (_, i) => `m-${p}-${i}`));
  await Promise.all(procs.map((machines) => saver(path, machines)));
  const saved = JSON.parse(readFileSync(path, 'utf8')) as { machines: Record<string, { token: string }> };
  const want = procs.flat();
  t.deepEqual(Object.keys(saved.machines).sort(), [...want].sort());
  for (const m of want) t.is(saved.machines[m]!.token, `token-${m}`);
  t.deepEqual(readdirSync(dir), ['credentials.json']);
});
