// The free quote's own path (src/gateway/fast-quote.ts) against the Koa path it stands in for: one gateway over
// one core, served twice — by its Koa app alone and by its listener with the fast path ahead — and every request
// sent to both. Status, headers and body must agree, bar what differs between any two answers (ids, times, the
// window's remaining count). And what the fast path must leave to Koa goes to Koa.
import { createServer, type RequestListener, type Server } from 'node:http';
import test, { type ExecutionContext } from 'ava';
import pino from 'pino';
import { createGateway } from '../../src/gateway/app.ts';
import { inProcessCaller } from '../../src/gateway/core-call.ts';
import { withFastQuote } from '../../src/gateway/fast-quote.ts';
import { DrainState } from '../../src/gateway/drain-state.ts';
import { listenGateway } from '../../src/gateway/http-server.ts';
import { RateLimiter } from '../../src/protocol/rate-limit.ts';
import { openCore } from '../support/core-fixture.ts';
import { httpFrom, type HttpReply } from '../support/http-from.ts';

const LIMITS = {
  headersTimeoutMs: 5000, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 1000, maxConnections: 64,
  maxConnectionsPerAddress: 0, connectionQueueMs: 0, bodyBudgetBytes: 1 << 24, bodyBudgetPerAddressBytes: 1 << 21,
};

async function twoWays(t: ExecutionContext): Promise<{ koa: string; fast: string; drain(): void }> {
  const core = await openCore(t, { SVC_RATE_PUBLIC_LOW: '12/60', SVC_LOG_LEVEL: 'silent' });
  const caller = inProcessCaller(
    (cmd, args, auth, client, validated) => core.handle(cmd, args, auth, 'backend', client, validated),
    () => undefined,
  );
  const gw = createGateway({ core: caller, rates: core.ctx.config.rates, log: pino({ level: 'silent' }) });
  const koa = await listenGateway({ callback: () => gw.app.callback() }, '127.0.0.1', 0, LIMITS);
  const fast = await listenGateway(gw, '127.0.0.1', 0, LIMITS);
  t.teardown(async () => {
    for (const s of [koa.server, fast.server]) {
      await new Promise<void>((r) => { s.close(() => r()); s.closeAllConnections(); });
    }
  });
  const url = (s: Server) => `http://127.0.0.1:${(s.address() as { port: number }).port}`;
  return { koa: url(koa.server), fast: url(fast.server), drain: () => gw.startDraining(() => true) };
}

/** What two answers to the same request may differ in: fresh ids, times, the window's count, the date. */
const VARYING_HEADERS = new Set(['date', 'x-request-id', 'ratelimit', 'content-length']);
const VARYING_FIELDS = new Set(['request_id', 'quote_id', 'created_at', 'expires_at', 'expires_ms']);

function same(t: ExecutionContext, a: HttpReply, b: HttpReply, what: string): void {
  t.is(b.status, a.status, `${what}: status`);
  const headers = (r: HttpReply) => Object.fromEntries(Object.entries(r.headers)
    .filter(([k]) => !VARYING_HEADERS.has(k)).sort(([x], [y]) => (x < y ? -1 : 1)));
  t.deepEqual(headers(b), headers(a), `${what}: headers`);
  t.deepEqual(Object.keys(b.headers).sort(), Object.keys(a.headers).sort(), `${what}: header names`);
  const body = (r: HttpReply) => JSON.parse(JSON.stringify(r.body, (k, v) => (VARYING_FIELDS.has(k) ? '*' : v)));
  t.deepEqual(body(b), body(a), `${what}: body`);
}

test('the fast path answers every quote as the Koa path does: results, refusals, keys, ids, the window, the drain',
  async (t) => {
  const { koa, fast, drain } = await twoWays(t);
  const POST = (base: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    httpFrom('127.0.0.1', base, 'POST', path, body, headers);
  // a key of each server's own: the first made on both, the same again replayed on both
  const key = (server: number) => ({ machine_id: 'fq-k', idempotency_key: server ? 'k-fast' : 'k-koa' });
  const cases: [string, string, unknown, Record<string, string>?][] = [
    ['a pulse quote', '/api/v1/quotes/get-pulse', { machine_id: 'fq-m', bits: 64 }],
    ['a sized quote', '/api/v1/quotes/make-bct', { machine_id: 'fq-m', bytes: 5 }],
    ['the caller\'s request id', '/api/v1/quotes/get-pulse', { machine_id: 'fq-m' }, { 'x-request-id': 'req-1' }],
    ['a key in the body', '/api/v1/quotes/get-pulse', key],
    ['the same key again', '/api/v1/quotes/get-pulse', key],
    ['not JSON', '/api/v1/quotes/get-pulse', '{"machine_id":'],
    ['against the schema', '/api/v1/quotes/get-pulse', { machine_id: 'fq-m', bits: 'many' }],
    ['an unknown field', '/api/v1/quotes/get-pulse', { machine_id: 'fq-m', colour: 'red' }],
    ['not JSON by type', '/api/v1/quotes/get-pulse', 'machine_id=x', { 'content-type': 'text/plain' }],
    ['compressed', '/api/v1/quotes/get-pulse', '{}', { 'content-encoding': 'gzip' }],
    ['an empty body', '/api/v1/quotes/get-pulse', undefined],
  ];
  for (const [what, path, body, headers] of cases) {
    const b = (server: number) => (typeof body === 'function' ? (body as typeof key)(server) : body);
    same(t, await POST(koa, path, b(0), headers), await POST(fast, path, b(1), headers), what);
  }
  // the window: one per address and class, shared by both paths (one gateway); both refuse alike once it is spent
  let last: HttpReply;
  do last = await POST(fast, '/api/v1/quotes/get-pulse', { machine_id: 'fq-w' }); while (last.status === 200);
  t.is(last.status, 429);
  same(t, await POST(koa, '/api/v1/quotes/get-pulse', { machine_id: 'fq-w' }),
    await POST(fast, '/api/v1/quotes/get-pulse', { machine_id: 'fq-w' }), 'rate limited');
  // draining: a late connection's request is refused unrun, and the connection closes
  drain();
  const refused = await POST(fast, '/api/v1/quotes/get-pulse', { machine_id: 'fq-d' });
  t.like(refused, { status: 503, headers: { connection: 'close' }, body: { error: { code: 'shutting_down' } } });
  same(t, await POST(koa, '/api/v1/quotes/get-pulse', { machine_id: 'fq-d' }), refused, 'draining');
});

test('the fast path takes only the plain free quote; everything else is Koa\'s', async (t) => {
  const seen: string[] = [];
  const koa: RequestListener = (req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume().on('end', () => res.writeHead(299, { 'content-length': '0' }).end());
  };
  const core = { call: async () => ({ quote_id: 'q', quote_units: 1 }), close: () => undefined };
  const handler = withFastQuote(koa, {
    core, limiter: new RateLimiter({ public_low: { limit: 100, windowSec: 60 } } as never),
    resolveClient: (p) => p ?? 'unknown', drain: new DrainState(), log: pino({ level: 'silent' }),
  });
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => { server.close(() => r()); server.closeAllConnections(); }));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const body = { machine_id: 'fq-s' };
  const koaCases: [string, string, Record<string, string>?][] = [
    ['GET', '/api/v1/quotes/get-pulse'], ['OPTIONS', '/api/v1/quotes/get-pulse'],
    ['HEAD', '/api/v1/quotes/get-pulse'], ['POST', '/api/v1/quotes/get-pulse?x=1'],
    ['POST', '/api/v1/quotes/no-such-service'], ['POST', '/API/V1/quotes/get-pulse'],
    ['POST', '/api/v1/quotes/get-pulse', { authorization: 'Bearer svcm_x' }],
    ['POST', '/api/v1/quotes/get-pulse', { 'idempotency-key': 'k' }],
  ];
  for (const [method, path, headers] of koaCases) {
    const sent = method === 'POST' ? body : undefined;
    const r = await httpFrom('127.0.0.1', base, method, path, sent, headers);
    t.is(r.status, 299, `${method} ${path} ${JSON.stringify(headers ?? {})}: Koa's`);
  }
  const plain = await httpFrom('127.0.0.1', base, 'POST', '/api/v1/quotes/get-pulse', body);
  t.is(plain.status, 200, JSON.stringify(plain.body));
  t.like(plain.body, { ok: true, source: 'svc', quote_id: 'q' });
  t.is(seen.length, koaCases.length, 'the plain quote never reached Koa');
});
