// The free quote served by the HTTP server itself, ahead of Koa (docs/decisions.md "The free quote's own path"):
// the hottest request there is, answered in a gateway worker without the core, costs what Koa's context, the
// router's walk over every route, its header setters and response writer cost more than the quote itself. Only the
// plain form comes here — POST to a quote path as the registry spells it, no query, no Authorization, no
// Idempotency-Key; anything else (a preflight, a key, a bad path) is Koa's. It does what the front middleware and
// the QUOTE route do, with their own pieces and in their order: the request id and client address, the drain, the
// CORS headers, the address's window, the body, the registry's schema, the quote, the envelope, the metrics.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { httpDuration, httpRequests, observe, since } from '../metrics/metrics.ts';
import { addressWindowKey, type RateLimiter } from '../protocol/rate-limit.ts';
import { commandSpec } from '../protocol/registry.ts';
import { SERVICE_NAMES } from '../protocol/services.ts';
import { validateArgs } from '../protocol/validate.ts';
import { readJsonBody } from './body.ts';
import type { CoreCaller } from './core-call.ts';
import type { DrainState } from './drain-state.ts';
import { CORS_HEADERS } from './embed-routes.ts';
import { logAnswered, requestIdOf, shuttingDown } from './front.ts';
import { toHttpError } from './http-errors.ts';
import { JSON_TYPE, envelopeText, toRouterPath } from './routing.ts';

const SPEC = commandSpec('QUOTE')!;
/** the route's template, as the router labels its metrics */
const ROUTE = toRouterPath(SPEC.http!.path);
/** the quote paths, each with its service: /api/v1/quotes/get-pulse → get-pulse */
const PATHS: ReadonlyMap<string, string> =
  new Map(SERVICE_NAMES.map((s) => [SPEC.http!.path.replace('{service}', s), s]));
const CORS = CORS_HEADERS.flat();

export interface FastQuoteOptions {
  core: CoreCaller;
  limiter: RateLimiter;
  resolveClient(peer: string | undefined, forwardedFor: string): string;
  drain: DrainState;
  log: Logger;
}

/** `koa` with the plain free quote answered ahead of it. */
export function withFastQuote(koa: RequestListener, o: FastQuoteOptions): RequestListener {
  return (req, res) => {
    const service = req.method === 'POST' ? PATHS.get(req.url!) : undefined;
    const h = req.headers;
    if (service === undefined || h['idempotency-key'] !== undefined || h.authorization !== undefined) {
      return koa(req, res);
    }
    serve(req, res, service, o).catch((e: unknown) => {
      // nothing above throws past its own catch; should the answer itself fail, the connection is not left open
      o.log.error({ err: e }, 'free quote answer failed');
      res.destroy();
    });
  };
}

async function serve(req: IncomingMessage, res: ServerResponse, service: string, o: FastQuoteOptions): Promise<void> {
  const t0 = performance.now();
  const requestId = requestIdOf(req.headers['x-request-id'] as string | undefined);
  const headers: string[] = ['x-request-id', requestId];
  let status = 200, late = false;
  let body: string;
  try {
    const client = o.resolveClient(req.socket.remoteAddress, (req.headers['x-forwarded-for'] as string) ?? '');
    if (o.drain.isLate(req.socket)) {
      late = true;
      o.drain.refused();
      throw shuttingDown();
    }
    // on, not once: the end function is one for all requests, and a response closes once (no wrapper per request)
    res.on('close', o.drain.begin());
    headers.push(...CORS);
    const d = o.limiter.check(SPEC.rateClass, addressWindowKey(client), 'per address');
    for (const k in d.headers) headers.push(k, d.headers[k]!);
    const args = await readJsonBody(req, client);
    args.service = service;
    validateArgs(SPEC, args);
    const result = await o.core.call(SPEC.name, args, undefined, client, true);
    if (result.idempotent_replayed) headers.push('Idempotent-Replayed', 'true');
    body = envelopeText(requestId, 'svc', result);
  } catch (e) {
    const mapped = toHttpError(e, requestId);
    logAnswered(o.log, e, requestId);
    status = mapped.status;
    for (const k in mapped.headers) headers.push(k, mapped.headers[k]!);
    body = JSON.stringify(mapped.body);
  }
  if (late || o.drain.draining) headers.push('Connection', 'close');
  headers.push('Content-Type', JSON_TYPE, 'Content-Length', String(Buffer.byteLength(body)));
  // a body refused half-read set Connection: close on the response already (body.ts): writeHead keeps it
  res.writeHead(status, headers);
  res.end(body);
  httpRequests.at(ROUTE, 'POST', status).v++;
  observe(httpDuration.at(ROUTE, 'POST'), since(t0));
}
