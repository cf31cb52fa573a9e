// Error codes that no other test provoked, each through a public surface of a real core, checked for
// code, status and shape: the ApiError body over HTTP ({ok:false, request_id, error:{code, message,
// source}}; a core error of class 5xx reaches HTTP callers as 502, SPEC "Errors") and the svc/1 error
// frame ({id, ok:false, error:{code, message[, details]}}). (invoice_expired is provoked in
// test/core/invoices.test.ts, whose invoice expires anyway on the way to a late credit.)
//   rate_limited         HTTP and the svc/1 edge past a 2-per-window limit
//   internal             a corrupted data dir: a stored receipt whose signature is not a string
//   shutting_down        a core that is draining (what svcd does between SIGTERM and closing its
//                        listeners), composed in-process from the real Core, listeners and gateway
import test, { type ExecutionContext } from 'ava';
import { pino } from 'pino';
import { ERRORS, type ErrorCode } from '../../src/errors.ts';
import { NodeIdentity } from '../../src/core/node-identity.ts';
import { startListeners } from '../../src/edge/servers.ts';
import { createGateway } from '../../src/gateway/app.ts';
import { inProcessCaller } from '../../src/gateway/core-call.ts';
import { listenGateway } from '../../src/gateway/http-server.ts';
import { Store, put } from '../../src/store/store.ts';
import { openCore } from '../support/core-fixture.ts';
import { httpFrom, type HttpReply } from '../support/http-from.ts';
import { RawLines, frame, isErrorFrame } from '../support/raw-wire.ts';
import { startSvcd } from '../support/start-svcd.ts';
import { fundMachine } from '../support/svcd.ts';

/** The HTTP status a code reaches callers with: the catalogue's, except core 5xx errors (502). */
const httpStatus = (code: ErrorCode, source: 'api' | 'svc') =>
  (source === 'svc' && ERRORS[code].status >= 500 ? 502 : ERRORS[code].status);

function isApiError(t: ExecutionContext, r: HttpReply, code: ErrorCode, source: 'api' | 'svc') {
  t.is(r.status, httpStatus(code, source), `HTTP status of ${code}`);
  t.is(r.headers['content-type'], 'application/json; charset=utf-8');
  t.deepEqual(Object.keys(r.body).sort(), ['error', 'ok', 'request_id']);
  t.is(r.body.ok, false);
  t.is(r.body.request_id, r.headers['x-request-id']);
  t.is(r.body.error.code, code);
  t.is(r.body.error.source, source);
  t.true(typeof r.body.error.message === 'string' && r.body.error.message.length > 0);
  return r.body.error as { code: string; message: string; source: string; details?: Record<string, unknown> };
}

test('error code rate_limited: 429 ApiError with Retry-After over HTTP, error frame with details on svc/1',
  async (t) => {
  const s = await startSvcd(t, { SVC_RATE_PUBLIC_LOW: '2/60' });
  const hello = () => httpFrom('127.0.0.5', s.ready.http!, 'GET', '/api/v1/hello');
  t.is((await hello()).status, 200);
  t.is((await hello()).status, 200);
  const r = await hello();
  const e = isApiError(t, r, 'rate_limited', 'api');
  t.regex(String(r.headers['retry-after']), /^[1-9]\d*$/);
  t.regex(String(r.headers.ratelimit), /^"public_low";r=0;t=\d+$/);
  t.regex(e.message, /rate limit for public_low/);
  const edge = await RawLines.open(s.edgePort);
  t.teardown(() => edge.close());
  JSON.parse((await edge.exchange(frame(1, 'HELLO')))!);
  JSON.parse((await edge.exchange(frame(2, 'HELLO')))!);
  const f = isErrorFrame(t, await edge.exchange(frame(3, 'HELLO')), 3, 'rate_limited');
  t.is(f.details?.rate_class, 'public_low');
  t.is(typeof f.details?.retry_after_s, 'number');
});

test('error code internal: a corrupted stored receipt answers internal (HTTP 502 from the core, svc/1 ' +
  'frame), with no detail of the fault', async (t) => {
  const s = await startSvcd(t);
  await fundMachine(s, 'corrupt-m', 1);
  t.is(await s.stop(), 0);
  const { keyId, nodeId } = NodeIdentity.loadOrCreate(s.dataDir);
  const store = await Store.open(s.dataDir);
  // what a disk or a bad restore could leave behind: this node's receipt, its signature not a string
  const receipt = { machine_id: 'corrupt-m', node_id: nodeId, key_id: keyId };
  await store.write([put('receipts', 'rcpt_corrupt', { receipt })]);
  await store.close();
  await s.start(['start']);
  const args = { receipt_id: 'rcpt_corrupt', machine_id: 'corrupt-m' };
  const r = await httpFrom('127.0.0.1', s.ready.http!, 'POST', '/api/v1/receipts/verify', args);
  const e = isApiError(t, r, 'internal', 'svc');
  t.is(e.message, 'internal error; nothing was charged');
  const edge = await RawLines.open(s.edgePort);
  t.teardown(() => edge.close());
  const f = isErrorFrame(t, await edge.exchange(frame(4, 'VERIFY_RECEIPT', args)), 4, 'internal');
  t.is(f.message, 'internal error; nothing was charged');
  t.is(f.details, undefined);
  const ok = JSON.parse((await edge.exchange(frame(5, 'HELLO')))!);
  t.true(ok.ok, 'the connection and the core carry on');
});

test('error code shutting_down: a draining core refuses new work over HTTP (502 from the core) ' +
  'and svc/1', async (t) => {
  const core = await openCore(t, {
    SVC_EDGE_PORT: '0', SVC_BACKEND_PORT: '0', SVC_EDGE_HOST: '127.0.0.1', SVC_KERNEL_THREADS: '1',
    SVC_LOG_LEVEL: 'silent',
  });
  const config = core.ctx.config;
  const log = pino({ level: 'silent' });
  const listeners = await startListeners(core, log);
  const caller = inProcessCaller(
    (cmd, args, auth, client, validated) => core.handle(cmd, args, auth, 'backend', client, validated),
    () => undefined,
  );
  const gw = createGateway({ core: caller, rates: config.rates, log, edgePort: 9443 });
  const { server } = await listenGateway(gw.app, '127.0.0.1', 0, {
    headersTimeoutMs: 5000, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 1000, maxConnections: 16,
    maxConnectionsPerAddress: 0, connectionQueueMs: 0, bodyBudgetBytes: 1 << 24, bodyBudgetPerAddressBytes: 1 << 21,
  });
  t.teardown(async () => {
    await new Promise<void>((r) => { server.close(() => r()); server.closeAllConnections(); });
    gw.close();
    await listeners.close();
  });
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const edgePort = Number(listeners.addresses.edge.split(':').pop());
  const edge = await RawLines.open(edgePort);
  t.teardown(() => edge.close());
  const quote = { service: 'get-pulse', machine_id: 'drain-m', bits: 64 };
  t.is((await httpFrom('127.0.0.1', base, 'POST', '/api/v1/quotes/get-pulse', quote)).status, 200, 'serving');
  t.true(JSON.parse((await edge.exchange(frame(1, 'QUOTE', quote)))!).ok);
  await core.drain();
  const r = await httpFrom('127.0.0.1', base, 'POST', '/api/v1/quotes/get-pulse', quote);
  t.regex(isApiError(t, r, 'shutting_down', 'svc').message, /shutting down/);
  isErrorFrame(t, await edge.exchange(frame(2, 'QUOTE', quote)), 2, 'shutting_down');
});
