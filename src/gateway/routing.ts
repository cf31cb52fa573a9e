// Two shapes every gateway route shares (app.ts, embed-routes.ts): the router's path syntax for a
// registry path, and the success envelope of a JSON answer (SPEC "Endpoints").

/** /api/v1/pulses/{index} → /api/v1/pulses/:index */
export const toRouterPath = (p: string): string => p.replace(/\{(\w+)\}/g, ':$1');

/** { ok: true, request_id, source, ...body } */
export function envelope(
  ctx: { body: unknown; state: { requestId: string } }, source: 'api' | 'svc', body: Record<string, unknown>,
): void {
  ctx.body = { ok: true, request_id: ctx.state.requestId, source, ...body };
}
