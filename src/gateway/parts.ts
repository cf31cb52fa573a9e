// What every group of gateway routes is given (app.ts builds it once): the core, the per-address
// limiter with the one way to count a request against it, the gateway's public URL and its logger.
import type { RouterContext } from '@koa/router';
import type { Logger } from 'pino';
import { RateLimiter, addressWindowKey } from '../protocol/rate-limit.ts';
import type { RateClass } from '../protocol/registry.ts';
import type { CoreCall, CoreCaller } from './core-call.ts';

export interface State { requestId: string; client: string }
export type Ctx = RouterContext<State>;

export interface GatewayParts {
  core: CoreCaller;
  /** a free call: no token, on behalf of the HTTP client's address */
  free: CoreCall;
  limiter: RateLimiter;
  /**
   * Counts one request against the client's address (unauthenticated traffic is keyed on where it comes
   * from, never on an identity it merely names) and sets the RateLimit headers.
   */
  limit(ctx: Ctx, klass: RateClass): void;
  /** the public base URL: SVC_BASE_URL, or the address the gateway is bound to */
  baseUrl(): string;
  log: Logger;
}

export function gatewayParts(core: CoreCaller, limiter: RateLimiter, baseUrl: () => string, log: Logger): GatewayParts {
  return {
    core, limiter, baseUrl, log,
    free: (cmd, args, client) => core.call(cmd, args, undefined, client ?? undefined),
    limit: (ctx, klass) => {
      const d = limiter.check(klass, addressWindowKey(ctx.state.client), 'per address');
      ctx.set(d.headers);
    },
  };
}
