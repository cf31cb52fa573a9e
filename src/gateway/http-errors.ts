// The one mapper from errors to HTTP (SPEC "Errors"): the ApiError body {ok:false, request_id,
// error:{code, message, source}} with the catalogue's status. source is "api" for what the gateway
// raised and "svc" for what came from the core. Core-side 5xx and an unreachable core are 502.
import { ConnectionError } from '../client/client.ts';
import { ERRORS, ServiceError, exposeError } from '../errors.ts';

export interface ApiError { ok: false; request_id: string; error: { code: string; message: string; source: 'api' | 'svc'; details?: Record<string, unknown> } }

/** Errors that came back from the core over svc/1 are tagged so the mapper knows their source. */
export class CoreError extends Error {
  constructor(readonly inner: ServiceError) { super(inner.message); this.name = 'CoreError'; }
}

export function toHttpError(e: unknown, requestId: string): { status: number; body: ApiError } {
  if (e instanceof CoreError) {
    const w = exposeError(e.inner);
    const status = ERRORS[w.code].status >= 500 ? 502 : ERRORS[w.code].status;
    return { status, body: { ok: false, request_id: requestId, error: { ...w, source: 'svc' } } };
  }
  if (e instanceof ConnectionError) {
    return { status: 502, body: { ok: false, request_id: requestId, error: { code: 'edge_unavailable', message: 'the core edge is unavailable; retry later', source: 'svc' } } };
  }
  const w = exposeError(e);
  return { status: ERRORS[w.code].status, body: { ok: false, request_id: requestId, error: { ...w, source: 'api' } } };
}
