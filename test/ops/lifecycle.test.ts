// Graceful lifecycle: SIGTERM during paid load, in one process and with gateway worker processes. A
// request in flight at SIGTERM (held open by Expect: 100-continue until the drain has begun) completes
// 200; once readiness is false, new connections are served, refused at the connection or answered 503
// (shutting_down, or service_unavailable for readiness), never reset and never another 5xx; svcd exits
// 0 and the ledger audits clean, no unit lost.
// And GET /readyz itself: 200 while serving, 503 ApiError once draining or while the core is down.
import test, { type ExecutionContext } from 'ava';
import { createServer, request } from 'node:http';
import { pino } from 'pino';
import { createGateway } from '../../src/gateway/app.ts';
import { svc1Caller } from '../../src/gateway/core-nodes.ts';
import { DEFAULT_RATES } from '../../src/protocol/rate-limit.ts';
import { BIN, fundMachine, runBin, type Svcd } from '../support/svcd.ts';
import { startSvcd } from '../support/start-svcd.ts';
import { QUOTE } from './flows.ts';

interface Reply { status: number; body: any }
/** What a request met: an answer, or a connection error (its code). */
type Met = (Reply | { error: string }) & { after?: boolean };

/** One request on a connection of its own (no keep-alive: no idle-connection race to blame). */
function send(base: string, method: string, path: string, body?: unknown, token?: string): Promise<Met> {
  return held(base, method, path, body, token).send();
}

/**
 * A request whose headers go out now and whose body only when `send()` is called; `continued`
 * resolves once svcd's HTTP handler has it (the 100 Continue is written as the handler is called).
 */
function held(base: string, method: string, path: string, body?: unknown, token?: string) {
  const u = new URL(path, base);
  const payload = body === undefined ? '' : JSON.stringify(body);
  let met!: (m: Met) => void;
  const answer = new Promise<Met>((r) => { met = r; });
  const req = request({
    host: u.hostname, port: u.port, path: u.pathname, method, agent: false,
    headers: {
      connection: 'close', 'content-length': String(Buffer.byteLength(payload)),
      ...(payload ? { 'content-type': 'application/json', expect: '100-continue' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
  }, (res) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let parsed: unknown = text;
      try { parsed = JSON.parse(text); } catch { /* keep the text */ }
      met({ status: res.statusCode ?? 0, body: parsed });
    });
  });
  req.on('error', (e: NodeJS.ErrnoException) => met({ error: e.code ?? e.message }));
  const continued = new Promise<void>((r) => req.once('continue', () => r()));
  if (payload) req.flushHeaders();
  return { continued, send: () => { req.end(payload); return answer; } };
}

const isReply = (m: Met): m is Reply => 'status' in m;
const describe = (m: Met) => (isReply(m) ? `${m.status} ${m.body?.error?.code ?? ''}` : m.error);

/** One paid flow over HTTP; stops at the first step that is not 200 and reports every step. */
async function httpFlow(base: string, machine: string, token: string, signalled: () => boolean): Promise<Met[]> {
  // each step notes whether it was sent after the signal
  const step = async (m: Promise<Met>, after: boolean) => ({ ...(await m), after });
  const q = await step(send(base, 'POST', `/api/v1/quotes/${QUOTE.service}`, { ...QUOTE, machine_id: machine }),
    signalled());
  if (!isReply(q) || q.status !== 200) return [q];
  const a = await step(send(base, 'POST', `/api/v1/quotes/${q.body.quote_id}/accept`, { machine_id: machine }, token),
    signalled());
  if (!isReply(a) || a.status !== 200) return [q, a];
  const args = { quote_id: q.body.quote_id, machine_id: machine, plain_hex: '00' };
  return [q, a, await step(send(base, 'POST', '/api/v1/executions/attest-event', args, token), signalled())];
}

async function sigtermDuringLoad(t: ExecutionContext, env: Record<string, string>): Promise<void> {
  const s = await startSvcd(t, env);
  const base = s.ready.http!;
  const machine = 'drain';
  const token = await fundMachine(s, machine, 10);
  const ready = await send(base, 'GET', '/readyz');
  t.deepEqual(isReply(ready) && [ready.status, ready.body.status], [200, 'ready']);

  // the request that must survive: quoted and accepted, its execution's body not yet sent
  const q = await send(base, 'POST', `/api/v1/quotes/${QUOTE.service}`, { ...QUOTE, machine_id: machine });
  const quoteId = (q as Reply).body.quote_id as string;
  await send(base, 'POST', `/api/v1/quotes/${quoteId}/accept`, { machine_id: machine }, token);
  const survivor = held(base, 'POST', '/api/v1/executions/attest-event',
    { quote_id: quoteId, machine_id: machine, plain_hex: '00' }, token);
  await survivor.continued;

  // load: lanes of paid flows until their connections are refused or answered 503
  const met: Met[] = [];
  let flows = 0;
  let signalled = false;
  const lane = async () => {
    for (;;) {
      const steps = await httpFlow(base, machine, token, () => signalled);
      met.push(...steps);
      const last = steps[steps.length - 1]!;
      if (!isReply(last) || last.status !== 200) return;
      flows++;
    }
  };
  const lanes = Promise.all([lane(), lane(), lane()]);
  while (flows < 4) await new Promise((r) => setTimeout(r, 20));

  const exited = new Promise<number | null>((r) => s.proc!.once('exit', (code) => r(code)));
  signalled = true;
  s.proc!.kill('SIGTERM');
  // readiness: 200 until it turns false (503, or no connection at all), never anything else
  const probes: Met[] = [];
  for (;;) {
    const p = await send(base, 'GET', '/readyz');
    probes.push(p);
    if (!isReply(p) || p.status !== 200) break;
  }
  const last = probes[probes.length - 1]!;
  const notReady = ['service_unavailable', 'shutting_down'];
  t.true(!isReply(last) || (last.status === 503 && notReady.includes(last.body.error?.code)),
    `readiness went false as 503 or a refused connection: ${describe(last)}`);

  // the request in flight at SIGTERM completes, charged and with its receipt
  const done = await survivor.send();
  t.true(isReply(done) && done.status === 200, `in flight at SIGTERM: ${describe(done)}`);
  const receipt = isReply(done) ? done.body.receipt_id as string : '';
  t.regex(receipt, /^rcpt_/);
  await lanes;
  t.is(await exited, 0, s.stderr);

  // no answer under load was a 5xx other than 503 shutting_down; refusals are at the connection, never a reset
  const bad = met.filter((m) => isReply(m) && m.status >= 500 && m.body?.error?.code !== 'shutting_down');
  t.deepEqual(bad.map(describe), [], 'no 500/502 answered');
  // a request sent before the signal is answered; one sent after it may meet a connection refused, or
  // reset when the kernel queued it in the instant the listening socket closed (it was never read)
  const lost = met.filter((m) => !isReply(m) && !m.after).map(describe);
  t.deepEqual(lost, [], 'no request sent before the signal met a connection error');
  const errors = [...new Set(met.filter((m) => !isReply(m)).map(describe))];
  t.true(errors.every((e) => e === 'ECONNREFUSED' || e === 'ECONNRESET'), errors.join(', '));
  const after = [...new Set(met.slice(-6).map(describe))];
  t.log(`${flows} flows; readiness probed ${probes.length}×; the last answers: ${after.join(', ')}`);

  // no unit lost: the ledger audits clean offline, and the survivor's receipt is in it
  const audit = await runBin(BIN.svcd, ['audit', '--json'], { SVC_DATA_DIR: s.dataDir });
  t.is(audit.code, 0, audit.stdout + audit.stderr);
  const report = JSON.parse(audit.stdout);
  t.true(report.clean, report.discrepancies.join('\n'));
  const m = report.machines.find((x: { machine_id: string }) => x.machine_id === machine);
  const sum = BigInt(m.available_units) + BigInt(m.reserved_units) + BigInt(m.spent_units);
  t.is(sum, BigInt(m.credited_units), 'credited = available + reserved + spent');
  t.true(report.totals.receipts >= flows + 1, 'every acknowledged execution has its receipt');
  await checkReceipt(t, s, receipt, machine);
}

/** The survivor's receipt, on the restarted node. */
async function checkReceipt(t: ExecutionContext, s: Svcd, receipt: string, machine: string): Promise<void> {
  await s.start();
  const c = await s.edge();
  try {
    const v = await c.request('VERIFY_RECEIPT', { receipt_id: receipt, machine_id: machine });
    t.true(v.valid === true);
  } finally { c.close(); }
}

test('SIGTERM during paid load, one process: in-flight completes 2xx, then refused or 503, ledger clean', async (t) => {
  await sigtermDuringLoad(t, { SVC_GATEWAY_PROCESSES: '0' });
});

test('SIGTERM during paid load, two gateway workers: the same, each worker draining', async (t) => {
  await sigtermDuringLoad(t, { SVC_GATEWAY_PROCESSES: '2' });
});

test('two workers, one still draining: each new connection meanwhile is answered or refused at once', async (t) => {
  // the worker without work in flight closes its share of the port and exits at once; a connection the
  // primary was handing it just then must reach the other worker (503) or be refused, not hang
  const s = await startSvcd(t, { SVC_GATEWAY_PROCESSES: '2' });
  const base = s.ready.http!;
  const machine = 'hold';
  const token = await fundMachine(s, machine, 2);
  const q = await send(base, 'POST', `/api/v1/quotes/${QUOTE.service}`, { ...QUOTE, machine_id: machine });
  const quoteId = (q as Reply).body.quote_id as string;
  await send(base, 'POST', `/api/v1/quotes/${quoteId}/accept`, { machine_id: machine }, token);
  const survivor = held(base, 'POST', '/api/v1/executions/attest-event',
    { quote_id: quoteId, machine_id: machine, plain_hex: '00' }, token);
  await survivor.continued;

  const exited = new Promise<number | null>((r) => s.proc!.once('exit', (code) => r(code)));
  s.proc!.kill('SIGTERM');
  // new connections while the survivor's worker drains: each one met within 3 s (the survivor is held 5 s)
  const hung: string[] = [];
  const met: Met[] = [];
  const until = Date.now() + 5000;
  const lane = async () => {
    while (Date.now() < until) {
      const t0 = Date.now();
      const m = await Promise.race([send(base, 'GET', '/readyz'),
        new Promise<null>((r) => setTimeout(() => r(null), 3000))]);
      if (m === null) hung.push(`a connection opened ${t0 - until + 5000} ms after SIGTERM met nothing in 3 s`);
      else met.push(m);
    }
  };
  await Promise.all([lane(), lane(), lane(), lane()]);
  t.deepEqual(hung, []);
  t.true(met.length > 20, `${met.length} connections`);
  const seen = [...new Set(met.map(describe))];
  // all sent after the signal: answered, or refused at the connection (reset if the kernel queued it
  // in the instant the port closed; never read)
  const answers = /^(503 service_unavailable|503 shutting_down|200 |ECONNREFUSED|ECONNRESET)$/;
  t.true(seen.every((d) => answers.test(d)), seen.join(', '));
  const done = await survivor.send();
  t.true(isReply(done) && done.status === 200, `in flight at SIGTERM: ${describe(done)}`);
  t.is(await exited, 0, s.stderr);
  t.log(`${met.length} connections during the drain: ${seen.join(', ')}`);
});

test('GET /readyz: 200 while serving, 503 ApiError once draining and while the core is down', async (t) => {
  const s = await startSvcd(t);
  const gw = createGateway({
    core: svc1Caller({ kind: 'tcp', host: '127.0.0.1', port: s.backendPort }), rates: DEFAULT_RATES,
    log: pino({ level: 'silent' }),
  });
  const server = createServer(gw.app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => { server.close(); gw.close(); });
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const up = await send(base, 'GET', '/readyz');
  t.deepEqual(up, { status: 200, body: { ok: true, status: 'ready' } });

  // draining: readiness is false; requests on connections opened before the drain are served, those
  // on connections the drain calls late (a worker's, handed over after it began) are refused unrun
  const late = new Set<unknown>();
  gw.startDraining((socket) => late.has(socket.remotePort));
  const ready = await send(base, 'GET', '/readyz');
  t.true(isReply(ready) && ready.status === 503, describe(ready));
  t.is((ready as Reply).body.error.code, 'service_unavailable');
  const served = await send(base, 'GET', '/api/v1/caps');
  t.is((served as Reply).status, 200, 'served, with Connection: close');
  const lateServer = createServer((req, res) => {
    late.add(req.socket.remotePort);
    gw.app.callback()(req, res);
  });
  await new Promise<void>((r) => lateServer.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => { lateServer.close(); });
  const lateBase = `http://127.0.0.1:${(lateServer.address() as { port: number }).port}`;
  for (const [method, path] of [['GET', '/api/v1/caps'], ['POST', '/api/v1/quotes/get-pulse']]) {
    const r = await send(lateBase, method!, path!, method === 'POST' ? { machine_id: 'm', bits: 8 } : undefined);
    t.true(isReply(r) && r.status === 503, `${path}: ${describe(r)}`);
    t.is((r as Reply).body.error.code, 'shutting_down', path);
  }
  t.deepEqual(gw.drainCounts(), { served: 2, refused: 2 }, 'readiness and caps served, two refused');
  t.true(await gw.drained(1000), 'nothing in flight');

  // a gateway whose core is gone is not ready either (once its cached answer is a second old)
  const other = createGateway({
    core: svc1Caller({ kind: 'tcp', host: '127.0.0.1', port: s.backendPort }), rates: DEFAULT_RATES,
    log: pino({ level: 'silent' }),
  });
  const server2 = createServer(other.app.callback());
  await new Promise<void>((r) => server2.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => { server2.close(); other.close(); });
  await s.stop();
  const down = await send(`http://127.0.0.1:${(server2.address() as { port: number }).port}`, 'GET', '/readyz');
  t.true(isReply(down) && down.status === 503 && down.body.error.code === 'service_unavailable', describe(down));
});
