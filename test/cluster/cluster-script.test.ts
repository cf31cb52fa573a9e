// docs/scale-out.md "A local cluster": the block's `npm run cluster`, run as written in bash. It prints the
// addresses of two core nodes and two gateways; a machine is funded (invoice over gateway 1, settled on
// core 1's admin socket) and runs a paid flow whose quote, accept and execution alternate gateways, the
// gateways reaching both nodes; then Ctrl-C (SIGINT to the process group, as a terminal sends it) stops
// every part and removes the data dir.
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { SvcClient } from '../../src/client/client.ts';
import { api, describe } from '../support/cluster.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES } from '../support/postgres.ts';
import { ROOT } from '../docs/blocks.ts';
import { until } from '../support/until.ts';
import { txRef } from '../support/references.ts';

testNeeding(test, 'npm run cluster: two nodes and two gateways on PostgreSQL, a paid flow across them, Ctrl-C '
  + 'stops all', POSTGRES, async (t) => {
  t.timeout(300_000);
  const proc = spawn('bash', ['-c', 'npm run cluster'], {
    cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SVC_LOG_LEVEL: 'warn' },
  });
  let out = '';
  proc.stdout.on('data', (d) => { out += d; });
  proc.stderr.on('data', (d) => { out += d; });
  // 'close': every process holding the output has exited (npm may go on SIGINT before the script is done)
  const closed = new Promise<string>((r) => proc.once('close', (code, signal) => r(signal ?? `code ${code}`)));
  // a test that failed midway: Ctrl-C first, so the script stops its nodes (their own process groups) and
  // its database; a SIGKILL of the script alone would orphan them and keep this worker waiting on their output
  t.teardown(async () => {
    const signal = (s: NodeJS.Signals) => { try { process.kill(-proc.pid!, s); } catch { /* the group has gone */ } };
    if (proc.exitCode === null && proc.signalCode === null) {
      signal('SIGINT');
      await Promise.race([closed, new Promise((r) => setTimeout(r, 60_000))]);
    }
    signal('SIGKILL');
  });
  await until('the cluster prints its addresses', () => {
    if (proc.exitCode !== null) throw new Error(`npm run cluster exited ${proc.exitCode}: ${out}`);
    return out.includes('Ctrl-C stops everything.');
  }, { ms: 240_000, every: 200 });
  t.log(out);

  const gateways = [...out.matchAll(/gateway \d+ +(http:\/\/\S+)/g)].map((m) => m[1]!);
  const admins = [...out.matchAll(/admin socket (\S+)/g)].map((m) => m[1]!);
  const dir = /data in (\S+)\):/.exec(out)![1]!;
  t.is(gateways.length, 2);
  t.is(admins.length, 2);
  const [g1, g2] = gateways as [string, string];
  const nodes = new Set<string>();
  for (let i = 0; i < 4; i++) nodes.add((await api(g1, '/api/v1/hello')).body.node_id);
  t.is(nodes.size, 2, 'gateway 1 reaches both nodes');

  const machine = 'cluster-script';
  const inv = await api(g1, '/api/v1/invoices', { machine_id: machine, units: 1, network: 'TRON', asset: 'USDT' });
  t.is(inv.status, 200, describe(inv));
  const admin = await SvcClient.connect({ kind: 'unix', path: admins[0]! });
  try {
    const reference = txRef('cluster-script', 'USDT_TRON');
    await admin.request('SETTLE_INVOICE', { invoice_id: inv.body.invoice_id, reference });
  } finally {
    admin.close();
  }
  const token = inv.body.machine_token as string;
  const q = await api(g2, '/api/v1/quotes/get-pulse', { machine_id: machine, bits: 64 });
  const a = await api(g1, `/api/v1/quotes/${q.body.quote_id}/accept`, { machine_id: machine }, token);
  t.is(a.status, 200, describe(a));
  const e = await api(g2, '/api/v1/executions/get-pulse', { quote_id: q.body.quote_id, machine_id: machine }, token);
  t.is(e.status, 200, describe(e));
  t.regex(e.body.receipt_id, /^rcpt_/);

  process.kill(-proc.pid!, 'SIGINT');
  // npm ends as a terminal's Ctrl-C ends it (by the signal); the script stops every part first
  t.true(['code 0', 'SIGINT'].includes(await closed), out);
  t.regex(out, /cluster: SIGINT, stopping\ncluster: stopped\n/);
  t.false(existsSync(dir), 'the data dir is removed');
  await t.throwsAsync(api(g1, '/api/v1/hello'), undefined, 'gateway 1 is gone');
});
