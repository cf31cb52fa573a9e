// docs/scale-out.md "A local cluster": the block's `npm run cluster`, run as written in bash. It prints the
// addresses of two core nodes and two gateways; a machine is funded (invoice over gateway 1, settled on
// core 1's admin socket) and runs a paid flow whose quote, accept and execution alternate gateways, the
// gateways reaching both nodes; then Ctrl-C (SIGINT to the process group, as a terminal sends it) stops
// every part and removes the data dir. And `npm run cluster -- --hosts`: the same across network namespaces,
// HAProxy in front.
import test, { type ExecutionContext } from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SvcClient } from '../../src/client/client.ts';
import { api, describe, nodeIds } from '../support/cluster.ts';
import { HAPROXY } from '../support/host-cluster.ts';
import { NETNS } from '../support/hosts.ts';
import { allOf, testNeeding } from '../support/needs.ts';
import { POSTGRES } from '../support/postgres.ts';
import { ROOT, bash } from '../docs/blocks.ts';
import { shBlocks } from '../docs/tour.ts';
import { until } from '../support/until.ts';
import { txRef } from '../support/references.ts';

/** Runs `command` in bash in its own process group; stops it with Ctrl-C (SIGINT to the group) at teardown. */
function runScript(t: ExecutionContext, command: string, env: Record<string, string> = {}) {
  const proc = spawn('bash', ['-c', command], {
    cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SVC_LOG_LEVEL: 'warn', ...env },
  });
  const run = { out: '', proc, closed: null as unknown as Promise<string> };
  proc.stdout.on('data', (d) => { run.out += d; });
  proc.stderr.on('data', (d) => { run.out += d; });
  // 'close': every process holding the output has exited (npm may go on SIGINT before the script is done)
  run.closed = new Promise<string>((r) => proc.once('close', (code, signal) => r(signal ?? `code ${code}`)));
  // a test that failed midway: Ctrl-C first, so the script stops its nodes (their own process groups) and
  // its database; a SIGKILL of the script alone would orphan them and keep this worker waiting on their output
  t.teardown(async () => {
    const signal = (s: NodeJS.Signals) => { try { process.kill(-proc.pid!, s); } catch { /* the group has gone */ } };
    if (proc.exitCode === null && proc.signalCode === null) {
      signal('SIGINT');
      await Promise.race([run.closed, new Promise((r) => setTimeout(r, 60_000))]);
    }
    signal('SIGKILL');
  });
  return run;
}

/** A machine funded with an invoice over `base`, settled on the admin socket; then a paid flow over both bases. */
async function paidFlow(t: ExecutionContext, [g1, g2]: [string, string], adminSocket: string, machine: string) {
  const inv = await api(g1, '/api/v1/invoices', { machine_id: machine, units: 1, network: 'TRON', asset: 'USDT' });
  t.is(inv.status, 200, describe(inv));
  const admin = await SvcClient.connect({ kind: 'unix', path: adminSocket });
  try {
    await admin.request('SETTLE_INVOICE', { invoice_id: inv.body.invoice_id, reference: txRef(machine, 'USDT_TRON') });
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
}

const count = (xs: string[]) => xs.reduce<Record<string, number>>((m, x) => ({ ...m, [x]: (m[x] ?? 0) + 1 }), {});


/** Waits for the script's addresses (its last line says how to stop it). */
function printed(run: { out: string; proc: { exitCode: number | null } }) {
  return until('the cluster prints its addresses', () => {
    if (run.proc.exitCode !== null) throw new Error(`npm run cluster exited ${run.proc.exitCode}: ${run.out}`);
    return run.out.includes('Ctrl-C stops everything.');
  }, { ms: 240_000, every: 200 });
}

/** The limits the first test checks across the cluster: a window of 120 a minute, 20 live sandbox entries. */
const LIMITS = { SVC_RATE_PUBLIC_LOW: '120/60', SVC_SANDBOX_MAX_PER_CLIENT: '20' };

/**
 * README "Try it over HTTP" as written (its machine named `machine`), against `base` instead of
 * localhost:8080; fails the test on any answer that is not ok.
 */
async function readmeTour(t: ExecutionContext, base: string, machine: string): Promise<void> {
  const [block] = shBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'), '## Try it over HTTP');
  const script = block!.replaceAll('localhost:8080', base.replace(/^http:\/\//, '')).replaceAll('my-agent', machine);
  const ran = await bash(script, { cwd: ROOT, env: process.env });
  t.is(ran.code, 0, ran.stderr);
  t.notRegex(ran.stdout, /"ok":false/, `${base}: ${ran.stdout}`);
  t.regex(ran.stdout, /"receipt_id":"sbx_rcpt_/, 'the sandbox execution answered');
}

testNeeding(test, 'npm run cluster: two nodes and two gateways on PostgreSQL; the README\'s HTTP tour on each '
  + 'gateway in turn, a machine\'s window and a client\'s sandbox quota exact across both, a paid flow; Ctrl-C '
  + 'stops all', POSTGRES, async (t) => {
  t.timeout(300_000);
  const run = runScript(t, 'npm run cluster', LIMITS);
  await printed(run);
  t.log(run.out);
  const gateways = [...run.out.matchAll(/gateway \d+ +(http:\/\/\S+)/g)].map((m) => m[1]!);
  const admins = [...run.out.matchAll(/admin socket (\S+)/g)].map((m) => m[1]!);
  const dir = /data in (\S+)\):/.exec(run.out)![1]!;
  t.is(gateways.length, 2);
  t.is(admins.length, 2);
  t.is((await nodeIds(gateways[0]!)).length, 2, 'gateway 1 reaches both nodes');
  for (let i = 0; i < 4; i++) await readmeTour(t, gateways[i % 2]!, `tour-${i}`);
  await paidFlow(t, gateways as [string, string], admins[0]!, 'cluster-script');

  // one machine's window (120 a minute) over both gateways and both nodes: 120 admitted, whatever the mix
  const funding = { machine_id: 'windowed', units: 1, network: 'TRON', asset: 'USDT' };
  const inv = await api(gateways[0]!, '/api/v1/invoices', funding);
  const token = inv.body.machine_token as string;
  const balances = await Promise.all(Array.from({ length: 130 }, (_, i) => api(gateways[i % 2]!, '/api/v1/balance',
    { machine_id: 'windowed' }, token)));
  t.deepEqual(count(balances.map(describe)), { 200: 120, '429 rate_limited': 10 }, 'per machine: exactly 120');
  // one client's live sandbox entries (20): the four tours hold 8 (a quote and a receipt each)
  const quotes = await Promise.all(Array.from({ length: 14 }, (_, i) => api(gateways[i % 2]!,
    '/api/v1/sandbox/quotes/get-pulse', { bits: 256 })));
  t.deepEqual(count(quotes.map(describe)), { 200: 12, '429 rate_limited': 2 }, 'per client: exactly 20 live entries');

  process.kill(-run.proc.pid!, 'SIGINT');
  // npm ends as a terminal's Ctrl-C ends it (by the signal); the script stops every part first
  t.true(['code 0', 'SIGINT'].includes(await run.closed), run.out);
  t.regex(run.out, /cluster: SIGINT, stopping\ncluster: stopped\n/);
  t.false(existsSync(dir), 'the data dir is removed');
  await t.throwsAsync(api(gateways[0]!, '/api/v1/hello'), undefined, 'gateway 1 is gone');
});

testNeeding(test, 'npm run cluster -- --hosts: every part on a host of its own, HAProxy in front; a paid flow; '
  + 'Ctrl-C removes the hosts', allOf(POSTGRES, NETNS, HAPROXY), async (t) => {
  t.timeout(300_000);
  const run = runScript(t, 'npm run cluster -- --hosts');
  await printed(run);
  t.log(run.out);
  const lb = /haproxy +(http:\/\/\S+)/.exec(run.out)![1]!;
  const admins = [...run.out.matchAll(/admin socket (\S+)/g)].map((m) => m[1]!);
  const tag = /network namespaces (\S+)-\*/.exec(run.out)![1]!;
  const dir = /data in (\S+)\):/.exec(run.out)![1]!;
  t.is(admins.length, 2);
  t.is((await api(lb, '/readyz')).status, 200);
  t.is((await nodeIds(lb)).length, 2, 'HAProxy → gateways → both nodes');
  await paidFlow(t, [lb, lb], admins[1]!, 'cluster-hosts');

  process.kill(-run.proc.pid!, 'SIGINT');
  t.true(['code 0', 'SIGINT'].includes(await run.closed), run.out);
  t.regex(run.out, /cluster: stopped\n/);
  t.false(existsSync(dir), 'the data dir is removed');
  const left = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n').filter((l) => l.startsWith(tag));
  t.deepEqual(left, [], 'the hosts are removed');
});
