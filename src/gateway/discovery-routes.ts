// Serves the discovery documents (src/discovery) with ETag / Cache-Control, CORS-open where the
// conventions ask (WebFinger, host-meta, the JSON documents). Node facts come from the core's HELLO
// and PAYMENT_INFO, cached for a minute; everything else is derived from the registry.
import { createHash } from 'node:crypto';
import type Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import { ServiceError } from '../errors.ts';
import {
  DOCUMENT_PATHS, WELL_KNOWN, agentCard, bootstrapDocument, hostMetaJson, hostMetaXml, llmsTxt, manifestBytes, manifestHash, manifestKv,
  networkDocument, nodeDocument, nodesDocument, pricebookPointer, pricebookText, robotsTxt, serviceCatalog, sitemapXml, webManifest, webfinger, wellKnownIndex,
} from '../discovery/documents.ts';
import type { NodeInfo, SiteInfo } from '../discovery/node-info.ts';
import { buildOpenApi } from '../discovery/openapi.ts';
import { agentsPage, docsPage, landingPage, pricingPage, protocolPage, statusPage, trustPage, wellKnownHtml } from '../discovery/pages.ts';
import { VERSIONS } from '../protocol/versions.ts';
import { edgeStatus, type CoreCall } from './core-call.ts';

type Ctx = RouterContext<{ requestId: string; client: string }>;

export interface DiscoverySource { baseUrl: () => string; edgePort: number }

const CACHE_MS = 60_000;

export function discoveryRoutes(router: Router<{ requestId: string; client: string }>, core: CoreCall, src: DiscoverySource, limit: (ctx: Ctx) => void): void {
  let cached: { at: number; node: NodeInfo; wallets: Record<string, string> } | null = null;
  const facts = async (): Promise<{ node: NodeInfo; site: SiteInfo }> => {
    if (!cached || Date.now() - cached.at > CACHE_MS) {
      const [hello, pay] = await Promise.all([core('HELLO', {}), core('PAYMENT_INFO', {})]);
      const p = hello.edge_proof as { key_id: string; public_key: string; statement: { edge_cert_sha256: string } };
      cached = {
        at: Date.now(),
        node: { node_id: hello.node_id as string, key_id: p.key_id, alg: 'Ed25519', public_key: p.public_key, edge_cert_sha256: p.statement.edge_cert_sha256 },
        wallets: Object.fromEntries((pay.rails as { rail: string; address: string }[]).map((r) => [r.rail, r.address])),
      };
    }
    return { node: cached.node, site: site(cached.wallets) };
  };
  const site = (wallets: Record<string, string> = {}): SiteInfo => {
    const base = src.baseUrl().replace(/\/+$/, '');
    return { base_url: base, edge_host: new URL(base).hostname.replace(/^\[|\]$/g, ''), edge_port: src.edgePort, wallets };
  };

  const send = (ctx: Ctx, body: string | Buffer, type: string, opts: { cors?: boolean; maxAge?: number } = {}) => {
    limit(ctx);
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    const etag = `"${createHash('sha256').update(bytes).digest('hex').slice(0, 32)}"`;
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', `public, max-age=${opts.maxAge ?? 300}`);
    if (opts.cors !== false) ctx.set('Access-Control-Allow-Origin', '*');
    if (ctx.get('if-none-match') === etag) { ctx.status = 304; return; }
    ctx.type = type;
    ctx.body = bytes;
  };
  const jsonDoc = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

  const openapi = (ctx: Ctx) => send(ctx, jsonDoc(buildOpenApi(site())), 'application/json');
  for (const p of [DOCUMENT_PATHS.openapi, '/.well-known/openapi.json', `${WELL_KNOWN}/openapi.json`]) router.get(p, openapi);
  router.get(DOCUMENT_PATHS.llms, (ctx) => send(ctx, llmsTxt(site()), 'text/plain; charset=utf-8'));
  router.get('/robots.txt', (ctx) => send(ctx, robotsTxt(site()), 'text/plain; charset=utf-8'));
  router.get('/sitemap.xml', (ctx) => send(ctx, sitemapXml(site()), 'application/xml'));
  router.get('/site.webmanifest', (ctx) => send(ctx, jsonDoc(webManifest()), 'application/manifest+json'));
  router.get('/.well-known/', (ctx) => send(ctx, jsonDoc(wellKnownIndex(site())), 'application/json'));
  router.get('/.well-known/host-meta', (ctx) => send(ctx, hostMetaXml(site()), 'application/xrd+xml; charset=utf-8'));
  router.get('/.well-known/host-meta.json', (ctx) => send(ctx, jsonDoc(hostMetaJson(site())), 'application/json'));
  router.get(DOCUMENT_PATHS.webfinger, async (ctx) => {
    const resource = typeof ctx.query.resource === 'string' ? ctx.query.resource : '';
    if (!resource) throw new ServiceError('invalid_request', 'the resource query parameter is required (RFC 7033)', { field: 'resource' });
    const f = await facts();
    const jrd = webfinger(resource, f.node, f.site);
    ctx.set('Access-Control-Allow-Origin', '*');
    if (!jrd) throw new ServiceError('not_found', `no WebFinger record for ${resource.slice(0, 200)}`);
    send(ctx, jsonDoc(jrd), 'application/jrd+json');
  });
  const card = async (ctx: Ctx) => { const f = await facts(); send(ctx, jsonDoc(agentCard(f.node, f.site)), 'application/json'); };
  router.get(DOCUMENT_PATHS.agent_card, card);
  router.get('/.well-known/agent.json', card);

  const manifest = async (ctx: Ctx) => { const f = await facts(); send(ctx, manifestBytes(f.node, f.site), 'application/json'); };
  router.get(DOCUMENT_PATHS.manifest, manifest);
  router.get('/api/v1/manifest', manifest);
  router.get(DOCUMENT_PATHS.manifest_kv, async (ctx) => { const f = await facts(); send(ctx, manifestKv(f.node, f.site), 'text/plain; charset=utf-8'); });
  const pointer = (ctx: Ctx) => send(ctx, jsonDoc(pricebookPointer(site())), 'application/json');
  router.get(DOCUMENT_PATHS.pricebook_pointer, pointer);
  router.get('/api/v1/pricebook', pointer);
  router.get(DOCUMENT_PATHS.pricebook_text, (ctx) => send(ctx, pricebookText(), 'text/plain; charset=utf-8'));
  router.get(DOCUMENT_PATHS.service_catalog, (ctx) => send(ctx, jsonDoc(serviceCatalog(site())), 'application/json'));
  router.get(DOCUMENT_PATHS.nodes, async (ctx) => { const f = await facts(); send(ctx, jsonDoc(nodesDocument(f.node, f.site)), 'application/json'); });
  router.get(DOCUMENT_PATHS.node, async (ctx) => { const f = await facts(); send(ctx, jsonDoc(nodeDocument(f.node, f.site)), 'application/json'); });
  router.get(DOCUMENT_PATHS.network, (ctx) => send(ctx, jsonDoc(networkDocument(site())), 'application/json'));
  router.get(DOCUMENT_PATHS.bootstrap, async (ctx) => { const f = await facts(); send(ctx, jsonDoc(bootstrapDocument(f.node, f.site)), 'application/json'); });
  router.get(DOCUMENT_PATHS.status, async (ctx) => {
    send(ctx, jsonDoc({ format: 'svc_status_v1', gateway: { status: 'ok', version: VERSIONS.gateway }, edge: await edgeStatus(core), time: new Date().toISOString() }), 'application/json', { maxAge: 5 });
  });
  const html = 'text/html; charset=utf-8';
  router.get('/', async (ctx) => { const f = await facts(); send(ctx, landingPage(f.node, f.site), html, { cors: false }); });
  router.get('/docs', (ctx) => send(ctx, docsPage(site()), html, { cors: false }));
  router.get('/protocol', async (ctx) => { const f = await facts(); send(ctx, protocolPage(f.node, f.site), html, { cors: false }); });
  router.get('/for-agents', (ctx) => send(ctx, agentsPage(site()), html, { cors: false }));
  router.get('/pricing', (ctx) => send(ctx, pricingPage(), html, { cors: false }));
  router.get('/trust', async (ctx) => { const f = await facts(); send(ctx, trustPage(f.node, manifestHash(f.node, f.site)), html, { cors: false }); });
  router.get('/status', async (ctx) => {
    send(ctx, statusPage(await edgeStatus(core)), html, { cors: false, maxAge: 5 });
  });
  router.get(`${WELL_KNOWN}/`, (ctx) => send(ctx, wellKnownHtml(site()), html));

  router.get('/api/v1/discovery', async (ctx) => {
    limit(ctx);
    const f = await facts();
    ctx.body = {
      ok: true, request_id: ctx.state.requestId, source: 'api',
      discovery_version: VERSIONS.discovery, manifest_format: VERSIONS.manifestFormat, manifest_sha256: manifestHash(f.node, f.site),
      capability_count: VERSIONS.capabilityCount, node_id: f.node.node_id, documents: wellKnownIndex(f.site).documents,
    };
  });
}
