// The one mapper from errors to HTTP (SPEC "Errors"): the ApiError body {ok:false, request_id,
// error:{code, message, source}} with the catalogue's status. source is "api" for what the gateway
// raised and "svc" for what came from the core. Core-side 5xx and an unreachable core are 502. It
// also returns the headers a status carries (WWW-Authenticate on 401, Retry-After and RateLimit on 429).
import { ConnectionError } from '../client/client.ts';
import { ERRORS, ServiceError, exposeError } from '../errors.ts';

export interface ApiError {
  ok: false;
  request_id: string;
  error: { code: string; message: string; source: 'api' | 'svc'; details?: Record<string, unknown> };
}

/** Errors that came back from the core over svc/1 are tagged so the mapper knows their source. */
export class CoreError extends Error {
  constructor(readonly inner: ServiceError) { super(inner.message); this.name = 'CoreError'; }
}

export interface HttpError { status: number; body: ApiError; headers: Record<string, string> }

/**
 * RFC 6750 §3: a 401 names the scheme and realm; once a bearer token was presented and refused,
 * also error="invalid_token" (without a token, no error code: the request simply lacked one).
 */
function challenge(status: number, authorization: string | undefined): Record<string, string> {
  if (status !== 401) return {};
  const presented = /^Bearer\s+\S/i.test(authorization ?? '');
  return { 'WWW-Authenticate': presented ? 'Bearer realm="svc", error="invalid_token"' : 'Bearer realm="svc"' };
}

/**
 * Retry-After (a 429, or a 503 busy that says when), and a 429's RateLimit headers, from the details the
 * limiter (gateway or core) put in the error.
 */
function rateHeaders(body: ApiError): Record<string, string> {
  const d = body.error.details;
  const code = body.error.code;
  if ((code !== 'rate_limited' && code !== 'busy') || !d) return {};
  const h: Record<string, string> = {};
  if (typeof d.retry_after_s === 'number') h['Retry-After'] = String(d.retry_after_s);
  if (typeof d.rate_limit === 'string') h.RateLimit = d.rate_limit;
  if (typeof d.rate_limit_policy === 'string') h['RateLimit-Policy'] = d.rate_limit_policy;
  return h;
}

/**
 * Maps any error to its status, ApiError body and the headers that status needs; `authorization` is
 * the request's.
 */
export function toHttpError(e: unknown, requestId: string, authorization?: string): HttpError {
  const mapped = mapError(e, requestId);
  return { ...mapped, headers: { ...challenge(mapped.status, authorization), ...rateHeaders(mapped.body) } };
}

function mapError(e: unknown, requestId: string): { status: number; body: ApiError } {
  if (e instanceof CoreError) {
    const w = exposeError(e.inner);
    const status = ERRORS[w.code].status >= 500 ? 502 : ERRORS[w.code].status;
    return { status, body: { ok: false, request_id: requestId, error: { ...w, source: 'svc' } } };
  }
  if (e instanceof ConnectionError) {
    // sent: the core node was lost with the call on its way or running; it may have taken effect
    const message = e.sent
      ? 'the core edge was lost after the call was sent: its outcome is unknown (read the state, or retry with the same'
        + ' idempotency key or quote_id)'
      : 'the core edge is unavailable; retry later';
    const error = { code: 'edge_unavailable', message, source: 'svc' } as const;
    return { status: 502, body: { ok: false, request_id: requestId, error } };
  }
  const w = exposeError(e);
  const body: ApiError = { ok: false, request_id: requestId, error: { ...w, source: 'api' } };
  return { status: ERRORS[w.code].status, body };
}
