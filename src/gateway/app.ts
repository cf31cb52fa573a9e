// The HTTP/JSON gateway (SPEC "Endpoints", DESIGN.md §9): one front middleware (front.ts) and the
// routes, each group in its own module and every path from the registry or the public route table:
// registry commands (command-routes.ts), the gateway's own API routes and /readyz (api-routes.ts), the
// sandbox (sandbox-routes.ts), MCP (mcp-routes.ts), discovery documents and pages
// (discovery-routes.ts) and the embedders' routes (embed-routes.ts). Every call goes to the core through
// one CoreCaller (in process, or svc/1 when the gateway runs apart). Holds no money state.
import type { RequestListener } from 'node:http';
import type { Socket } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import type { Logger } from 'pino';
import { RateLimiter, type RateRules } from '../protocol/rate-limit.ts';
import { mountApiRoutes } from './api-routes.ts';
import { clientAddressResolver } from './client-address.ts';
import { mountCommandRoutes } from './command-routes.ts';
import type { CoreCaller } from './core-call.ts';
import { discoveryRoutes } from './discovery-routes.ts';
import { DrainState } from './drain-state.ts';
import { mountEmbedRoutes } from './embed-routes.ts';
import { withFastQuote } from './fast-quote.ts';
import { front } from './front.ts';
import { mountMcpRoutes } from './mcp-routes.ts';
import { discoveryFacts } from './discovery-facts.ts';
import { gatewayParts, type State } from './parts.ts';
import { mountSandboxRoutes } from './sandbox-routes.ts';

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

export interface Gateway {
  app: Koa<State>;
  /** the HTTP server's request listener: the plain free quote answered ahead of Koa (fast-quote.ts), the rest Koa's */
  callback(): RequestListener;
  close(): void;
  setBoundUrl(url: string): void;
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
}

export function createGateway(opts: GatewayOptions): Gateway {
  let boundUrl = 'http://127.0.0.1';
  const baseUrl = () => opts.baseUrl ?? boundUrl;
  const app = new Koa<State>();
  // paths match as the contract spells them: /API/V1/... is another path (a proxy's rules keyed on the
  // path would see it as one), not an alias
  const router = new Router<State>({ sensitive: true });
  const limiter = new RateLimiter(opts.rates);
  const parts = gatewayParts(opts.core, limiter, baseUrl, opts.log);
  const drain = new DrainState();
  const resolveClient = clientAddressResolver({ hops: opts.trustProxyHops ?? 0, proxies: opts.trustedProxies ?? [] });
  app.use(front({ resolveClient, drain, log: opts.log }));

  mountApiRoutes(router, parts, drain);
  mountCommandRoutes(router, parts);
  mountSandboxRoutes(router, parts);
  const discovery = { baseUrl, edgePort: opts.edgePort ?? 9443, baseConfigured: opts.baseUrl !== undefined };
  // one cache of the node facts for the documents and the MCP resources
  const facts = discoveryFacts(parts.free, discovery);
  const closeMcp = mountMcpRoutes(router, parts, facts);
  const publicLow = (ctx: Parameters<typeof parts.limit>[0]) => parts.limit(ctx, 'public_low');
  discoveryRoutes(router, parts.free, discovery, publicLow, facts);
  mountEmbedRoutes(router, parts.free, publicLow);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return {
    app,
    callback: () => withFastQuote(app.callback(), { core: opts.core, limiter, resolveClient, drain, log: opts.log }),
    setBoundUrl: (u) => { boundUrl = u; },
    close: () => { closeMcp(); opts.core.close(); },
    startDraining: (late) => drain.start(late),
    drainCounts: () => drain.counts(),
    drained: (timeoutMs) => drain.drained(timeoutMs),
  };
}
