// Serves the discovery documents and pages, registered from the route table (path, media type,
// caching; its CORS flag is applied by embed-routes.ts's middleware); only bodies are built here,
// from the registry and the node facts (discovery-facts.ts: core HELLO and PAYMENT_INFO, cached a minute). The sandbox,
// /mcp (mcp-routes.ts) and the other /api/v1 routes (api-routes.ts, command-routes.ts) are mounted apart.
// Pages carry a Content-Security-Policy: no script at all, except the API reference, which may run
// the Redoc bundle served here from the installed package (never a CDN), and the verifier, which runs
// the embedding kit bundled by verify-bundle.ts and compiles the kernels.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import type Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import { ServiceError } from '../errors.ts';
import {
  agentCard, bootstrapDocument, discoverySummary, hostMetaJson, hostMetaXml, llmsTxt, manifestBytes, manifestHash,
  manifestKv, networkDocument, nodeDocument, nodesDocument, pricebookPointer, pricebookText, robotsTxt, serviceCatalog,
  sitemapXml, statusDocument, webManifest, webfinger, wellKnownIndex,
} from '../discovery/documents.ts';
import type { SiteInfo } from '../discovery/node-info.ts';
import { buildOpenApi } from '../discovery/openapi.ts';
import {
  agentsPage, docsPage, landingPage, pricingPage, protocolPage, referencePage, statusPage, trustPage, verifyPage,
  wellKnownHtml,
} from '../discovery/pages.ts';
import { PUBLIC_ROUTES, publicRoute, type PublicRoute } from '../discovery/routes.ts';
import { edgeStatus, type CoreCall } from './core-call.ts';
import type { DiscoveryFacts, DiscoverySource, Facts } from './discovery-facts.ts';
import { verifyBundle } from './verify-bundle.ts';

type GatewayState = { requestId: string; client: string };
type Ctx = RouterContext<GatewayState>;


/** A document's body: from the site alone, or from the node facts too (those need the core). */
type Body = { site: (site: SiteInfo) => string | Buffer } | { facts: (f: Facts, ctx: Ctx) => string | Buffer };

const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

// Server-rendered pages need no script, only their inline stylesheet and data: images
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; manifest-src 'self';"
  + " base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
// The API reference, and only it, also runs same-origin script (the Redoc bundle), which fetches
// openapi.json and starts its search index in a blob: worker; styled-components adds <style> tags
const REFERENCE_CSP = `${PAGE_CSP}; script-src 'self'; connect-src 'self'; worker-src blob:`;
// The verifier runs its own bundle, fetches the manifest and kernels.wasm, and compiles the kernels
// (WebAssembly compilation needs 'wasm-unsafe-eval' once script-src is restricted)
const VERIFY_CSP = `${PAGE_CSP}; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'`;
const CSP: Record<string, string> = { pageReference: REFERENCE_CSP, pageVerify: VERIFY_CSP };

// Redoc's sidebar credit loads its logo from Redocly's CDN; a page of ours asks no other origin
const REDOC_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const BLANK_SVG = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 1 1'/%3E";
const etagOf = (bytes: Buffer) => `"${createHash('sha256').update(bytes).digest('hex').slice(0, 32)}"`;

/** A script as served: identity and gzip bytes, each with its ETag. */
interface ScriptBundle { raw: Buffer; gzip: Buffer; etag: string; gzipEtag: string }

/** The redoc package's standalone bundle. */
function loadRedocBundle(): ScriptBundle {
  const file = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');
  const raw = Buffer.from(readFileSync(file, 'utf8').replaceAll(REDOC_LOGO, BLANK_SVG), 'utf8');
  const gzip = gzipSync(raw, { level: 9 });
  return { raw, gzip, etag: etagOf(raw), gzipEtag: etagOf(gzip) };
}

export function discoveryRoutes(
  router: Router<GatewayState>, core: CoreCall, src: DiscoverySource, limit: (ctx: Ctx) => void, known: DiscoveryFacts,
): void {
  const { site, facts } = known;

  const send = (ctx: Ctx, r: PublicRoute, body: string | Buffer) => {
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    const etag = etagOf(bytes);
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', `public, max-age=${r.maxAge ?? 300}`);
    if (r.type.startsWith('text/html')) {
      ctx.set('Content-Security-Policy', CSP[r.id] ?? PAGE_CSP);
    }
    if (ctx.get('if-none-match') === etag) { ctx.status = 304; return; }
    ctx.type = r.type;
    ctx.body = bytes;
  };

  // openapi.json depends only on the base URL and takes milliseconds to build: keep the last one. Its
  // server is the configured public base URL; without one, `/`: the bound address is seldom what a
  // client reached (a proxy, a container's port), while the origin it fetched the document from is
  let openapi: { base: string; text: string } | null = null;
  const openapiOf = (s: SiteInfo) => {
    if (openapi?.base !== s.base_url) {
      openapi = { base: s.base_url, text: json(buildOpenApi(s, src.baseConfigured ? {} : { server: '/' })) };
    }
    return openapi.text;
  };

  // one body per document; aliases share their original's (routes.ts `aliasOf`)
  const bodies: Record<string, Body> = {
    pageHome: { facts: (f) => landingPage(f.node, f.site) },
    pageDocs: { site: docsPage },
    pageReference: { site: () => referencePage() },
    pageProtocol: { facts: (f) => protocolPage(f.node, f.site) },
    pageForAgents: { site: agentsPage },
    pagePricing: { site: () => pricingPage() },
    pageTrust: { facts: (f) => trustPage(f.node, manifestHash(f.node, f.site)) },
    wellKnownHtml: { site: wellKnownHtml },
    llmsTxt: { site: llmsTxt },
    robotsTxt: { site: robotsTxt },
    sitemapXml: { site: sitemapXml },
    siteWebmanifest: { site: () => json(webManifest()) },
    openapi: { site: openapiOf },
    wellKnownIndex: { site: (s) => json(wellKnownIndex(s)) },
    hostMeta: { site: hostMetaXml },
    hostMetaJson: { site: (s) => json(hostMetaJson(s)) },
    agentCard: { facts: (f) => json(agentCard(f.node, f.site, f.x402)) },
    manifest: { facts: (f) => manifestBytes(f.node, f.site) },
    manifestKv: { facts: (f) => manifestKv(f.node, f.site) },
    bootstrap: { facts: (f) => json(bootstrapDocument(f.node, f.site)) },
    pricebookPointer: { site: (s) => json(pricebookPointer(s)) },
    serviceCatalog: { site: (s) => json(serviceCatalog(s)) },
    pricebookText: { site: () => pricebookText() },
    nodes: { facts: (f) => json(nodesDocument(f.node, f.site)) },
    node: { facts: (f) => json(nodeDocument(f.node, f.site)) },
    network: { site: (s) => json(networkDocument(s)) },
    webfinger: {
      facts: (f, ctx) => {
        const jrd = webfinger(ctx.query.resource as string, f.node, f.site);
        const asked = String(ctx.query.resource).slice(0, 200);
        if (!jrd) throw new ServiceError('not_found', `no WebFinger record for ${asked}`);
        return json(jrd);
      },
    },
  };

  for (const r of PUBLIC_ROUTES) {
    const body = bodies[r.aliasOf ?? r.id];
    if (!body || r.method !== 'GET') continue; // served by api-routes, sandbox-routes, mcp-routes, or below (status)
    router.get(r.path, async (ctx) => {
      limit(ctx); // first: a limited client costs no core call and no rendering
      // CORS (r.cors): embed-routes.ts sets it before any route runs, on errors too (RFC 7033)
      for (const [name, q] of Object.entries(r.query ?? {})) {
        const v = ctx.query[name];
        if (q.required && (typeof v !== 'string' || !v)) {
          throw new ServiceError('invalid_request', `the ${name} query parameter is required`, { field: name });
        }
      }
      send(ctx, r, 'site' in body ? body.site(site()) : body.facts(await facts(), ctx));
    });
  }

  // status documents: fresh each time, never failing because the core did
  const statusJson = publicRoute('statusJson');
  router.get(statusJson.path, async (ctx) => {
    limit(ctx);
    const doc = statusDocument(await edgeStatus(core, ctx.state.client), new Date().toISOString());
    send(ctx, statusJson, json(doc));
  });
  const statusHtml = publicRoute('pageStatus');
  router.get(statusHtml.path, async (ctx) => {
    limit(ctx);
    send(ctx, statusHtml, statusPage(await edgeStatus(core, ctx.state.client), new Date().toISOString()));
  });

  /** A script bundle, gzip when accepted, each encoding with its ETag. */
  const sendScript = (ctx: Ctx, r: PublicRoute, b: ScriptBundle, cache: string) => {
    const gzip = ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
    const etag = gzip ? b.gzipEtag : b.etag;
    ctx.set('Vary', 'Accept-Encoding');
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', cache);
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (ctx.get('if-none-match') === etag) { ctx.status = 304; return; }
    if (gzip) ctx.set('Content-Encoding', 'gzip');
    ctx.type = r.type;
    ctx.body = gzip ? b.gzip : b.raw;
  };

  // the API reference's renderer: read, hashed and compressed once, on first use
  let bundle: ReturnType<typeof loadRedocBundle> | null = null;
  const asset = publicRoute('assetRedoc');
  router.get(asset.path, (ctx) => {
    limit(ctx);
    bundle ??= loadRedocBundle();
    sendScript(ctx, asset, bundle, `public, max-age=${asset.maxAge}`);
  });

  // the verifier: its page names the bundle by hash (built on first use), and that URL never changes
  const verifyAsset = publicRoute('assetVerify');
  router.get(verifyAsset.path, async (ctx) => {
    limit(ctx);
    const b = await verifyBundle();
    const cache = ctx.query.v === b.version ? 'public, max-age=31536000, immutable'
      : `public, max-age=${verifyAsset.maxAge}`;
    sendScript(ctx, verifyAsset, b, cache);
  });
  const verifyHtml = publicRoute('pageVerify');
  router.get(verifyHtml.path, async (ctx) => {
    limit(ctx);
    send(ctx, verifyHtml, verifyPage(`${verifyAsset.path}?v=${(await verifyBundle()).version}`));
  });

  router.get(publicRoute('apiDiscovery').path, async (ctx) => {
    limit(ctx);
    const f = await facts();
    ctx.body = { ok: true, request_id: ctx.state.requestId, source: 'api', ...discoverySummary(f.node, f.site) };
  });
}
