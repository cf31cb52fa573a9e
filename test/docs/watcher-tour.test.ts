// The README's "Funding without an operator (a chain watcher)" runs as written: its first
// block (the watcher's environment, then `npm start`) and its second (open an invoice, pay it with
// `cast send`, wait until it is settled, read the balance), each pasted into bash on a copy of the
// working tree. Against a local anvil node (chain id 8453, like Base) with the 6-decimal test token,
// so the test substitutes only what the README marks as the reader's own: the RPC URL, the token,
// the receiving address, the payer's key, and the edge port (svcd gets ephemeral ports and a ready
// file from the environment, as in readme-tour.test.ts). anvil mines a block per transaction; the
// test plays the chain meanwhile and mines a block every 200 ms (a real user just waits: Base makes
// one every 2 s), so anvil's `safe` head (32 blocks behind its latest) passes the payment.
// The invoice must end settled by the watcher (deposit_id, the transfer as its reference, the
// watcher's `credited` count) with no operator step: the blocks name no svc-admin, and an `svc-admin`
// first on PATH would leave a mark.
import test from 'ava';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toHex } from 'viem';
import { startChain } from '../watchers/harness.ts';
import { until } from '../support/until.ts';
import { copyWorkingTree, ROOT, run, shBlocks, tourEnv } from './tour.ts';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const HEADING = '### Funding without an operator (a chain watcher)';

/** Sets the value of `NAME=…` (or `export NAME=…`) in a block: exactly one such line must exist. */
function setVar(block: string, name: string, value: string): string {
  const re = new RegExp(`^((?:export )?${name}=)\\S+`, 'gm');
  const n = [...block.matchAll(re)].length;
  if (n !== 1) throw new Error(`the block sets ${name} ${n} times, not once`);
  return block.replace(re, `$1${value}`);
}

test('README: funding with a chain watcher settles the invoice with no operator, against anvil', async (t) => {
  const blocks = shBlocks(README, HEADING);
  t.is(blocks.length, 2, 'the watcher tour has two sh blocks: svcd, then the client');
  const [serve, client] = blocks as [string, string];
  t.notRegex(serve + client, /svc-admin|\badmin\b/, 'no operator step in the watcher tour');
  t.regex(client, /fund-account --units 5 --network Base --asset USDC/);

  const chain = await startChain(t);
  const { anvil, token, railAddress } = chain;
  const payer = anvil.account(1);
  const payerKey = toHex(payer.getHdKey().privateKey!);
  const railBefore = await anvil.balanceOf(railAddress);

  const tmp = mkdtempSync(join(tmpdir(), 'svc-watcher-tour-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const repo = join(tmp, 'repo');
  const home = join(tmp, 'home');
  const bin = join(tmp, 'bin');
  const mark = join(tmp, 'svc-admin-called');
  mkdirSync(home);
  mkdirSync(bin);
  writeFileSync(join(bin, 'svc-admin'), `#!/bin/sh\necho "$@" >> '${mark}'\nexit 1\n`);
  chmodSync(join(bin, 'svc-admin'), 0o755);
  await copyWorkingTree(repo);
  const env = { ...tourEnv(home), PATH: `${bin}:${process.env.PATH}` };

  // the first block, as written but for the reader's own values: the watcher's environment, npm start
  let serveScript = setVar(serve, 'SVC_WATCH_USDC_BASE_RPC', anvil.url);
  serveScript = setVar(serveScript, 'SVC_WATCH_USDC_BASE_TOKEN', token);
  serveScript = setVar(serveScript, 'SVC_WALLET_USDC_BASE', railAddress);
  const readyFile = join(tmp, 'ready.json');
  const svcdEnv = { ...env, SVC_HTTP_PORT: '0', SVC_EDGE_PORT: '0', SVC_BACKEND_PORT: '0', SVC_READY_FILE: readyFile };
  const svcd = spawn('bash', ['-c', `set -euo pipefail\n${serveScript}`], {
    cwd: repo, env: svcdEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
  });
  let log = '';
  svcd.stdout.on('data', (d) => { log += d; });
  svcd.stderr.on('data', (d) => { log += d; });
  // bash, npm and svcd share a process group (detached): signals go to all of them, as Ctrl-C would
  const signalGroup = (sig: NodeJS.Signals | 0): boolean => {
    try { process.kill(-svcd.pid!, sig); return true; } catch { return false; } // ESRCH: the group is gone
  };
  t.teardown(() => { signalGroup('SIGKILL'); });
  const ended = () => svcd.exitCode !== null || svcd.signalCode !== null;
  await until('svcd ready', () => existsSync(readyFile) || ended(), { ms: 90_000, every: 100 });
  t.false(ended(), log);
  const ready = JSON.parse(readFileSync(readyFile, 'utf8')) as { http: string; edge: string; edge_cert_sha256: string };
  const edgePort = ready.edge.slice(ready.edge.lastIndexOf(':') + 1);

  // the second block, as written but for the reader's own values and the edge port
  let clientScript = setVar(client, 'BASE_RPC', anvil.url);
  clientScript = setVar(clientScript, 'USDC', token);
  clientScript = setVar(clientScript, 'PAYER_KEY', payerKey);
  clientScript = clientScript.replaceAll('127.0.0.1:9443', `127.0.0.1:${edgePort}`);
  let mining = true;
  const miner = (async () => {
    while (mining) {
      await anvil.mine(1);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  const r = await run('bash', ['-c', `set -euo pipefail\nset -x\n${clientScript}`], { cwd: repo, env });
  mining = false;
  await miner;
  t.is(r.code, 0, `the watcher tour failed:\n${r.stderr.slice(-4000)}\n${r.stdout.slice(-2000)}\n${log.slice(-3000)}`);

  // settled by the watcher: the payer's transfer is the invoice's reference and deposit
  const inv = /^\++ INV=(inv_\S+)$/m.exec(r.stderr)?.[1];
  t.truthy(inv, 'the tour named its invoice');
  const tx = /^transactionHash\s+(0x[0-9a-f]{64})$/m.exec(r.stdout)?.[1];
  t.truthy(tx, 'cast send printed its transaction');
  const svc = (...a: string[]) => run('node', ['src/bin/svc.mjs', '--json', ...a], {
    cwd: repo,
    env: {
      ...env, SVC_EDGE: `127.0.0.1:${edgePort}`, SVC_MACHINE_ID: 'my-cli-agent', SVC_EDGE_PIN: ready.edge_cert_sha256,
    },
  });
  const status = await svc('invoice-status', inv!);
  t.is(status.code, 0, status.stderr);
  const record = JSON.parse(status.stdout) as Record<string, string>;
  t.is(record.state, 'settled');
  t.regex(record.deposit_id ?? '', /^dep_[0-9a-f]{32}$/, 'a deposit settled it, not a reference typed by hand');
  t.true((record.settlement_reference ?? '').startsWith(`${tx}:`), record.settlement_reference);
  t.is(await anvil.balanceOf(railAddress) - railBefore, BigInt(record.amount_due!), 'the rail got amount_due');
  const bal = await svc('balance');
  t.is(bal.code, 0, bal.stderr);
  t.is((JSON.parse(bal.stdout) as Record<string, string>).available_units, record.credit_units);

  const pub = await (await fetch(new URL('/api/v1/status', ready.http))).json() as {
    edge: { watchers: Record<string, { credited: number; unmatched: number; state: string }> };
  };
  const w = pub.edge.watchers.USDC_BASE!;
  t.is(w.credited, 1, 'the watcher credited the payment');
  t.is(w.unmatched, 0);
  t.false(existsSync(mark), 'svc-admin was never called');

  signalGroup('SIGTERM');
  await until('svcd to stop', () => !signalGroup(0), { ms: 30_000, every: 100 });
});
