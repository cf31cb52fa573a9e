// HTTP for embedders (docs/embedding.md): published pulses (the registry's PULSE route), the WASM
// kernels file, and CORS for the public, unauthenticated API so pages on other origins can fetch
// what the offline verifiers need. Authenticated routes never answer CORS: a browser on another
// origin can neither read their responses nor preflight an Authorization header to them.
import { readFileSync } from 'node:fs';
import type Koa from 'koa';
import type Router from '@koa/router';
import { kernelWasmPath, kernelWasmSha256 } from '../kernels/wasm.ts';
import { PUBLIC_ROUTES, publicRoute } from '../discovery/routes.ts';
import { RATE_LIMIT_HEADERS } from '../protocol/rate-limit.ts';
import { ALL_COMMANDS, commandSpec } from '../protocol/registry.ts';
import { validateArgs } from '../protocol/validate.ts';
import type { CoreCall } from './core-call.ts';
import { envelope, toRouterPath } from './routing.ts';

import type { Ctx, State } from './parts.ts';

/** Past pulses never change; the latest does every period. */
export const PULSE_CACHE = { past: 'public, max-age=31536000, immutable', latest: 'public, max-age=5' };
const ALLOW_HEADERS = 'content-type, idempotency-key, x-request-id';
/**
 * Every response header of the public routes a script may want, beyond the ones browsers always let it read:
 * the request id, a pulse's ETag, an idempotent replay's mark and the rate-limit headers as they are sent.
 */
export const EXPOSED_HEADERS: readonly string[] = [
  'X-Request-Id', 'ETag', 'Idempotent-Replayed', ...RATE_LIMIT_HEADERS,
];
const EXPOSE_HEADERS = EXPOSED_HEADERS.join(', ');
/** What every response of a public route carries for a browser on another origin, as name-value pairs. */
export const CORS_HEADERS: readonly (readonly [string, string])[] = [
  ['Access-Control-Allow-Origin', '*'], ['Access-Control-Expose-Headers', EXPOSE_HEADERS],
];

interface CorsRoute { method: string; path: string }
// a path as the router matches it: parameters are one segment, letters in any case, a trailing slash allowed
const source = (path: string) => path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+');
const matcher = (sources: readonly string[]) => new RegExp(`^(?:${sources.join('|')})/?$`, 'i');

/**
 * Where CORS applies: registry commands anyone may call without a token (auth none, access public)
 * and the public GET routes of the route table (documents, /api/v1 gateway routes, /kernels.wasm).
 * Sandbox and /mcp keep their own rules.
 */
export const CORS_ROUTES: readonly CorsRoute[] = [
  ...ALL_COMMANDS.filter((c) => c.http && c.auth === 'none' && c.access === 'public')
    .map((c) => ({ method: c.http!.method, path: c.http!.path })),
  ...PUBLIC_ROUTES.filter((r) => r.method === 'GET' && r.auth === 'none' && (r.cors || r.path.startsWith('/api/v1')))
    .map((r) => ({ method: r.method, path: r.path })),
];
// every request passes here: one compiled test; the methods are only needed to answer a preflight
const ANY_CORS = matcher(CORS_ROUTES.map((r) => source(r.path)));
const BY_ROUTE = CORS_ROUTES.map((r) => ({ method: r.method, pattern: matcher([source(r.path)]) }));

function corsMethods(path: string): string {
  const methods = new Set(BY_ROUTE.filter((r) => r.pattern.test(path)).map((r) => r.method));
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].join(', ');
}

/**
 * CORS for a request on a public route: sets its headers, and answers a preflight (true: answered,
 * the request goes no further). The gateway's front middleware calls it before the routes.
 */
export function cors(ctx: Koa.Context): boolean {
  if (!ANY_CORS.test(ctx.path)) return false;
  for (const [k, v] of CORS_HEADERS) ctx.set(k, v);
  if (ctx.method !== 'OPTIONS') return false;
  ctx.set('Access-Control-Allow-Methods', corsMethods(ctx.path));
  ctx.set('Access-Control-Allow-Headers', ALLOW_HEADERS);
  ctx.set('Access-Control-Max-Age', '86400');
  ctx.status = 204;
  return true;
}

/** Registry commands whose HTTP route is mounted here (with its caching), not by command-routes.ts. */
export const EMBED_COMMANDS: ReadonlySet<string> = new Set(['PULSE']);

/** Mounts the embedder routes on the router (CORS in front of them: `cors`, called by the gateway). */
export function mountEmbedRoutes(router: Router<State>, core: CoreCall, limit: (ctx: Ctx) => void): void {
  const pulse = commandSpec('PULSE')!;
  router.get(toRouterPath(pulse.http!.path), async (ctx) => {
    limit(ctx);
    const raw = ctx.params.index!;
    const latest = raw === 'latest';
    // a decimal index becomes a number; the registry's schema decides the rest (0 … MAX_SAFE_INTEGER)
    const args = latest ? {} : { index: /^(0|[1-9]\d*)$/.test(raw) ? Number(raw) : raw };
    validateArgs(pulse, args);
    const result = await core('PULSE', args, ctx.state.client);
    const etag = `W/"${String(result.output_hash)}"`;
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', latest ? PULSE_CACHE.latest : PULSE_CACHE.past);
    if (ctx.get('if-none-match') === etag) { ctx.status = 304; return; }
    envelope(ctx, 'svc', result);
  });

  const wasmRoute = publicRoute('kernelsWasm');
  let bytes: Buffer | null = null;
  router.get(wasmRoute.path, (ctx) => {
    limit(ctx);
    const etag = `"${kernelWasmSha256()}"`; // the manifest's kernels.sha256 (hashed once per process)
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', `public, max-age=${wasmRoute.maxAge ?? 3600}`);
    if (ctx.get('if-none-match') === etag) { ctx.status = 304; return; }
    ctx.type = wasmRoute.type;
    ctx.body = bytes ??= readFileSync(kernelWasmPath('release'));
  });
}
