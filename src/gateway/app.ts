// The HTTP/JSON gateway (SPEC "Endpoints", DESIGN.md §9): Koa routes generated from the command
// registry, each validated with the registry's schemas and forwarded to the core over svc/1 (the
// client kit, loopback TCP); the sandbox; rate limits; request ids; ApiError for every failure.
// Holds no money state. Discovery documents and OpenAPI are served from src/discovery.
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import Router, { type RouterContext } from '@koa/router';
import type { Logger } from 'pino';
import { ConnectionError, SvcClient, type Endpoint } from '../client/client.ts';
import { ServiceError } from '../errors.ts';
import { COMMANDS, type CommandSpec, type RateClass } from '../protocol/registry.ts';
import { validateSandbox } from '../protocol/sandbox.ts';
import { SERVICE_NAMES } from '../protocol/services.ts';
import { validateArgs } from '../protocol/validate.ts';
import { VERSIONS } from '../protocol/versions.ts';
import { readJsonBody } from './body.ts';
import { CoreError, toHttpError } from './http-errors.ts';
import { RateLimiter, type RateRules } from './rate-limit.ts';
import { Sandbox } from './sandbox.ts';
import { discoveryRoutes } from './discovery-routes.ts';
import { edgeStatus } from './core-call.ts';
import { createMcpEndpoint, mcpMetadata } from './mcp.ts';

export interface GatewayOptions {
  backend: Endpoint;
  /** public base URL (SVC_BASE_URL); default: the address the gateway is bound to */
  baseUrl?: string;
  /** public svc/1 edge port published in discovery (default 9443) */
  edgePort?: number;
  rates: RateRules;
  log: Logger;
  /** pipelined svc/1 connections to the core (default 4) */
  backendConnections?: number;
  /** trust X-Forwarded-For for the client address (behind a proxy you run) */
  trustProxy?: boolean;
}

interface State { requestId: string }
type Ctx = RouterContext<State>;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const toRouterPath = (p: string) => p.replace(/\{(\w+)\}/g, ':$1');

export function createGateway(opts: GatewayOptions): { app: Koa<State>; close(): void; sandbox: Sandbox; setBoundUrl(url: string): void } {
  let boundUrl = 'http://127.0.0.1';
  const app = new Koa<State>({ proxy: opts.trustProxy === true });
  const router = new Router<State>();
  const limiter = new RateLimiter(opts.rates);
  const sandbox = new Sandbox();
  // a few pipelined connections to the core: each carries at most SVC_MAX_IN_FLIGHT requests at once
  const clients: (Promise<SvcClient> | null)[] = Array.from({ length: opts.backendConnections ?? 4 }, () => null);
  let next = 0;
  const backend = (): Promise<SvcClient> => {
    const i = next++ % clients.length;
    return clients[i] ??= SvcClient.connect(opts.backend).catch((e: unknown) => { clients[i] = null; throw e; });
  };

  const core = async (cmd: string, args: Record<string, unknown>, auth?: { machine_id?: string; token?: string }) => {
    const c = await backend();
    try {
      return await c.request(cmd, args, auth);
    } catch (e) {
      if (e instanceof ServiceError) throw new CoreError(e);
      throw e;
    }
  };

  const limit = (ctx: Ctx, klass: RateClass, key: string) => {
    const r = limiter.take(klass, key);
    ctx.set(r.headers);
    if (!r.allowed) throw new ServiceError('rate_limited', `rate limit for ${klass} reached; retry after ${r.headers['Retry-After']} s`);
  };

  const envelope = (ctx: Ctx, source: 'api' | 'svc', body: Record<string, unknown>) => {
    ctx.body = { ok: true, request_id: ctx.state.requestId, source, ...body };
  };

  // request id, errors, 404/405 bodies
  app.use(async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    ctx.state.requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.set('x-request-id', ctx.state.requestId);
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new ServiceError('not_found', `no route ${ctx.method} ${ctx.path}`);
      if (ctx.status === 405) throw new ServiceError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path} (Allow: ${ctx.response.get('Allow')})`);
      if (ctx.status === 501) throw new ServiceError('method_not_allowed', `${ctx.method} is not supported`);
    } catch (e) {
      const { status, body } = toHttpError(e, ctx.state.requestId);
      if (status >= 500 && !(e instanceof ConnectionError)) opts.log.error({ err: e, request_id: ctx.state.requestId }, 'request failed');
      ctx.status = status;
      ctx.type = 'application/json';
      ctx.body = body;
    }
  });

  // registry commands with an HTTP form
  const handle = (spec: CommandSpec) => async (ctx: Ctx) => {
    const input = spec.http!.method === 'GET' ? { ...(ctx.query as Record<string, unknown>) } : await readJsonBody(ctx.req);
    const args: Record<string, unknown> = { ...input, ...ctx.params };
    if (spec.name === 'QUOTE' && !SERVICE_NAMES.includes(args.service as never)) throw new ServiceError('not_found', `no quote endpoint for ${String(args.service)}`);
    const idem = ctx.get('idempotency-key');
    if (idem && (spec.args.properties as Record<string, unknown>).idempotency_key && args.idempotency_key === undefined) args.idempotency_key = idem;
    limit(ctx, spec.rateClass, spec.rateClass === 'paid_execution' ? `m:${String(args.machine_id)}` : `ip:${ctx.ip}`);
    validateArgs(spec, args);
    const bearer = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'))?.[1];
    const result = await core(spec.name, args, bearer ? { machine_id: args.machine_id as string | undefined, token: bearer } : undefined);
    if (result.idempotent_replayed) ctx.set('Idempotent-Replayed', 'true');
    envelope(ctx, 'svc', result);
  };
  for (const spec of COMMANDS) {
    if (!spec.http) continue;
    const path = toRouterPath(spec.http.path);
    if (spec.http.method === 'GET') router.get(path, handle(spec)); else router.post(path, handle(spec));
  }

  // gateway-level API routes
  router.get('/api/v1', (ctx) => {
    limit(ctx, 'public_low', `ip:${ctx.ip}`);
    envelope(ctx, 'api', {
      api_version: VERSIONS.api, gateway_version: VERSIONS.gateway, protocol: VERSIONS.coreProtocol,
      routes: [
        ...COMMANDS.filter((c) => c.http).map((c) => ({ method: c.http!.method, path: c.http!.path, command: c.name, auth: c.auth, billing: c.billing, rate_class: c.rateClass, execution: c.execution, purpose: c.purpose })),
        ...AUX_ROUTES, ...SANDBOX_ROUTES,
      ],
    });
  });
  for (const [path, cmd] of [['/api/v1/health', 'HEALTH'], ['/api/v1/payment-info', 'PAYMENT_INFO']] as const) {
    router.get(path, async (ctx) => {
      limit(ctx, 'public_low', `ip:${ctx.ip}`);
      envelope(ctx, 'svc', await core(cmd, {}));
    });
  }
  router.get('/api/v1/payment', async (ctx) => {
    limit(ctx, 'public_low', `ip:${ctx.ip}`);
    const info = await core('PAYMENT_INFO', {});
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
    limit(ctx, 'public_low', `ip:${ctx.ip}`);
    envelope(ctx, 'api', { gateway: { status: 'ok', version: VERSIONS.gateway, api_version: VERSIONS.api }, edge: await edgeStatus((c, a) => core(c, a)) });
  });

  // the sandbox: anonymous, free, limited, GET_PULSE only
  const sbx = (kind: 'quote' | 'accept' | 'execute' | 'verify', run: (b: Record<string, unknown>, ctx: Ctx) => Record<string, unknown>) => async (ctx: Ctx) => {
    limit(ctx, 'public_low', `ip:${ctx.ip}`);
    const body = await readJsonBody(ctx.req);
    validateSandbox(kind, body);
    envelope(ctx, 'api', run(body, ctx));
  };
  router.post('/api/v1/sandbox/quotes/get-pulse', sbx('quote', (b) => sandbox.quote(b as { machine_id: string; bits: number; max_output: number })));
  router.post('/api/v1/sandbox/quotes/:quote_id/accept', sbx('accept', (b, ctx) => sandbox.accept(ctx.params.quote_id!, b.machine_id as string)));
  router.post('/api/v1/sandbox/executions/get-pulse', sbx('execute', (b) => sandbox.execute(b.quote_id as string, b.machine_id as string)));
  router.post('/api/v1/sandbox/receipts/verify', sbx('verify', (b) => sandbox.verify(b.receipt_id as string, b.machine_id as string)));

  // MCP: POST is the stateless JSON-RPC endpoint; GET is 405 (no streams)
  const mcp = createMcpEndpoint((cmd, args) => core(cmd, args), sandbox, (e) => opts.log.warn({ err: e }, 'mcp request rejected'));
  router.get('/mcp', (ctx) => {
    ctx.set('Allow', 'POST');
    throw new ServiceError('method_not_allowed', 'GET /mcp: streams are not supported (stateless server); POST JSON-RPC requests');
  });
  router.post('/mcp', async (ctx) => {
    limit(ctx, 'public_low', `ip:${ctx.ip}`);
    const body = await readJsonBody(ctx.req);
    const headers = new Headers();
    for (const [k, v] of Object.entries(ctx.req.headers)) if (typeof v === 'string') headers.set(k, v);
    headers.set('content-type', 'application/json');
    const res = await mcp.fetch(new Request(`http://gateway${ctx.path}`, { method: 'POST', headers, body: JSON.stringify(body) }), { parsedBody: body });
    ctx.status = res.status;
    res.headers.forEach((v, k) => { if (k !== 'content-length' && k !== 'transfer-encoding') ctx.set(k, v); });
    const out = Buffer.from(await res.arrayBuffer());
    ctx.body = out.length ? out : null;
  });
  for (const p of ['/.well-known/mcp', '/.well-known/mcp.json', '/.well-known/svc/mcp.json']) {
    router.get(p, (ctx) => {
      limit(ctx, 'public_low', `ip:${ctx.ip}`);
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = mcpMetadata((opts.baseUrl ?? boundUrl).replace(/\/+$/, ''));
    });
  }

  discoveryRoutes(router, (cmd, args) => core(cmd, args), { baseUrl: () => opts.baseUrl ?? boundUrl, edgePort: opts.edgePort ?? 9443 }, (ctx) => limit(ctx, 'public_low', `ip:${ctx.ip}`));

  app.use(router.routes());
  app.use(router.allowedMethods());
  return { app, sandbox, setBoundUrl: (u) => { boundUrl = u; }, close: () => { void mcp.close(); for (const c of clients) void c?.then((x) => x.close(), () => undefined); } };
}

const AUX_ROUTES = [
  { method: 'GET', path: '/api/v1', purpose: 'route index' },
  { method: 'GET', path: '/api/v1/status', purpose: 'gateway and public edge status' },
  { method: 'GET', path: '/api/v1/health', command: 'HEALTH', purpose: 'HEALTH via the edge' },
  { method: 'GET', path: '/api/v1/payment', purpose: 'payment policy and wallets' },
  { method: 'GET', path: '/api/v1/payment-info', command: 'PAYMENT_INFO', purpose: 'PAYMENT_INFO via the edge' },
  { method: 'GET', path: '/api/v1/discovery', purpose: 'discovery summary' },
  { method: 'GET', path: '/api/v1/manifest', purpose: 'published manifest' },
  { method: 'GET', path: '/api/v1/pricebook', purpose: 'pricebook pointer' },
];
const SANDBOX_ROUTES = [
  { method: 'POST', path: '/api/v1/sandbox/quotes/get-pulse', billing: 'sandbox_free_limited', rate_class: 'public_low', execution: false, purpose: 'creates a sandbox GET_PULSE quote' },
  { method: 'POST', path: '/api/v1/sandbox/quotes/{quote_id}/accept', billing: 'sandbox_free_limited', rate_class: 'public_low', execution: false, purpose: 'accepts a sandbox quote' },
  { method: 'POST', path: '/api/v1/sandbox/executions/get-pulse', billing: 'sandbox_free_limited', rate_class: 'public_low', execution: true, purpose: 'small execution without real settlement' },
  { method: 'POST', path: '/api/v1/sandbox/receipts/verify', billing: 'sandbox_free_limited', rate_class: 'public_low', execution: false, purpose: 'verifies a sandbox receipt generated by this gateway' },
];

