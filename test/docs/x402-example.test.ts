// docs/x402.md's client program, as written: its ```js block, run by node against svcd with x402 on (anvil,
// the USDC port) with the test token for TOKEN and a payer's key for PAYER_KEY. It prints the status, the
// receipt id, the transaction and the decoded PAYMENT-RESPONSE.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toHex } from 'viem';
import { ROOT } from './blocks.ts';
import { PAYERS, startChain, startSvcd } from '../x402/harness.ts';

/** The doc's one ```js block. */
function clientProgram(): string {
  const doc = readFileSync(join(ROOT, 'docs/x402.md'), 'utf8');
  const blocks = [...doc.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  if (blocks.length !== 1) throw new Error(`docs/x402.md: expected one js block, found ${blocks.length}`);
  return blocks[0]!;
}

test('docs/x402.md: the client program pays for a pulse as written', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, chain);
  // a directory of its own, resolving the packages the doc says to install from this project's node_modules
  const dir = mkdtempSync(join(tmpdir(), 'x402-example-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'pay-pulse.mjs'), clientProgram());
  const env = {
    ...process.env, SVC_URL: s.ready.http!, TOKEN: chain.token,
    PAYER_KEY: toHex(chain.anvil.account(PAYERS[0]!).getHdKey().privateKey!),
  };
  const out = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(process.execPath, ['pay-pulse.mjs'], { cwd: dir, env, timeout: 120_000 }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
  t.is(out.code, 0, out.stderr);
  t.regex(out.stdout, /^200 rcpt_\S+ 0x[0-9a-f]{64}$/m);
  t.regex(out.stdout, /success: true/);
});
