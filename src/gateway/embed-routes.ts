// HTTP for embedders (docs/embedding.md): published pulses (the registry's PULSE route), the WASM
// kernels file, and CORS for the public, unauthenticated API so pages on other origins can fetch
// what the offline verifiers need. Authenticated routes never answer CORS: a browser on another
// origin can neither read their responses nor preflight an Authorization header to them.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type Koa from 'koa';
import type Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import { ServiceError } from '../errors.ts';
import { kernelWasmPath } from '../kernels/wasm.ts';
import { PUBLIC_ROUTES, publicRoute } from '../discovery/routes.ts';
import { ALL_COMMANDS, commandSpec } from '../protocol/registry.ts';
import type { CoreCall } from './core-call.ts';

type State = { requestId: string; client: string };
type Ctx = RouterContext<State>;

/** Past pulses never change; the latest does every period. */
export const PULSE_CACHE = { past: 'public, max-age=31536000, immutable', latest: 'public, max-age=5' };
const ALLOW_HEADERS = 'content-type, idempotency-key, x-request-id';
const EXPOSE_HEADERS = 'x-request-id, etag, retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset';

interface CorsRoute { method: string; pattern: RegExp }
const pattern = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}$`);

/**
 * Where CORS applies: registry commands anyone may call without a token (auth none, access public)
 * and the public GET routes of the route table (documents, /api/v1 gateway routes, /kernels.wasm).
 * Sandbox and /mcp keep their own rules.
 */
export const CORS_ROUTES: readonly CorsRoute[] = [
  ...ALL_COMMANDS.filter((c) => c.http && c.auth === 'none' && c.access === 'public')
    .map((c) => ({ method: c.http!.method, pattern: pattern(c.http!.path) })),
  ...PUBLIC_ROUTES.filter((r) => r.method === 'GET' && r.auth === 'none' && (r.cors || r.path.startsWith('/api/v1')))
    .map((r) => ({ method: r.method, pattern: pattern(r.path) })),
];

function corsMethods(path: string): string[] {
  return [...new Set(CORS_ROUTES.filter((r) => r.pattern.test(path)).map((r) => r.method))];
}

/** Mounts the embedder routes on the router and CORS in front of it (call before app.use(router.routes())). */
export function mountEmbedRoutes(
  app: Koa<State>, router: Router<State>, core: CoreCall, limit: (ctx: Ctx) => void,
): void {
  app.use(async (ctx, next) => {
    const methods = corsMethods(ctx.path);
    if (!methods.length) return next();
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    if (ctx.method === 'OPTIONS') {
      ctx.set('Access-Control-Allow-Methods', [...methods, ...(methods.includes('GET') ? ['HEAD'] : [])].join(', '));
      ctx.set('Access-Control-Allow-Headers', ALLOW_HEADERS);
      ctx.set('Access-Control-Max-Age', '86400');
      ctx.status = 204;
      return;
    }
    return next();
  });

  const pulse = commandSpec('PULSE')!;
  router.get(pulse.http!.path.replace(/\{(\w+)\}/g, ':$1'), async (ctx) => {
    limit(ctx);
    const raw = ctx.params.index!;
    const latest = raw === 'latest';
    if (!latest && !/^(0|[1-9]\d{0,15})$/.test(raw)) {
      const msg = 'index must be a pulse index (0, 1, …) or latest';
      throw new ServiceError('invalid_request', msg, { field: 'index' });
    }
    const result = await core('PULSE', latest ? {} : { index: Number(raw) }, ctx.state.client);
    const etag = `W/"${String(result.output_hash)}"`;
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', latest ? PULSE_CACHE.latest : PULSE_CACHE.past);
    if (ctx.get('if-none-match') === etag) { ctx.status = 304; return; }
    ctx.body = { ok: true, request_id: ctx.state.requestId, source: 'svc', ...result };
  });

  const wasmRoute = publicRoute('kernelsWasm');
  let wasm: { bytes: Buffer; etag: string } | null = null;
  router.get(wasmRoute.path, (ctx) => {
    limit(ctx);
    wasm ??= (() => {
      const bytes = readFileSync(kernelWasmPath('release'));
      return { bytes, etag: `"${createHash('sha256').update(bytes).digest('hex')}"` };
    })();
    ctx.set('ETag', wasm.etag);
    ctx.set('Cache-Control', `public, max-age=${wasmRoute.maxAge ?? 3600}`);
    if (ctx.get('if-none-match') === wasm.etag) { ctx.status = 304; return; }
    ctx.type = wasmRoute.type;
    ctx.body = wasm.bytes;
  });
}
