// The CPU ladder's app (`npm run bench:cpu -- --ladder`, docs/performance.md "The gateway's layers"): the
// bare anchor's free quote (anchor-parts.ts), with svcd's gateway layers added one step at a time, in the
// order a request meets them (ladder-steps.ts). Every layer is svcd's own code imported from src/; what
// front.ts and command-routes.ts do inside one function is composed here from the pieces they export, in
// their order, until the `metrics` step, where front.ts itself takes over, and the `routes` step, where
// createGateway does (svcd's router, the real QUOTE route). Only the free quote is served; no core runs
// (the quote desk answers it, as in a gateway worker). Every module is loaded at every step, so a step's
// difference is its work per request, not its code's heap.
// Usage: node --import tsx bench/service/ladder.ts <step key> <data dir>; the environment is svcd's
// (SVC_*: config.ts); prints {"url":…} once listening.
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import { pino, type Logger } from 'pino';
import { loadConfig } from '../../src/core/config.ts';
import { NodeIdentity, readQuoteKey } from '../../src/core/node-identity.ts';
import { quoteDesk } from '../../src/core/quote-desk.ts';
import { ServiceError } from '../../src/errors.ts';
import { createGateway } from '../../src/gateway/app.ts';
import { readJsonBody } from '../../src/gateway/body.ts';
import { clientAddressResolver } from '../../src/gateway/client-address.ts';
import { answeringFirst, type CoreCaller } from '../../src/gateway/core-call.ts';
import { DrainState } from '../../src/gateway/drain-state.ts';
import { answerError, front, refuseUnrouted, requestIdOf, throughDrain } from '../../src/gateway/front.ts';
import { httpLimits, listenGateway } from '../../src/gateway/http-server.ts';
import { nodeWindows, windowDesk, type PrimaryChannel } from '../../src/gateway/node-windows.ts';
import { gatewayParts, type State } from '../../src/gateway/parts.ts';
import { envelope } from '../../src/gateway/routing.ts';
import { RateLimiter, addressWindowKey, type RateRules } from '../../src/protocol/rate-limit.ts';
import { commandSpec } from '../../src/protocol/registry.ts';
import { SERVICE_NAMES } from '../../src/protocol/services.ts';
import { validateArgs } from '../../src/protocol/validate.ts';
import { newQuote, quoteBody, readJson, type Json } from './anchor-parts.ts';
import { APP_STEPS } from './ladder-steps.ts';

const key = process.argv[2] ?? '';
const dataDir = process.argv[3];
const level = APP_STEPS.findIndex((s) => s.key === key);
if (level < 0 || !dataDir) {
  console.error(`usage: ladder.ts <${APP_STEPS.map((s) => s.key).join('|')}> <data dir>`);
  process.exit(2);
}
/** whether this step has the layer `k` (every step has the layers of the steps before it) */
const at = (k: string) => level >= APP_STEPS.findIndex((s) => s.key === k);

const config = loadConfig({ ...process.env, SVC_DATA_DIR: dataDir });
const QUOTE = commandSpec('QUOTE')!;
// as main.ts: the process's logger, the gateway's child of it; before its step, one that is never enabled
const log: Logger = at('logging')
  ? pino({ level: config.logLevel, base: { svc: 'svcd' } }).child({ part: 'gateway' })
  : pino({ level: 'silent' });

/**
 * The node's per-address windows as a gateway worker takes them (node-windows.ts nodeWindows), granted by
 * the primary's side (windowDesk) over the core's limiter (Core.grantWindow), here in this process: the
 * messages go through setImmediate instead of node:cluster IPC.
 */
function windowsInProcess(rules: RateRules): (klass: typeof QUOTE.rateClass, client: string) => Promise<void> {
  const limits = new RateLimiter(rules);
  const listeners = new Set<(m: unknown) => void>();
  const desk = windowDesk({
    grant: (klass, client, share, max) => limits.grant(klass, addressWindowKey(client), share, max),
    giveBack: (klass, client, start, n) => limits.giveBack(klass, addressWindowKey(client), start, n),
  }, {
    workers: () => [1],
    send: (_worker, m) => setImmediate(() => { for (const l of listeners) l(m); }),
    recallTimeoutMs: Math.min(config.coreReplyTimeoutMs || 10_000, 1000),
  });
  const channel: PrimaryChannel = {
    send: (m) => setImmediate(() => desk.onMessage(1, m)),
    on: (_event, l) => { listeners.add(l); },
    off: (_event, l) => { listeners.delete(l); },
  };
  const windows = nodeWindows(channel, rules, config.coreReplyTimeoutMs || 10_000);
  return (klass, client) => windows.take(klass, client);
}

/** No core runs here: whatever the quote desk does not answer is refused. */
const noCore: CoreCaller = {
  call: () => Promise.reject(new ServiceError('service_unavailable', 'the CPU ladder runs no core')),
  close() { /* nothing to close */ },
};

// as a gateway worker builds it (main.ts runGatewayWorker)
NodeIdentity.loadOrCreate(dataDir);
const desk = quoteDesk({ quoteKey: readQuoteKey(dataDir), take: windowsInProcess(config.rates) });
const core = answeringFirst(desk, noCore, (e) => log.error({ err: e }, 'free quote failed'));
const resolveClient = clientAddressResolver({ hops: config.trustProxyHops, proxies: config.trustedProxies });
const drain = new DrainState();

/** front.ts's middleware up to this step, in its order (front.ts itself from the `metrics` step). */
function composedFront(): Koa.Middleware<State> {
  const inner = (ctx: Koa.ParameterizedContext<State>, next: Koa.Next) =>
    (at('drain-cors') ? throughDrain(ctx, next, drain) : next());
  return async (ctx, next) => {
    ctx.state.requestId = requestIdOf(ctx.get('x-request-id'));
    ctx.state.client = resolveClient(ctx.req.socket.remoteAddress, ctx.get('x-forwarded-for'));
    ctx.set('x-request-id', ctx.state.requestId);
    if (!at('envelope')) return inner(ctx, next);
    try {
      await inner(ctx, next);
      refuseUnrouted(ctx);
    } catch (e) {
      answerError(ctx, e, log);
    }
  };
}

/** The app up to the `metrics` step: the anchor's one route, with the layers of this step. */
function ladderApp(): Koa<State> {
  const app = new Koa<State>();
  const router = new Router<State>();
  const parts = gatewayParts(core, new RateLimiter(config.rates), () => 'http://127.0.0.1', log);
  router.post('/api/v1/quotes/:service', async (ctx) => {
    // as command-routes.ts: a caller without a token is counted against its address before the body is read
    if (at('rate-limit')) parts.limit(ctx, QUOTE.rateClass);
    const body: Json = at('body') ? await readJsonBody(ctx.req, ctx.state.client) : await readJson(ctx.req);
    if (at('validate')) {
      Object.assign(body, ctx.params);
      if (!SERVICE_NAMES.includes(body.service as never)) {
        throw new ServiceError('not_found', `no quote endpoint for ${String(body.service)}`);
      }
      const idem = ctx.get('idempotency-key');
      if (idem && body.idempotency_key === undefined) body.idempotency_key = idem;
      validateArgs(QUOTE, body);
    } else if (!quoteBody(body)) {
      ctx.status = 400; // the anchor's answer
      ctx.body = { ok: false, error: { code: 'invalid_request' } };
      return;
    }
    const quote = at('quote-desk')
      ? await core.call(QUOTE.name, body, undefined, ctx.state.client, true)
      : newQuote(body);
    if (at('envelope')) return envelope(ctx, 'svc', quote);
    ctx.body = { ok: true, request_id: at('request-id') ? ctx.state.requestId : randomUUID(), source: 'svc', ...quote };
  });
  if (at('metrics')) app.use(front({ resolveClient, drain, log }));
  else if (at('request-id')) app.use(composedFront());
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

async function listen(): Promise<Server> {
  const gw = at('routes')
    ? createGateway({
      core, rates: config.rates, log, trustProxyHops: config.trustProxyHops, trustedProxies: config.trustedProxies,
      edgePort: config.publicEdgePort ?? config.edgePort,
    })
    : null;
  const app = gw?.app ?? ladderApp();
  let server: Server;
  if (at('http-server')) {
    // svcd's limits, and its listener: the gateway's own (the free quote's path ahead of Koa)
    server = (await listenGateway(at('own-path') ? gw! : app, '127.0.0.1', 0, httpLimits(config))).server;
  } else {
    server = await new Promise<Server>((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
  }
  const a = server.address() as AddressInfo;
  gw?.setBoundUrl(`http://127.0.0.1:${a.port}`);
  return server;
}

const server = await listen();
console.log(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, step: key }));
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
