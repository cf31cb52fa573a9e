// Two shapes every gateway route shares (the route groups, embed-routes.ts): the router's path syntax for a
// registry path, and the success envelope of a JSON answer (SPEC "Endpoints").

/** /api/v1/pulses/{index} → /api/v1/pulses/:index */
export const toRouterPath = (p: string): string => p.replace(/\{(\w+)\}/g, ':$1');

export const JSON_TYPE = 'application/json; charset=utf-8';

/** { ok: true, request_id, source, ...body } as JSON text: the answer of every command. */
export const envelopeText = (requestId: string, source: 'api' | 'svc', body: Record<string, unknown>): string =>
  JSON.stringify({ ok: true, request_id: requestId, source, ...body });

/**
 * The envelope as Koa's body, with its type set: it skips what Koa does for an object body (a media type
 * looked up by name, a header removed) on the hottest path.
 */
export function envelope(
  ctx: { body: unknown; state: { requestId: string }; set(field: string, value: string): void },
  source: 'api' | 'svc', body: Record<string, unknown>,
): void {
  ctx.set('Content-Type', JSON_TYPE);
  ctx.body = envelopeText(ctx.state.requestId, source, body);
}
