// The HTTP/JSON gateway (SPEC "Endpoints", DESIGN.md §9): Koa routes generated from the command
// registry, each validated with the registry's schemas and passed to the core through one CoreCaller
// (in process, or svc/1 when the gateway runs apart); the sandbox; per-address rate limits checked
// before a body is read; request ids; ApiError for every failure. Holds no money state. Discovery
// documents and OpenAPI are served from src/discovery.
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import Koa from 'koa';
import Router, { type RouterContext } from '@koa/router';
import type { Logger } from 'pino';
import { ConnectionError } from '../client/client.ts';
import { ServiceError, isFault } from '../errors.ts';
import { RateLimiter, addressWindowKey, type RateRules } from '../protocol/rate-limit.ts';
import { COMMANDS, commandSpec, needsToken, type CommandSpec, type RateClass } from '../protocol/registry.ts';
import { SERVICE_NAMES } from '../protocol/services.ts';
import { validateArgs } from '../protocol/validate.ts';
import { VERSIONS } from '../protocol/versions.ts';
import { readJsonBody } from './body.ts';
import { clientAddressResolver } from './client-address.ts';
import { CoreError, toHttpError } from './http-errors.ts';
import { discoveryRoutes } from './discovery-routes.ts';
import { cors, mountEmbedRoutes } from './embed-routes.ts';
import { envelope, toRouterPath } from './routing.ts';
import { edgeStatus, type CoreCall, type CoreCaller } from './core-call.ts';
import { PUBLIC_ROUTES, publicRoute } from '../discovery/routes.ts';
import { MCP_CLIENT_HEADER, createMcpEndpoint, mcpMetadata } from './mcp.ts';
import { UNMATCHED_ROUTE, httpDuration, httpRequests, observe, since } from '../metrics/metrics.ts';

export interface GatewayOptions {
  core: CoreCaller;
  /** public base URL (SVC_BASE_URL); default: the address the gateway is bound to */
  baseUrl?: string;
  /** public svc/1 edge port published in discovery (default 9443) */
  edgePort?: number;
  rates: RateRules;
  log: Logger;
  /** proxies of ours in front (SVC_TRUST_PROXY) and which peers they are (SVC_TRUSTED_PROXIES) */
  trustProxyHops?: number;
  trustedProxies?: string[];
}

interface State { requestId: string; client: string }
type Ctx = RouterContext<State>;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** How long /readyz trusts one HEALTH answer: at most one core call a second, however often it is probed. */
const READY_CACHE_MS = 1000;

export function createGateway(opts: GatewayOptions): {
  app: Koa<State>; close(): void; setBoundUrl(url: string): void;
  /**
   * Readiness false from now on; every answer closes its connection. Requests on connections opened
   * before are served; those on connections `late` names (handed to a gateway worker after its drain
   * began) are answered 503 shutting_down.
   */
  startDraining(late: (socket: Socket) => boolean): void;
  /** Resolves once no request is in flight, or after `timeoutMs`: whether it drained. */
  drained(timeoutMs: number): Promise<boolean>;
  /** Requests answered since the drain began: served, and refused with 503. */
  drainCounts(): { served: number; refused: number };
} {
  let boundUrl = 'http://127.0.0.1';
  const app = new Koa<State>();
  // paths match as the contract spells them: /API/V1/... is another path (a proxy's rules keyed on the
  // path would see it as one), not an alias
  const router = new Router<State>({ sensitive: true });
  const limiter = new RateLimiter(opts.rates);
  const resolveClient = clientAddressResolver({
    hops: opts.trustProxyHops ?? 0,
    proxies: opts.trustedProxies ?? [],
  });
  const core = opts.core;
  const free: CoreCall = (cmd, args, client) => core.call(cmd, args, undefined, client ?? undefined);

  // Counts one request against the client's address (unauthenticated traffic is
  // keyed on where it comes from, never on an identity it merely names).
  const limit = (ctx: Ctx, klass: RateClass) => {
    const d = limiter.check(klass, addressWindowKey(ctx.state.client), 'per address');
    ctx.set(d.headers);
  };

  // One middleware in front of the routes, not one per concern (four layers before; the CPU this saves
  // per request is within the noise of `npm run bench:cpu`, docs/performance.md). In order: the
  // request id and client address; draining (SIGTERM: requests in flight finish, new ones are told to
  // go elsewhere, and every connection closes after its answer, so keep-alive clients reconnect to a
  // node still serving); CORS (embed-routes.ts); the routes; errors, and 404/405 bodies, as the
  // contract's envelope; last, svc_http_requests_total and svc_http_request_duration_seconds,
  // labelled with the route template the router matched (never the raw path) once the status is known.
  let draining = false;
  let late: (socket: Socket) => boolean = () => false;
  const drainCounts = { served: 0, refused: 0 };
  let inFlight = 0;
  let idle: (() => void) | null = null;
  // in flight until its response is written out (Koa writes it after the middleware returns)
  const settled = () => {
    inFlight--;
    if (!draining) return;
    drainCounts.served++;
    if (inFlight === 0) idle?.();
  };
  app.use(async (ctx, next) => {
    const t0 = performance.now();
    try {
      await front(ctx, next);
    } finally {
      const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute ?? UNMATCHED_ROUTE;
      httpRequests.at(route as string, ctx.method, ctx.status).v++;
      observe(httpDuration.at(route as string, ctx.method), since(t0));
    }
  });
  async function front(ctx: Koa.ParameterizedContext<State>, next: Koa.Next): Promise<void> {
    const incoming = ctx.get('x-request-id');
    ctx.state.requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.client = resolveClient(ctx.req.socket.remoteAddress, ctx.get('x-forwarded-for'));
    ctx.set('x-request-id', ctx.state.requestId);
    try {
      if (draining && late(ctx.req.socket)) {
        ctx.set('Connection', 'close');
        drainCounts.refused++;
        throw new ServiceError('shutting_down', 'this gateway is shutting down and did not run the request; '
          + 'send it again (another node, or later)');
      }
      inFlight++;
      ctx.res.once('close', settled);
      try {
        if (!cors(ctx)) await next();
      } finally {
        if (draining) ctx.set('Connection', 'close');
      }
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new ServiceError('not_found', `no route ${ctx.method} ${ctx.path}`);
      }
      if (ctx.status === 405) {
        const allow = ctx.response.get('Allow');
        throw new ServiceError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path} (Allow: ${allow})`);
      }
      if (ctx.status === 501) throw new ServiceError('method_not_allowed', `${ctx.method} is not supported`);
    } catch (e) {
      const { status, body, headers } = toHttpError(e, ctx.state.requestId, ctx.get('authorization'));
      // the core logs its own faults; a catalogue answer (busy, rate_limited, ...) is not a fault
      if (e instanceof ConnectionError) opts.log.warn({ err: e, request_id: ctx.state.requestId }, 'core unreachable');
      else if (!(e instanceof CoreError) && isFault(e)) {
        opts.log.error({ err: e, request_id: ctx.state.requestId }, 'request failed');
      }
      ctx.set(headers);
      ctx.status = status;
      ctx.type = 'application/json';
      ctx.body = body;
    }
  }

  // readiness for load balancers and orchestrators: not rate limited (probes), and at most one core
  // call a second whatever the probing rate
  let health: { at: number; ready: Promise<boolean> } | null = null;
  router.get(publicRoute('readyz').path, async (ctx) => {
    if (draining) throw new ServiceError('service_unavailable', 'this gateway is shutting down: send traffic elsewhere');
    if (!health || Date.now() - health.at > READY_CACHE_MS) {
      const ready = free('HEALTH', {}, null).then((h) => h.status === 'ok', () => false);
      health = { at: Date.now(), ready };
    }
    if (!(await health.ready)) throw new ServiceError('service_unavailable', 'the core is not serving');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { ok: true, status: 'ready' };
  });

  // registry commands with an HTTP form
  const handle = (spec: CommandSpec) => async (ctx: Ctx) => {
    const needsAuth = needsToken(spec);
    const bearer = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'))?.[1];
    // before the body is read: a caller with a token is counted per machine by the core once the token
    // checks out, and against its address only if it does not; everyone else against the address now
    if (needsAuth && bearer) limiter.assertOpen(spec.rateClass, addressWindowKey(ctx.state.client), 'per address');
    else limit(ctx, spec.rateClass);
    const args: Record<string, unknown> = spec.http!.method === 'GET'
      ? knownQuery(spec, ctx.query as Record<string, unknown>)
      : await readJsonBody(ctx.req, ctx.state.client);
    Object.assign(args, ctx.params);
    if (spec.name === 'QUOTE' && !SERVICE_NAMES.includes(args.service as never)) {
      throw new ServiceError('not_found', `no quote endpoint for ${String(args.service)}`);
    }
    const idem = ctx.get('idempotency-key');
    const takesKey = (spec.args.properties as Record<string, unknown>).idempotency_key !== undefined;
    if (idem && takesKey && args.idempotency_key === undefined) args.idempotency_key = idem;
    validateArgs(spec, args);
    const auth = bearer ? { machine_id: args.machine_id as string | undefined, token: bearer } : undefined;
    let result: Record<string, unknown>;
    try {
      result = await core.call(spec.name, args, auth, ctx.state.client, true);
    } catch (e) {
      const code = (e as { inner?: ServiceError }).inner?.code;
      if (needsAuth && bearer && code === 'unauthorized') limit(ctx, spec.rateClass);
      throw e;
    }
    if (result.idempotent_replayed) ctx.set('Idempotent-Replayed', 'true');
    envelope(ctx, 'svc', result);
  };
  for (const spec of COMMANDS) {
    if (!spec.http) continue;
    const path = toRouterPath(spec.http.path);
    if (spec.http.method === 'GET') router.get(path, handle(spec));
    else router.post(path, handle(spec));
  }

  // gateway-level API routes
  router.get('/api/v1', (ctx) => {
    limit(ctx, 'public_low');
    const commands = COMMANDS.filter((c) => c.http).map((c) => ({
      method: c.http!.method, path: c.http!.path, command: c.name, auth: c.auth, billing: c.billing,
      rate_class: c.rateClass, execution: c.execution, purpose: c.purpose,
    }));
    envelope(ctx, 'api', {
      api_version: VERSIONS.api, gateway_version: VERSIONS.gateway, protocol: VERSIONS.coreProtocol,
      routes: [...commands, ...API_ROUTES],
    });
  });
  for (const [path, cmd] of [['/api/v1/health', 'HEALTH'], ['/api/v1/payment-info', 'PAYMENT_INFO']] as const) {
    router.get(path, async (ctx) => {
      limit(ctx, 'public_low');
      envelope(ctx, 'svc', await free(cmd, {}, ctx.state.client));
    });
  }
  router.get('/api/v1/payment', async (ctx) => {
    limit(ctx, 'public_low');
    const info = await free('PAYMENT_INFO', {}, ctx.state.client);
    const rails = info.rails as { rail: string; address: string; network: string; asset: string; decimals: number }[];
    ctx.body = {
      policy: 'settlement is crypto only; svcC is an internal reference unit (1.00 USD reference), not a token',
      unit_policy: 'internal_quote_reference_not_parity_not_backed_not_redeemable_not_yield',
      automated_rails: rails.map((r) => `${r.asset}/${r.network}`), reserved_rails: [],
      wallets: Object.fromEntries(rails.map((r) => [r.rail, r.address])),
      rails,
    };
  });
  router.get('/api/v1/status', async (ctx) => {
    limit(ctx, 'public_low');
    envelope(ctx, 'api', {
      gateway: { status: 'ok', version: VERSIONS.gateway, api_version: VERSIONS.api },
      edge: await edgeStatus(free, ctx.state.client),
    });
  });

  // the sandbox: anonymous, free, limited, GET_PULSE only. Its state is the core's (SANDBOX_* calls),
  // so every gateway process in front of one core serves the same quotes and receipts.
  const sbx = (cmd: string, path?: string) => {
    const spec = commandSpec(cmd)!;
    return async (ctx: Ctx) => {
      limit(ctx, 'public_low');
      const args = await readJsonBody(ctx.req, ctx.state.client);
      if (path) args[path] = ctx.params[path];
      validateArgs(spec, args);
      envelope(ctx, 'api', await core.call(cmd, args, undefined, ctx.state.client, true));
    };
  };
  router.post('/api/v1/sandbox/quotes/get-pulse', sbx('SANDBOX_QUOTE'));
  router.post('/api/v1/sandbox/quotes/:quote_id/accept', sbx('SANDBOX_ACCEPT', 'quote_id'));
  router.post('/api/v1/sandbox/executions/get-pulse', sbx('SANDBOX_EXECUTE'));
  router.post('/api/v1/sandbox/receipts/verify', sbx('SANDBOX_VERIFY'));

  // MCP: POST is the stateless JSON-RPC endpoint; GET is 405 (no streams)
  const mcp = createMcpEndpoint(free, (e) => opts.log.warn({ err: e }, 'mcp request rejected'));
  router.get('/mcp', (ctx) => {
    ctx.set('Allow', 'POST');
    const msg = 'GET /mcp: streams are not supported (stateless server); POST JSON-RPC requests';
    throw new ServiceError('method_not_allowed', msg);
  });
  router.post('/mcp', async (ctx) => {
    limit(ctx, 'public_low');
    const body = await readJsonBody(ctx.req, ctx.state.client);
    const headers = new Headers();
    for (const [k, v] of Object.entries(ctx.req.headers)) if (typeof v === 'string') headers.set(k, v);
    headers.set('content-type', 'application/json');
    // the tools' per-address quotas (sandbox) and the core's QUOTE idempotency scope key on this;
    // a client cannot set it (overwritten here)
    headers.set(MCP_CLIENT_HEADER, ctx.state.client);
    const req = new Request(`http://gateway${ctx.path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const res = await mcp.fetch(req, { parsedBody: body });
    // a notification is 202 with no body (MCP Streamable HTTP): an empty body, not Koa's null → 204
    ctx.body = Buffer.from(await res.arrayBuffer());
    ctx.status = res.status;
    ctx.remove('Content-Type');
    res.headers.forEach((v, k) => { if (k !== 'content-length' && k !== 'transfer-encoding') ctx.set(k, v); });
  });
  for (const p of ['/.well-known/mcp', '/.well-known/mcp.json', '/.well-known/svc/mcp.json']) {
    router.get(p, (ctx) => {
      limit(ctx, 'public_low'); // CORS: embed-routes.ts, like every public document's
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = mcpMetadata((opts.baseUrl ?? boundUrl).replace(/\/+$/, ''));
    });
  }

  const discovery = { baseUrl: () => opts.baseUrl ?? boundUrl, edgePort: opts.edgePort ?? 9443 };
  discoveryRoutes(router, free, discovery, (ctx) => limit(ctx, 'public_low'));

  mountEmbedRoutes(router, free, (ctx) => limit(ctx, 'public_low'));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return {
    app,
    setBoundUrl: (u) => { boundUrl = u; },
    close: () => { void mcp.close(); core.close(); },
    startDraining: (lateConnection) => {
      draining = true;
      late = lateConnection;
    },
    drainCounts: () => ({ ...drainCounts }),
    drained: (timeoutMs) => {
      if (inFlight === 0) return Promise.resolve(true);
      return new Promise<boolean>((r) => {
        const timer = setTimeout(() => r(false), timeoutMs);
        timer.unref();
        idle = () => { clearTimeout(timer); r(true); };
      });
    },
  };
}

// the gateway's own /api/v1 routes, from the one table of routes that are not registry commands
const API_ROUTES = PUBLIC_ROUTES.filter((r) => r.path.startsWith('/api/v1') && !r.aliasOf).map((r) => ({
  method: r.method, path: r.path, auth: r.auth, billing: r.billing, rate_class: r.rateClass, execution: r.execution,
  purpose: r.purpose,
}));

// GET routes take their arguments from the query; parameters the command does not take (utm_source,
// cache busters that browsers and crawlers add) are ignored rather than refused.
function knownQuery(spec: CommandSpec, query: Record<string, unknown>): Record<string, unknown> {
  const props = spec.args.properties as Record<string, unknown>;
  return Object.fromEntries(Object.entries(query).filter(([k]) => Object.hasOwn(props, k)));
}

