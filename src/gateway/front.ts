// The one middleware in front of the routes, not one per concern (four layers before; the CPU this
// saves per request is within the noise of `npm run bench:cpu`, docs/performance.md). In order: the
// request id and client address; draining (SIGTERM: requests in flight finish, new ones are told to
// go elsewhere, and every connection closes after its answer, so keep-alive clients reconnect to a
// node still serving); CORS (embed-routes.ts); the routes; errors, and 404/405 bodies, as the
// contract's envelope; last, svc_http_requests_total and svc_http_request_duration_seconds, labelled
// with the route template the router matched (never the raw path) once the status is known.
import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from 'pino';
import { ConnectionError } from '../client/client.ts';
import { ServiceError, isFault } from '../errors.ts';
import { UNMATCHED_ROUTE, httpDuration, httpRequests, observe, since } from '../metrics/metrics.ts';
import type { DrainState } from './drain-state.ts';
import { cors } from './embed-routes.ts';
import { CoreError, toHttpError } from './http-errors.ts';
import type { State } from './parts.ts';

/** an incoming X-Request-Id kept as the request's id; anything else gets a new one */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

type KoaCtx = Koa.ParameterizedContext<State>;

export interface FrontOptions {
  /** the client address of a request: its socket's peer, or what a trusted proxy says (client-address.ts) */
  resolveClient(peer: string | undefined, forwardedFor: string): string;
  drain: DrainState;
  log: Logger;
}

export function front(opts: FrontOptions): Koa.Middleware<State> {
  return async (ctx, next) => {
    const t0 = performance.now();
    try {
      await answer(ctx, next, opts);
    } finally {
      const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute ?? UNMATCHED_ROUTE;
      httpRequests.at(route as string, ctx.method, ctx.status).v++;
      observe(httpDuration.at(route as string, ctx.method), since(t0));
    }
  };
}

/** The request's id: the caller's X-Request-Id when it is one, else a new one. */
export const requestIdOf = (incoming: string | undefined): string =>
  (incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : randomUUID());

/** An error answered to a caller, logged as the gateway logs them: faults and a core out of reach, nothing else. */
export function logAnswered(log: Logger, e: unknown, requestId: string): void {
  // the core logs its own faults; a catalogue answer (busy, rate_limited, ...) is not a fault
  if (e instanceof ConnectionError) log.warn({ err: e, request_id: requestId }, 'core unreachable');
  else if (!(e instanceof CoreError) && isFault(e)) log.error({ err: e, request_id: requestId }, 'request failed');
}

/** What a late connection's request is answered while the gateway drains. */
export const shuttingDown = () => new ServiceError('shutting_down', 'this gateway is shutting down and did not run '
  + 'the request; send it again (another node, or later)');

async function answer(ctx: KoaCtx, next: Koa.Next, { resolveClient, drain, log }: FrontOptions): Promise<void> {
  ctx.state.requestId = requestIdOf(ctx.get('x-request-id'));
  ctx.state.client = resolveClient(ctx.req.socket.remoteAddress, ctx.get('x-forwarded-for'));
  ctx.set('x-request-id', ctx.state.requestId);
  try {
    await throughDrain(ctx, next, drain);
    refuseUnrouted(ctx);
  } catch (e) {
    answerError(ctx, e, log);
  }
}

/**
 * The request counted by the drain until its response is written out (refused if it came on a connection
 * the drain already let go), a CORS preflight answered, anything else passed on to `next`.
 */
export async function throughDrain(ctx: KoaCtx, next: Koa.Next, drain: DrainState): Promise<void> {
  if (drain.isLate(ctx.req.socket)) {
    ctx.set('Connection', 'close');
    drain.refused();
    throw shuttingDown();
  }
  // in flight until its response is written out (Koa writes it after the middleware returns)
  ctx.res.on('close', drain.begin());
  try {
    if (!cors(ctx)) await next();
  } finally {
    if (drain.draining) ctx.set('Connection', 'close');
  }
}

/** An error as the caller gets it: the contract's ApiError, its status and headers; logged as logAnswered does. */
export function answerError(ctx: KoaCtx, e: unknown, log: Logger): void {
  const { status, body, headers } = toHttpError(e, ctx.state.requestId, ctx.get('authorization'));
  logAnswered(log, e, ctx.state.requestId);
  ctx.set(headers);
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = body;
}

/** What no route answered becomes the contract's 404 or 405 (the router leaves a bare status). */
export function refuseUnrouted(ctx: KoaCtx): void {
  if (ctx.status === 404 && ctx.body === undefined) {
    throw new ServiceError('not_found', `no route ${ctx.method} ${ctx.path}`);
  }
  if (ctx.status === 405) {
    const allow = ctx.response.get('Allow');
    throw new ServiceError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path} (Allow: ${allow})`);
  }
  if (ctx.status === 501) throw new ServiceError('method_not_allowed', `${ctx.method} is not supported`);
}
