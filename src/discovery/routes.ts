// The one table of every public HTTP route that is not a registry command (pages, documents, /mcp,
// /api/v1 gateway routes, sandbox): method, path, media type, annotations, statuses, purpose. Pure
// data that OpenAPI, route registration, sitemap, llms.txt and pages derive from; not the commands.
import { commandSpec, type AuthLevel, type Billing, type Group, type RateClass } from '../protocol/registry.ts';
import { SANDBOX_RESULTS, SANDBOX_SCHEMAS } from '../protocol/sandbox.ts';
import { id as idSchema, type Schema } from '../protocol/schemas.ts';
import { VERSIONS } from '../protocol/versions.ts';
import { MCP_RESOURCE_NAMES, MCP_TOOL_NAMES } from '../protocol/services.ts';

export type RouteTag = 'Pages' | 'Discovery' | 'MCP' | 'Sandbox';
/** What the tags that are not registry groups hold (openapi.json's tag descriptions; Discovery is a group). */
export const ROUTE_TAGS: Readonly<Record<Exclude<RouteTag, Group>, string>> = {
  Pages: 'HTML pages for people (landing, documentation, API reference, pricing, status, trust, the offline'
    + ' verifier) and the scripts they load.',
  MCP: 'The Model Context Protocol endpoint: stateless, JSON responses only, with the free tools (discovery,'
    + ' quotes, receipt verification, the sandbox pulse) and, on nodes with x402 on, paid execution tools paid per'
    + ' call with x402.',
  Sandbox: 'Free and anonymous: quote, accept and execute a small GET_PULSE and verify its receipt, with no account'
    + ' and no real settlement. Rate limited per client address.',
};
/** What a success carries: the envelope, a JSON document, text or markup, a JSON-RPC reply, or nothing. */
export type RouteBody = 'envelope' | 'json' | 'text' | 'jsonrpc' | 'none';

export interface QueryParam { required: boolean; schema: Schema; description: string; example?: string }

export interface PublicRoute {
  /** also the operationId in openapi.json */
  readonly id: string;
  readonly method: 'GET' | 'POST';
  /** OpenAPI path template: `{quote_id}` */
  readonly path: string;
  /** media type of the body of a success, exactly as served */
  readonly type: string;
  readonly body: RouteBody;
  readonly tag: RouteTag;
  readonly billing: Billing;
  readonly auth: AuthLevel;
  readonly rateClass: RateClass;
  readonly execution: boolean;
  readonly purpose: string;
  /** every status other than 200 this route answers (errors, 304 for conditional GETs, 204) */
  readonly statuses: readonly number[];
  /** the result inside the envelope (body `envelope`) */
  readonly result?: Schema;
  /** JSON request body (POST) */
  readonly request?: Schema;
  readonly params?: Readonly<Record<string, Schema>>;
  readonly query?: Readonly<Record<string, QueryParam>>;
  /** served with ETag and Cache-Control max-age (seconds), so If-None-Match can answer 304 */
  readonly maxAge?: number;
  /** Access-Control-Allow-Origin: * (the JSON documents and the conventions that ask for it) */
  readonly cors: boolean;
  /** the route this one is an alias of (same body, same handler) */
  readonly aliasOf?: string;
  /** key under which the manifest and the well-known index publish this document */
  readonly doc?: DocKey;
  /** label in the pages' navigation */
  readonly nav?: string;
  readonly sitemap: boolean;
  /** the core command this route calls (the sandbox's steps: a registry command with a gatewayRoute) */
  readonly command?: string;
  /**
   * what a success carries (of an envelope: the result inside it), for openapi.json, where neither a
   * document builder nor the registry command gives one; from the public base URL
   */
  readonly example?: (baseUrl: string) => unknown;
  /** an example request body, where the registry command does not give one */
  readonly requestExample?: Readonly<Record<string, unknown>>;
}

export const DOC_KEYS = [
  'openapi', 'llms', 'manifest', 'manifest_kv', 'pricebook_pointer', 'pricebook_text', 'service_catalog', 'status',
  'bootstrap', 'nodes', 'node', 'network', 'agent_card', 'host_meta', 'webfinger',
] as const;
export type DocKey = (typeof DOC_KEYS)[number];

export const WELL_KNOWN = '/.well-known/svc';

const HTML = 'text/html; charset=utf-8';
const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json';

interface Traits {
  /** needs the core (node facts, a command): 502 when it cannot be reached */
  core?: boolean;
  /** statuses beyond the ones the route's kind implies */
  also?: number[];
  doc?: DocKey;
  nav?: string;
  sitemap?: boolean;
  maxAge?: number;
  cors?: boolean;
  query?: PublicRoute['query'];
  example?: PublicRoute['example'];
}

/** How every page begins; the page itself is the full example (openapi.json shows this much). */
const PAGE_EXAMPLE = '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n…';
const SCRIPT_EXAMPLE = '(() => { … })();\n';

const isJson = (type: string) => /^application\/([\w.-]+\+)?json\b/.test(type);
const sorted = (xs: number[]) => [...new Set(xs)].sort((a, b) => a - b);

/** What every route of a kind can answer: 400/413 (JSON body), 304 (ETag), 429 (rate limit), 502 (via the core). */
function statusesOf(method: 'GET' | 'POST', t: Traits & { conditional?: boolean }): number[] {
  return sorted([
    ...(method === 'POST' ? [400, 413] : []),
    ...(t.query && Object.values(t.query).some((q) => q.required) ? [400] : []),
    ...(t.conditional ? [304] : []),
    429,
    ...(t.core ? [502] : []),
    ...(t.also ?? []),
  ]);
}

const free = { billing: 'free', auth: 'none', rateClass: 'public_low', execution: false } as const;

/** A document served by src/gateway/discovery-routes.ts with ETag and caching. */
function document(
  id: string, path: string, type: string, purpose: string, t: Traits = {}, tag: RouteTag = 'Discovery',
): PublicRoute {
  return {
    id, method: 'GET', path, type, body: isJson(type) ? 'json' : 'text', tag, ...free, purpose,
    statuses: statusesOf('GET', { ...t, conditional: true }), maxAge: t.maxAge ?? 300, cors: t.cors ?? true,
    sitemap: t.sitemap ?? false,
    ...(t.query ? { query: t.query } : {}), ...(t.doc ? { doc: t.doc } : {}), ...(t.nav ? { nav: t.nav } : {}),
    ...(t.example ? { example: t.example } : {}),
  };
}

const page = (id: string, path: string, nav: string, purpose: string, t: Traits = {}): PublicRoute =>
  document(id, path, HTML, purpose, { cors: false, sitemap: true, nav, example: () => PAGE_EXAMPLE, ...t }, 'Pages');

/** Another path for the same body: everything but the id and the path (and the published doc key) is shared. */
function alias(of: PublicRoute, id: string, path: string): PublicRoute {
  const { doc: _doc, nav: _nav, ...rest } = of;
  return { ...rest, id, path, aliasOf: of.id, sitemap: false };
}

function api(id: string, path: string, purpose: string, body: 'envelope' | 'json', t: Traits = {}): PublicRoute {
  return {
    id, method: 'GET', path, type: JSON_TYPE, body, tag: 'Discovery', ...free, purpose,
    statuses: statusesOf('GET', t), cors: false, sitemap: false, ...(t.example ? { example: t.example } : {}),
  };
}

/** A sandbox route: the gateway route of a SANDBOX_* command, at the path the registry gives it. */
function sandbox(
  id: string, command: string, kind: keyof typeof SANDBOX_SCHEMAS, purpose: string, also: number[], execution = false,
): PublicRoute {
  const path = commandSpec(command)!.gatewayRoute!.path;
  return {
    id, method: 'POST', path, type: JSON_TYPE, body: 'envelope', tag: 'Sandbox', billing: 'sandbox_free_limited',
    auth: 'none', rateClass: 'public_low', execution, purpose, statuses: statusesOf('POST', { also }),
    request: SANDBOX_SCHEMAS[kind], result: SANDBOX_RESULTS[kind], cors: false, sitemap: false, command,
    ...(path.includes('{quote_id}') ? { params: { quote_id: idSchema } } : {}),
  };
}

/** A JSON-RPC 2.0 request or notification as POST /mcp takes it (one object; batches are not accepted). */
export const JSON_RPC_REQUEST: Schema = {
  type: 'object', required: ['jsonrpc', 'method'],
  properties: {
    jsonrpc: { type: 'string', const: '2.0' }, id: { type: ['string', 'integer'] }, method: { type: 'string' },
    params: { type: 'object' },
  },
};

const openapi = document('openapi', '/openapi.json', JSON_TYPE,
  'the machine-readable description of this API (OpenAPI 3.1)', {
    doc: 'openapi', sitemap: true,
    // this very document, its first fields (the whole would be an example of itself)
    example: (base) => ({
      openapi: '3.1.0', jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
      info: { title: 'svc public gateway', version: VERSIONS.api }, servers: [{ url: base }],
    }),
  });
const agentCard = document('agentCard', '/.well-known/agent-card.json', JSON_TYPE, 'agent card',
  { core: true, doc: 'agent_card' });
const mcpMetadata: PublicRoute = {
  ...api('mcpMetadata', '/.well-known/mcp', 'remote MCP endpoint metadata', 'json', {
    example: (base) => ({
      name: 'svc', version: VERSIONS.mcpServer, endpoint: `${base}/mcp`, transport: 'streamable-http', stateless: true,
      response_mode: 'json', get: '405 (streams are not supported)',
      protocol_versions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
      tools: [...MCP_TOOL_NAMES], resources: [...MCP_RESOURCE_NAMES],
      billing: 'free_limited', auth: 'none', rate_class: 'public_low',
    }),
  }), cors: true, maxAge: 300,
};
const manifest = document('manifest', `${WELL_KNOWN}/svc_public_manifest.json`, JSON_TYPE, 'public manifest',
  { core: true, doc: 'manifest' });
const pricebookPointer = document('pricebookPointer', `${WELL_KNOWN}/pricebook.json`, JSON_TYPE, 'pricebook pointer',
  { doc: 'pricebook_pointer' });

export const PUBLIC_ROUTES: readonly PublicRoute[] = [
  page('pageHome', '/', 'Home', 'HTML landing page', { core: true }),
  page('pageDocs', '/docs', 'API', 'HTML documentation'),
  page('pageReference', '/reference', 'Reference', 'HTML interactive API reference rendered from openapi.json'),
  page('pageProtocol', '/protocol', 'Protocol', 'HTML protocol overview', { core: true }),
  page('pageForAgents', '/for-agents', 'For agents', 'HTML agent integration guide'),
  page('pagePricing', '/pricing', 'Pricing', 'HTML pricing policy'),
  page('pageStatus', '/status', 'Status', 'HTML status page', { maxAge: 5 }),
  page('pageTrust', '/trust', 'Trust', 'HTML trust and verification page', { core: true }),
  page('pageVerify', '/verify', 'Verify',
    'HTML verifier: checks a receipt, pulse or proof in the browser with the embedding kit, offline after load'),
  // the API reference's renderer: the redoc package's standalone bundle, served from node_modules (no CDN)
  document('assetRedoc', '/assets/redoc.standalone.js', 'text/javascript; charset=utf-8',
    'the Redoc browser bundle that renders /reference', { cors: false, maxAge: 86_400, example: () => SCRIPT_EXAMPLE },
    'Pages'),
  // the verifier page's script: the embedding kit bundled for the browser (esbuild, once per process);
  // /verify asks for it with ?v=<its hash>, which is served immutable
  document('assetVerify', '/assets/verify.js', 'text/javascript; charset=utf-8',
    'the embedding kit bundled for the browser, which runs /verify', {
      cors: false, maxAge: 300, example: () => SCRIPT_EXAMPLE,
      query: {
        v: {
          required: false, schema: { type: 'string' }, description: 'the bundle\'s hash (cache key)',
          example: '3f1c9a0e5b7d2c48',
        },
      },
    }, 'Pages'),
  document('wellKnownHtml', `${WELL_KNOWN}/`, HTML, 'HTML discovery index',
    { sitemap: true, example: () => PAGE_EXAMPLE }),
  document('llmsTxt', '/llms.txt', TEXT, 'plain-text agent summary', { doc: 'llms', sitemap: true }),
  document('robotsTxt', '/robots.txt', TEXT, 'crawler rules'),
  document('sitemapXml', '/sitemap.xml', 'application/xml', 'site map of the pages and documents'),
  document('siteWebmanifest', '/site.webmanifest', 'application/manifest+json', 'web app manifest'),
  openapi,
  alias(openapi, 'openapiWellKnown', '/.well-known/openapi.json'),
  alias(openapi, 'openapiSvc', `${WELL_KNOWN}/openapi.json`),
  document('wellKnownIndex', '/.well-known/', JSON_TYPE, 'discovery index'),
  document('hostMeta', '/.well-known/host-meta', 'application/xrd+xml; charset=utf-8',
    'host metadata (XRD, RFC 6415)', { doc: 'host_meta' }),
  document('hostMetaJson', '/.well-known/host-meta.json', JSON_TYPE, 'host metadata, JSON (RFC 6415)'),
  document('webfinger', '/.well-known/webfinger', 'application/jrd+json', 'WebFinger (RFC 7033) lookups', {
    core: true, doc: 'webfinger', also: [404],
    query: { resource: { required: true, schema: { type: 'string', minLength: 1 }, description: 'the URI looked up' } },
  }),
  agentCard,
  alias(agentCard, 'agentJson', '/.well-known/agent.json'),
  mcpMetadata,
  alias(mcpMetadata, 'mcpMetadataJson', '/.well-known/mcp.json'),
  alias(mcpMetadata, 'mcpMetadataSvc', `${WELL_KNOWN}/mcp.json`),
  manifest,
  document('manifestKv', `${WELL_KNOWN}/svc_public_manifest.kv`, TEXT, 'manifest as plain-text key/value',
    { core: true, doc: 'manifest_kv' }),
  document('statusJson', `${WELL_KNOWN}/status.json`, JSON_TYPE, 'status snapshot', { doc: 'status', maxAge: 5 }),
  document('bootstrap', `${WELL_KNOWN}/bootstrap.json`, JSON_TYPE, 'machine bootstrap metadata',
    { core: true, doc: 'bootstrap' }),
  pricebookPointer,
  document('serviceCatalog', `${WELL_KNOWN}/svc_service_catalog.json`, JSON_TYPE, 'service catalog',
    { doc: 'service_catalog' }),
  document('pricebookText', `${WELL_KNOWN}/svc_pricebook_public.txt`, TEXT, 'plain-text pricebook',
    { doc: 'pricebook_text' }),
  document('nodes', `${WELL_KNOWN}/nodes.json`, JSON_TYPE, 'node registry', { core: true, doc: 'nodes' }),
  document('node', `${WELL_KNOWN}/node.json`, JSON_TYPE, 'node metadata', { core: true, doc: 'node' }),
  document('network', `${WELL_KNOWN}/network.json`, JSON_TYPE, 'network metadata', { doc: 'network' }),
  {
    id: 'mcpStream', method: 'GET', path: '/mcp', type: JSON_TYPE, body: 'none', tag: 'MCP', billing: 'free_limited',
    auth: 'none', rateClass: 'public_low', execution: false, cors: false, sitemap: false,
    purpose: 'always 405: streams are not supported (stateless server)', statuses: [405],
  },
  {
    id: 'mcp', method: 'POST', path: '/mcp', type: JSON_TYPE, body: 'jsonrpc', tag: 'MCP', billing: 'free_limited',
    auth: 'none', rateClass: 'public_low', execution: false, cors: false, sitemap: false, request: JSON_RPC_REQUEST,
    requestExample: {
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'my-agent', version: '1.0.0' } },
    },
    example: () => ({
      jsonrpc: '2.0', id: 1,
      result: {
        protocolVersion: '2025-11-25', capabilities: { tools: { listChanged: false } },
        serverInfo: { name: 'svc', version: VERSIONS.mcpServer },
        instructions: 'svc: metered computation and proof. These tools are free: discovery, quotes, receipt'
          + ' verification and an anonymous sandbox pulse. Paid executions go through the HTTP API (/openapi.json)'
          + ' or svc/1 with a machine token.',
      },
    }),
    purpose: 'stateless MCP (Streamable HTTP, JSON responses) with the whitelisted free tools, and paid execution'
      + ' tools where x402 is on; both protocol eras',
    // 202: a notification, accepted (no body, as MCP's Streamable HTTP transport says); 404: an
    // unknown method (2026-07-28 answers it at the HTTP level); 406: an Accept that excludes
    // application/json, the only form this endpoint answers in
    statuses: statusesOf('POST', { also: [202, 404, 406] }),
  },
  {
    // not rate limited: orchestrators probe it; answered from the gateway's state and a cached HEALTH
    id: 'readyz', method: 'GET', path: '/readyz', type: JSON_TYPE, body: 'json', tag: 'Discovery', ...free,
    purpose: 'readiness for load balancers: 200 while serving; 503 once draining (SIGTERM) or while the core is down',
    statuses: [503], cors: false, sitemap: false, example: () => ({ ok: true, status: 'ready' }),
  },
  api('apiIndex', '/api/v1', 'JSON route index', 'envelope'),
  api('apiStatus', '/api/v1/status', 'gateway and public edge status', 'envelope', {
    // the edge part is the core's HEALTH answer
    example: () => ({
      gateway: { status: 'ok', version: VERSIONS.gateway, api_version: VERSIONS.api },
      edge: commandSpec('HEALTH')!.examples![0]!.result,
    }),
  }),
  api('apiDiscovery', '/api/v1/discovery', 'discovery summary', 'envelope', { core: true }),
  alias(manifest, 'apiManifest', '/api/v1/manifest'),
  alias(pricebookPointer, 'apiPricebook', '/api/v1/pricebook'),
  api('apiPayment', '/api/v1/payment', 'payment policy and wallets', 'json', { core: true }),
  {
    id: 'kernelsWasm', method: 'GET', path: '/kernels.wasm', type: 'application/wasm', body: 'text', tag: 'Discovery',
    ...free, purpose: 'the WASM proof kernels (docs/embedding.md); its SHA-256 is in the manifest',
    statuses: statusesOf('GET', { conditional: true }), maxAge: 3600, cors: true, sitemap: false,
    example: () => '\u0000asm\u0001\u0000\u0000\u0000…', // the module's magic and version, then its sections
  },
  sandbox('sandboxQuote', 'SANDBOX_QUOTE', 'quote', 'creates a sandbox GET_PULSE quote', [503]),
  sandbox('sandboxAccept', 'SANDBOX_ACCEPT', 'accept', 'accepts a sandbox quote', [404, 409]),
  sandbox('sandboxExecute', 'SANDBOX_EXECUTE', 'execute', 'small execution without real settlement', [404, 409, 503],
    true),
  sandbox('sandboxVerify', 'SANDBOX_VERIFY', 'verify', 'verifies a sandbox receipt generated by this gateway', [404]),
];

const BY_ID = new Map(PUBLIC_ROUTES.map((r) => [r.id, r]));

export function publicRoute(routeId: string): PublicRoute {
  const r = BY_ID.get(routeId);
  if (!r) throw new Error(`no public route ${routeId}`);
  return r;
}

/** Where each published document lives (the manifest's and the well-known index's `documents`). */
export const DOCUMENT_PATHS = Object.fromEntries(DOC_KEYS.map((k) => {
  const r = PUBLIC_ROUTES.find((x) => x.doc === k);
  if (!r) throw new Error(`no route publishes the ${k} document`);
  return [k, r.path];
})) as Readonly<Record<DocKey, string>>;

/** The pages' navigation, in table order. */
export const NAV: readonly (readonly [string, string])[] =
  PUBLIC_ROUTES.filter((r) => r.nav).map((r) => [r.path, r.nav!]);
