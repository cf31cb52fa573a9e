// Serves the discovery documents and pages, registered from the route table (path, media type,
// caching, CORS); only bodies are built here, from the registry and the node facts (core HELLO and
// PAYMENT_INFO, cached a minute). The sandbox, /mcp and the other /api/v1 routes are app.ts's.
import { createHash } from 'node:crypto';
import type Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import { ServiceError } from '../errors.ts';
import {
  agentCard, bootstrapDocument, hostMetaJson, hostMetaXml, llmsTxt, manifestBytes, manifestHash, manifestKv,
  networkDocument, nodeDocument, nodesDocument, pricebookPointer, pricebookText, robotsTxt, serviceCatalog, sitemapXml,
  webManifest, webfinger, wellKnownIndex,
} from '../discovery/documents.ts';
import type { NodeInfo, SiteInfo } from '../discovery/node-info.ts';
import { buildOpenApi } from '../discovery/openapi.ts';
import {
  agentsPage, docsPage, landingPage, pricingPage, protocolPage, statusPage, trustPage, wellKnownHtml,
} from '../discovery/pages.ts';
import { PUBLIC_ROUTES, publicRoute, type PublicRoute } from '../discovery/routes.ts';
import { VERSIONS } from '../protocol/versions.ts';
import { edgeStatus, type CoreCall } from './core-call.ts';

type GatewayState = { requestId: string; client: string };
type Ctx = RouterContext<GatewayState>;

export interface DiscoverySource { baseUrl: () => string; edgePort: number }

const CACHE_MS = 60_000;

interface Facts { node: NodeInfo; site: SiteInfo }
/** A document's body: from the site alone, or from the node facts too (those need the core). */
type Body = { site: (site: SiteInfo) => string | Buffer } | { facts: (f: Facts, ctx: Ctx) => string | Buffer };

const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

export function discoveryRoutes(
  router: Router<GatewayState>, core: CoreCall, src: DiscoverySource, limit: (ctx: Ctx) => void,
): void {
  let cached: { at: number; node: NodeInfo; wallets: Record<string, string> } | null = null;
  const site = (wallets: Record<string, string> = {}): SiteInfo => {
    const base = src.baseUrl().replace(/\/+$/, '');
    const edgeHost = new URL(base).hostname.replace(/^\[|\]$/g, '');
    return { base_url: base, edge_host: edgeHost, edge_port: src.edgePort, wallets };
  };
  const facts = async (): Promise<Facts> => {
    if (!cached || Date.now() - cached.at > CACHE_MS) {
      const [hello, pay] = await Promise.all([core('HELLO', {}), core('PAYMENT_INFO', {})]);
      const p = hello.edge_proof as { key_id: string; public_key: string; statement: { edge_cert_sha256: string } };
      cached = {
        at: Date.now(),
        node: {
          node_id: hello.node_id as string, key_id: p.key_id, alg: 'Ed25519', public_key: p.public_key,
          edge_cert_sha256: p.statement.edge_cert_sha256,
        },
        wallets: Object.fromEntries((pay.rails as { rail: string; address: string }[]).map((r) => [r.rail, r.address])),
      };
    }
    return { node: cached.node, site: site(cached.wallets) };
  };

  const send = (ctx: Ctx, r: PublicRoute, body: string | Buffer) => {
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    const etag = `"${createHash('sha256').update(bytes).digest('hex').slice(0, 32)}"`;
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', `public, max-age=${r.maxAge ?? 300}`);
    if (r.cors) ctx.set('Access-Control-Allow-Origin', '*');
    if (ctx.get('if-none-match') === etag) { ctx.status = 304; return; }
    ctx.type = r.type;
    ctx.body = bytes;
  };

  // openapi.json depends only on the base URL and takes milliseconds to build: keep the last one
  let openapi: { base: string; text: string } | null = null;
  const openapiOf = (s: SiteInfo) => {
    if (openapi?.base !== s.base_url) openapi = { base: s.base_url, text: json(buildOpenApi(s)) };
    return openapi.text;
  };

  // one body per document; aliases share their original's (routes.ts `aliasOf`)
  const bodies: Record<string, Body> = {
    pageHome: { facts: (f) => landingPage(f.node, f.site) },
    pageDocs: { site: docsPage },
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
    agentCard: { facts: (f) => json(agentCard(f.node, f.site)) },
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
    if (!body || r.method !== 'GET') continue; // served by app.ts (api, sandbox, mcp) or below (status)
    router.get(r.path, async (ctx) => {
      limit(ctx); // first: a limited client costs no core call and no rendering
      if (r.cors) ctx.set('Access-Control-Allow-Origin', '*'); // on errors too: browser clients read them (RFC 7033)
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
    const gateway = { status: 'ok', version: VERSIONS.gateway };
    const doc = { format: 'svc_status_v1', gateway, edge: await edgeStatus(core), time: new Date().toISOString() };
    send(ctx, statusJson, json(doc));
  });
  const statusHtml = publicRoute('pageStatus');
  router.get(statusHtml.path, async (ctx) => {
    limit(ctx);
    send(ctx, statusHtml, statusPage(await edgeStatus(core)));
  });

  router.get(publicRoute('apiDiscovery').path, async (ctx) => {
    limit(ctx);
    const f = await facts();
    ctx.body = {
      ok: true, request_id: ctx.state.requestId, source: 'api',
      discovery_version: VERSIONS.discovery, manifest_format: VERSIONS.manifestFormat,
      manifest_sha256: manifestHash(f.node, f.site), capability_count: VERSIONS.capabilityCount,
      node_id: f.node.node_id,
      documents: wellKnownIndex(f.site).documents,
    };
  });
}
