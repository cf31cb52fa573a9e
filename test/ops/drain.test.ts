// SIGTERM under load with a stock client: 32 concurrent paid flows through Node's fetch (undici,
// keep-alive, no socket limit), the signal at a moment the load does not choose, five rounds each for
// `svcd start` with two gateway workers and for a core node of a two-node cluster behind a gateway.
// Every request sent before the signal is answered: no reset, no "other side closed". Requests sent
// after it are answered or refused at the connection. The money adds up and the audit is clean.
import test, { type ExecutionContext } from 'ava';
import { auditCluster, Cluster } from '../support/cluster.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';
import { startSvcd } from '../support/start-svcd.ts';
import { BIN, fundMachine, runBin } from '../support/svcd.ts';
import { until } from '../support/until.ts';
import { QUOTE } from './flows.ts';

const postgres = postgresForFile(test);
const LANES = 32;
const ROUNDS = 5;

/** One request as the client saw it: when it was handed to fetch, and what came of it. */
interface Sent { at: number; step: string; status?: number; code?: string; error?: string }

/** Transport errors that mean the server dropped a request it had (or may have had): a reset. */
const RESET = /ECONNRESET|EPIPE|UND_ERR_SOCKET|other side closed|socket hang up/;

async function post(base: string, path: string, body: unknown, token?: string): Promise<Omit<Sent, 'at' | 'step'>> {
  try {
    const r = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    const json = await r.json().catch(() => null) as { quote_id?: string; error?: { code?: string } } | null;
    return { status: r.status, ...(json?.error?.code ? { code: json.error.code } : {}), ...(json ? { json } : {}) };
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return { error: cause?.code ?? cause?.message ?? String(e) };
  }
}

/**
 * LANES lanes of paid flows against `base` until `stopped()`; each request is logged with the time it
 * was handed to fetch. A lane stops at its first transport error (the server is going away).
 */
function load(base: string, machine: string, token: string, stopped: () => boolean) {
  const sent: Sent[] = [];
  let flows = 0;
  /** One step; one the ledger asked to retry (busy: a conflicting write on the shared database) is sent again. */
  const step = async (name: string, path: string, body: unknown, auth?: string) => {
    for (let tries = 1; ; tries++) {
      const at = performance.now();
      const r = await post(base, path, body, auth) as Omit<Sent, 'at' | 'step'> & { json?: { quote_id?: string } };
      sent.push({ ...r, at, step: name });
      if (r.code !== 'busy' || tries >= 20) return r;
    }
  };
  const lane = async () => {
    while (!stopped()) {
      const q = await step('quote', `/api/v1/quotes/${QUOTE.service}`, { ...QUOTE, machine_id: machine });
      if (q.status !== 200) { if (q.error) return; continue; }
      const id = q.json!.quote_id!;
      const a = await step('accept', `/api/v1/quotes/${id}/accept`, { machine_id: machine }, token);
      if (a.status !== 200) { if (a.error) return; continue; }
      const e = await step('execute', '/api/v1/executions/attest-event',
        { quote_id: id, machine_id: machine, plain_hex: '00' }, token);
      if (e.error) return;
      if (e.status === 200) flows++;
    }
  };
  const done = Promise.all(Array.from({ length: LANES }, lane));
  return { sent, done, flows: () => flows };
}

/** What the requests sent before `signalAt` met, and after. */
function judge(t: ExecutionContext, sent: Sent[], signalAt: number, round: number): string {
  const before = sent.filter((s) => s.at < signalAt);
  const after = sent.filter((s) => s.at >= signalAt);
  const resets = before.filter((s) => s.error);
  t.deepEqual(resets.map((s) => `${s.step}: ${s.error}`), [], `round ${round}: a request sent before the signal lost`);
  // answers: served, or refused unrun (a worker's connection opened during its drain); never another 5xx
  // (busy: the shared database asked for a retry, and the lane did)
  const bad = sent.filter((s) => s.status !== undefined && s.status >= 500 && s.code !== 'busy'
    && !(s.status === 503 && (s.code === 'shutting_down' || s.code === 'service_unavailable')));
  t.deepEqual(bad.map((s) => `${s.step}: ${s.status} ${s.code}`), [], `round ${round}: a 5xx other than 503`);
  const afterResets = after.filter((s) => s.error && RESET.test(s.error)).length;
  const refused = after.filter((s) => s.error && !RESET.test(s.error)).length;
  const answered = after.filter((s) => s.status !== undefined).length;
  return `round ${round}: ${before.length} sent before the signal, all answered; after it ${answered} answered, `
    + `${refused} refused at the connection, ${afterResets} reset`;
}

async function auditClean(t: ExecutionContext, dataDir: string, machine: string, receipts: number): Promise<void> {
  const audit = await runBin(BIN.svcd, ['audit', '--json'], { SVC_DATA_DIR: dataDir });
  t.is(audit.code, 0, audit.stdout + audit.stderr);
  const report = JSON.parse(audit.stdout);
  t.true(report.clean, report.discrepancies.join('\n'));
  const m = report.machines.find((x: { machine_id: string }) => x.machine_id === machine);
  const sum = BigInt(m.available_units) + BigInt(m.reserved_units) + BigInt(m.spent_units);
  t.is(sum, BigInt(m.credited_units), 'credited = available + reserved + spent');
  t.true(report.totals.receipts >= receipts, `every acknowledged execution has its receipt (${receipts})`);
}

/** A moment the load does not choose: after `minFlows` flows and a random 0–200 ms more. */
async function pickMoment(flows: () => number, minFlows: number): Promise<void> {
  await until(`${minFlows} flows done`, () => flows() >= minFlows, { ms: 60_000 });
  await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 200)));
}

test('SIGTERM during 32 concurrent paid flows (fetch, keep-alive), svcd start with two gateway workers, '
  + `${ROUNDS} rounds: no request sent before the signal is reset; audit clean`, async (t) => {
  t.timeout(600_000);
  const s = await startSvcd(t, {
    SVC_GATEWAY_PROCESSES: '2', SVC_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0', SVC_LOG_LEVEL: 'info',
  });
  const machine = 'drain-workers';
  const token = await fundMachine(s, machine, 100);
  let receipts = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    if (round > 1) await s.start();
    let exited = false;
    // 'close', not 'exit': the process's last lines are read by then
    const exit = new Promise<number | null>((r) => s.proc!.once('close', (code) => { exited = true; r(code); }));
    const l = load(s.ready.http!, machine, token, () => exited);
    await pickMoment(l.flows, 20);
    const signalAt = performance.now();
    s.proc!.kill('SIGTERM');
    t.is(await exit, 0, s.stderr);
    await l.done;
    receipts += l.flows();
    t.log(judge(t, l.sent, signalAt, round));
    // the line that ends the process says what the drain did
    const last = s.stdout.trim().split('\n').pop()!;
    t.regex(last, /"msg":"svcd stopped"/);
    const report = JSON.parse(last);
    t.is(report.http.cut, 0, 'no HTTP connection cut at the deadline');
    t.is(report.svc1.cut, 0, 'no svc/1 connection cut at the deadline');
    t.true(report.http.served > 0, last);
  }
  await auditClean(t, s.dataDir, machine, receipts);
});

testNeeding(test, 'SIGTERM of a cluster node during 32 concurrent paid flows through a gateway, '
  + `${ROUNDS} rounds: every request answered (the other node serves), audit clean`, POSTGRES, async (t) => {
  t.timeout(600_000);
  const url = await (await postgres()).freshDatabase();
  const cluster = await Cluster.start(url, { gateways: 1, gatewayEnv: { SVC_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0' } });
  t.teardown(() => cluster.stop());
  const machine = 'drain-cluster';
  const token = await fundMachine(cluster.nodes[0]!, machine, 100);
  const base = cluster.urls[0]!;
  let receipts = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const victim = cluster.nodes[round % 2]!;
    let stop = false;
    const l = load(base, machine, token, () => stop);
    await pickMoment(l.flows, 20);
    const signalAt = performance.now();
    const exit = new Promise<number | null>((r) => victim.proc!.once('exit', (code) => r(code)));
    victim.proc!.kill('SIGTERM');
    t.is(await exit, 0, victim.stderr);
    const at = l.flows();
    await until('flows go on on the other node', () => l.flows() >= at + 20, { ms: 60_000 });
    stop = true;
    await l.done;
    receipts += l.flows();
    t.log(judge(t, l.sent, signalAt, round));
    const unserved = l.sent.filter((s) => s.status !== 200 && s.code !== 'busy');
    t.deepEqual(unserved.map((s) => `${s.step}: ${s.status ?? s.error} ${s.code ?? ''}`), [],
      `round ${round}: the gateway sent what the leaving node did not run to the other node`);
    await victim.start();
  }
  const { report } = await auditCluster(url);
  t.true(report.clean, report.discrepancies.join('\n'));
  t.true(report.totals.receipts >= receipts);
});
