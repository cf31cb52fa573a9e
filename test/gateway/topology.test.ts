// `svcd start` with SVC_GATEWAY_PROCESSES = K: the core and K node:cluster gateway workers sharing the
// HTTP port. The workers hold no state of their own: a sandbox quote made through
// one is accepted and executed through another, a paid flow works through any, per-address windows
// hold node-wide, a worker that dies is replaced, and SIGTERM stops the workers before the core,
// leaving no process behind.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { httpFrom } from '../support/http-from.ts';
import { childPids } from '../support/proc.ts';
import { startSvcd } from '../support/start-svcd.ts';
import { fundMachine } from '../support/svcd.ts';
import { autoGateways, loadConfig } from '../../src/core/config.ts';
import { until } from '../support/until.ts';

/** Pids of the live svcd processes whose parent is `ppid` (Linux /proc; tsx's esbuild children aside). */
function children(ppid: number): number[] {
  return childPids(ppid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('svcd.mjs');
    } catch {
      return false; // gone meanwhile
    }
  });
}

const alive = (pid: number) => {
  try { process.kill(pid, 0); return true; } catch { return false; }
};

// every request on a new connection, so round-robin spreads the steps of one flow over the workers
const fresh = { connection: 'close' };

test('SVC_GATEWAY_PROCESSES: auto is in-process on 1 core, 2 gateways on 2, one per core but one beyond; '
  + 'bad values stop',
  (t) => {
    t.is(autoGateways(1), 0);
    t.is(autoGateways(2), 2);
    t.is(autoGateways(3), 2);
    t.is(autoGateways(4), 3);
    t.is(autoGateways(64), 16);
    t.is(loadConfig({ SVC_GATEWAY_PROCESSES: '3' }).gatewayProcesses, 3);
    t.is(loadConfig({ SVC_GATEWAY_PROCESSES: '0' }).gatewayProcesses, 0);
    for (const bad of ['-1', '65', '1.5', 'two']) {
      t.throws(() => loadConfig({ SVC_GATEWAY_PROCESSES: bad }), { message: /SVC_GATEWAY_PROCESSES must be auto/ });
    }
  });

test.serial('K = 2 gateway workers share one core: sandbox and paid flows across workers, a dead worker is '
  + 'replaced, SIGTERM leaves no process', async (t) => {
  const s = await startSvcd(t, { SVC_GATEWAY_PROCESSES: '2', SVC_RATE_PUBLIC_LOW: '80/60' });
  t.is(s.ready.gateway_processes, 2);
  const base = s.ready.http!;
  const primary = s.proc!.pid!;
  await until('two gateway workers', () => children(primary).length === 2);
  const workers = children(primary);

  // the sandbox's state is the core's: 12 flows, each step on its own connection
  for (let i = 0; i < 12; i++) {
    const q = await httpFrom('127.0.0.1', base, 'POST', '/api/v1/sandbox/quotes/get-pulse', { bits: 64 }, fresh);
    t.is(q.status, 200, JSON.stringify(q.body));
    const { quote_id, machine_id } = q.body as { quote_id: string; machine_id: string };
    const a = await httpFrom('127.0.0.1', base, 'POST', `/api/v1/sandbox/quotes/${quote_id}/accept`,
      { machine_id }, fresh);
    t.is(a.status, 200, JSON.stringify(a.body));
    const x = await httpFrom('127.0.0.1', base, 'POST', '/api/v1/sandbox/executions/get-pulse',
      { machine_id, quote_id }, fresh);
    t.is(x.status, 200, JSON.stringify(x.body));
    const v = await httpFrom('127.0.0.1', base, 'POST', '/api/v1/sandbox/receipts/verify',
      { machine_id, receipt_id: x.body.receipt_id }, fresh);
    t.is(v.status, 200, JSON.stringify(v.body));
    t.true(v.body.valid);
  }

  // a paid GET_PULSE flow, its three steps on three connections
  const token = await fundMachine(s, 'topo-m', 5);
  const auth = { ...fresh, authorization: `Bearer ${token}` };
  const q = await httpFrom('127.0.0.1', base, 'POST', '/api/v1/quotes/get-pulse',
    { machine_id: 'topo-m', bits: 256 }, fresh);
  t.is(q.status, 200, JSON.stringify(q.body));
  const acc = await httpFrom('127.0.0.1', base, 'POST', `/api/v1/quotes/${q.body.quote_id}/accept`,
    { machine_id: 'topo-m' }, auth);
  t.is(acc.status, 200, JSON.stringify(acc.body));
  const ex = await httpFrom('127.0.0.1', base, 'POST', '/api/v1/executions/get-pulse',
    { machine_id: 'topo-m', quote_id: q.body.quote_id }, auth);
  t.is(ex.status, 200, JSON.stringify(ex.body));
  t.is(ex.body.output_hex.length, 64);

  // a free quote is made by the worker that received it (core/quote-desk.ts), with the node's quote key:
  // accepted and executed above through other workers. One with an idempotency_key is the core's: its
  // replay through the other worker is the same quote
  const keyed = { machine_id: 'topo-m', bits: 64, idempotency_key: 'topo-k' };
  const k1 = await httpFrom('127.0.0.1', base, 'POST', '/api/v1/quotes/get-pulse', keyed, fresh);
  const k2 = await httpFrom('127.0.0.1', base, 'POST', '/api/v1/quotes/get-pulse', keyed, fresh);
  t.is(k1.status, 200);
  t.is(k2.body.quote_id, k1.body.quote_id);
  t.is(k2.headers['idempotent-replayed'], 'true');
  // a worker's quote checks what the schema checks, and MCP's quote tool is answered by the worker too
  const bad = await httpFrom('127.0.0.1', base, 'POST', '/api/v1/quotes/get-pulse',
    { machine_id: 'topo-m', bits: 0 }, fresh);
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_request');
  const mcp = await httpFrom('127.0.0.1', base, 'POST', '/mcp', {
    jsonrpc: '2.0', id: 1, method: 'tools/call',
    params: { name: 'svc_quote_get_pulse', arguments: { machine_id: 'topo-m', bits: 64 } },
  }, { ...fresh, accept: 'application/json', 'mcp-protocol-version': '2025-06-18' });
  t.is(mcp.status, 200, JSON.stringify(mcp.body));
  const viaMcp = (mcp.body.result as { structuredContent: Record<string, string> }).structuredContent;
  t.is(viaMcp.state, 'issued');
  const accepted = await httpFrom('127.0.0.1', base, 'POST', `/api/v1/quotes/${viaMcp.quote_id}/accept`,
    { machine_id: 'topo-m' }, auth);
  t.is(accepted.status, 200, JSON.stringify(accepted.body));

  // per-address windows are the node's, not each worker's, although workers answer free quotes
  // themselves (they take each quote's count in the core's window): the 81st quote from one address
  // is 429 (each worker saw about 40 of them)
  let served = 0;
  let refused: Awaited<ReturnType<typeof httpFrom>> | null = null;
  while (!refused && served < 200) {
    const r = await httpFrom('127.0.0.5', base, 'POST', '/api/v1/quotes/get-pulse',
      { machine_id: 'rl-m', bits: 64 }, fresh);
    if (r.status === 200) served++;
    else refused = r;
  }
  t.is(served, 80);
  t.is(refused?.status, 429);
  t.is(refused?.body.error.code, 'rate_limited');
  t.truthy(refused?.headers['retry-after']);

  // ...and each address has its own: 50 health and pulse reads from each of two more addresses (100
  // in all, over the limit of 80 if they shared a window) are all served
  for (const from of ['127.0.0.6', '127.0.0.7']) {
    const statuses = new Set<number>();
    for (let i = 0; i < 50; i++) {
      const path = i % 2 ? '/api/v1/health' : '/api/v1/pulses/latest';
      statuses.add((await httpFrom(from, base, 'GET', path, undefined, fresh)).status);
    }
    t.deepEqual([...statuses], [200], from);
  }

  // the sandbox steps are the gateway's own calls: the public svc/1 edge refuses them
  const edge = await s.edge();
  try {
    await t.throwsAsync(edge.request('SANDBOX_QUOTE', {}), { message: /HTTP gateway's own call/ });
  } finally {
    edge.close();
  }

  // a worker killed outright is replaced; the service answers throughout
  process.kill(workers[0]!, 'SIGKILL');
  await until('a replacement worker', () => {
    const now = children(primary);
    return now.length === 2 && !now.includes(workers[0]!);
  });
  for (let i = 0; i < 4; i++) {
    const h = await httpFrom('127.0.0.1', base, 'GET', '/api/v1/health', undefined, fresh);
    t.is(h.status, 200);
  }
  t.regex(s.stdout + s.stderr, /gateway worker died; replacing it/);

  const last = children(primary);
  t.is(await s.stop(), 0);
  await until('no worker left', () => last.every((p) => !alive(p)), { ms: 10_000 });
});
