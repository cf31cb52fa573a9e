// The discovery documents (SPEC "Well-known discovery", "Landing and documentation pages"): pure
// functions of the registry, the pricing model, the node and the site. Byte-stable, so the
// manifest hash published in DNS stays valid until something real changes.
import { ABI_VERSION } from '../kernels/abi.ts';
import { kernelWasmSha256 } from '../kernels/wasm.ts';
import { COMMANDS, CAPABILITIES, commandSpec } from '../protocol/registry.ts';
import { sha256Hex } from '../protocol/canonical.ts';
import {
  PRICE_BOOK, PRICE_VERSION, QUOTE_TERMS_VERSION, REFERENCE_VALUE_USD_PER_SVCC, UNIT_POLICY, UNIT_SCALE,
  examplePrice, pricebookText,
} from '../protocol/pricing.ts';
import { SANDBOX_LIMITS } from '../protocol/sandbox.ts';
import type { Schema } from '../protocol/schemas.ts';
import { MCP_PAID_TOOL_NAMES, SERVICES } from '../protocol/services.ts';
import { VERSIONS } from '../protocol/versions.ts';
import { PAYMENT_REQUIRED_HEADER, PAYMENT_RESPONSE_HEADER, PAYMENT_SIGNATURE_HEADER } from '../protocol/x402.ts';
import type { NodeInfo, SiteInfo, X402Info } from './node-info.ts';
import { DOCUMENT_PATHS, PUBLIC_ROUTES, WELL_KNOWN, publicRoute } from './routes.ts';

export { DOCUMENT_PATHS, WELL_KNOWN };

export const POLICY = {
  discovery: 'free',
  receipt_verification: 'free',
  quote_generation: 'free, limited',
  sandbox: 'free, anonymous, limited',
  integration: 'free',
  real_execution: 'paid',
  anonymous_real_execution: 'not allowed',
  execution_requires_account_balance: 'yes',
  commercial_tiers: 'planned', settlement: 'crypto only',
};

const argOf = (command: string, field: string): Schema =>
  ((commandSpec(command)!.args.properties ?? {}) as Record<string, Schema>)[field] ?? {};
const quoteArg = (field: string, rule: string) => argOf('QUOTE', field)[rule] as number;

/**
 * The contract's limits as published: read from the registry schemas that enforce them, and the
 * running node's edge port (the one it listens on, or the configured public one), never a constant.
 */
export function publishedLimits(site: SiteInfo): Record<string, string | number> {
  return {
    machine_id_length: `${quoteArg('machine_id', 'minLength')}..${quoteArg('machine_id', 'maxLength')}`,
    idempotency_key_max_length: quoteArg('idempotency_key', 'maxLength'),
    quote_bits_min: quoteArg('bits', 'minimum'),
    quote_bits_default: quoteArg('bits', 'default'),
    quote_max_output_min: quoteArg('max_output', 'minimum'),
    quote_max_output_default: quoteArg('max_output', 'default'),
    quote_bytes_min: quoteArg('bytes', 'minimum'),
    quote_ttl_ms_min: quoteArg('quote_ttl_ms', 'minimum'),
    quote_ttl_ms_default: quoteArg('quote_ttl_ms', 'default'),
    invoice_units_min: argOf('FUND_ACCOUNT', 'units').minimum as number,
    sandbox_max_bits: SANDBOX_LIMITS.maxBits,
    sandbox_max_output_bytes: SANDBOX_LIMITS.maxOutputBytes,
    sandbox_max_input_bytes: SANDBOX_LIMITS.maxInputBytes,
    sandbox_ttl_seconds: SANDBOX_LIMITS.ttlSeconds,
    core_edge_port: site.edge_port,
  };
}

const RAIL_KEYS = ['USDT_TRON', 'USDC_BASE', 'USDC_SOLANA', 'USDT_SOLANA'] as const;

/** GET /.well-known/svc/status.json: the gateway, and the core's HEALTH answer (`edge`), at `time`. */
export function statusDocument(edge: Record<string, unknown>, time: string): Record<string, unknown> {
  return { format: 'svc_status_v1', gateway: { status: 'ok', version: VERSIONS.gateway }, edge, time };
}

/** GET /api/v1/discovery (inside the envelope): versions, the manifest's hash and where each document is. */
export function discoverySummary(node: NodeInfo, site: SiteInfo): Record<string, unknown> {
  return {
    discovery_version: VERSIONS.discovery, manifest_format: VERSIONS.manifestFormat,
    manifest_sha256: manifestHash(node, site), capability_count: VERSIONS.capabilityCount,
    node_id: node.node_id,
    documents: wellKnownIndex(site).documents,
  };
}

/** GET /api/v1: every route of the API, the registry's commands first, then the gateway's own /api/v1 routes. */
export function routeIndex(): Record<string, unknown> {
  const commands = COMMANDS.filter((c) => c.http).map((c) => ({
    method: c.http!.method, path: c.http!.path, command: c.name, auth: c.auth, billing: c.billing,
    rate_class: c.rateClass, execution: c.execution, purpose: c.purpose,
  }));
  const own = PUBLIC_ROUTES.filter((r) => r.path.startsWith(VERSIONS.pathPrefix) && !r.aliasOf).map((r) => ({
    method: r.method, path: r.path, auth: r.auth, billing: r.billing, rate_class: r.rateClass, execution: r.execution,
    purpose: r.purpose,
  }));
  return {
    api_version: VERSIONS.api, gateway_version: VERSIONS.gateway, protocol: VERSIONS.coreProtocol,
    routes: [...commands, ...own],
  };
}

/** A payment rail as PAYMENT_INFO lists it. */
export interface PaymentRail { rail: string; address: string; network: string; asset: string; decimals: number }

/**
 * GET /api/v1/payment: the payment policy and, per rail, where to pay (PAYMENT_INFO's rails); and, on a node
 * with x402 on, how a paid execution is paid per request instead (PAYMENT_INFO's x402, docs/x402.md).
 */
export function paymentPolicy(rails: readonly PaymentRail[], x402: unknown = null): Record<string, unknown> {
  return {
    policy: 'settlement is crypto only; svcC is an internal reference unit (1.00 USD reference), not a token',
    unit_policy: UNIT_POLICY,
    automated_rails: rails.map((r) => `${r.asset}/${r.network}`), reserved_rails: [],
    wallets: Object.fromEntries(rails.map((r) => [r.rail, r.address])),
    rails,
    x402,
  };
}

function pricing() {
  return {
    price_book: PRICE_BOOK,
    price_version: PRICE_VERSION,
    quote_terms_version: QUOTE_TERMS_VERSION,
    unit: 'svcC',
    unit_scale: Number(UNIT_SCALE),
    reference_value_usd_per_svcC: REFERENCE_VALUE_USD_PER_SVCC, unit_policy: UNIT_POLICY,
    dimensions: { bits: 'coefficient times sqrt(bits) over 256', data: 'units per KiB', time: 'units per ms' },
    priority_multipliers: { standard: 1, priority: 2, critical: 4 },
  };
}

export function buildManifest(node: NodeInfo, site: SiteInfo): Record<string, unknown> {
  return {
    format: VERSIONS.manifestFormat,
    discovery_version: VERSIONS.discovery,
    api_version: VERSIONS.api,
    gateway_version: VERSIONS.gateway,
    mcp_server_version: VERSIONS.mcpServer,
    client_kit_version: VERSIONS.clientKit,
    core_protocol: VERSIONS.coreProtocol,
    base_url: site.base_url, path_prefix: VERSIONS.pathPrefix,
    edge: {
      host: site.edge_host,
      port: site.edge_port,
      transport: 'TLS 1.3 over TCP, dual-stack',
      alpn: VERSIONS.coreProtocol,
      cert_sha256: node.edge_cert_sha256,
    },
    node: {
      node_id: node.node_id, key_id: node.key_id, alg: node.alg, public_key: node.public_key, keys: node.keys,
    },
    capability_count: VERSIONS.capabilityCount,
    capabilities: CAPABILITIES,
    kernels: {
      url: site.base_url + publicRoute('kernelsWasm').path, media_type: publicRoute('kernelsWasm').type,
      sha256: kernelWasmSha256(), abi_version: ABI_VERSION,
      package: '@svc/kit: @svc/kit/kernels, @svc/kit/verify (docs/embedding.md)',
    },
    commands: COMMANDS.map((c) => ({
      name: c.name,
      group: c.group,
      access: c.access,
      http: c.http ? `${c.http.method} ${c.http.path}` : null,
      cli: c.cli.length ? c.cli : null,
      billing: c.billing,
      auth: c.auth,
      rate_class: c.rateClass,
      execution: c.execution,
      purpose: c.purpose,
    })),
    pricing: pricing(),
    payment: {
      settlement: 'crypto only',
      automated_rails: ['USDT/TRON', 'USDC/Base', 'USDC/Solana', 'USDT/Solana'],
      reserved_rails: [],
      wallets: Object.fromEntries(RAIL_KEYS.map((k) => [k, site.wallets[k] ?? '<WALLET_ADDRESS>'])),
    },
    policy: POLICY,
    limits: publishedLimits(site),
    documents: Object.fromEntries(Object.entries(DOCUMENT_PATHS).map(([k, p]) => [k, site.base_url + p])),
    discovery_hash_note: 'the manifest hash (SHA-256 of these bytes) is an unsigned public liveness value,'
      + ' not authentication, payment or authorization',
  };
}

/** The manifest's exact bytes: pretty JSON with a final newline (what the DNS TXT hash covers). */
export function manifestBytes(node: NodeInfo, site: SiteInfo): Buffer {
  return Buffer.from(JSON.stringify(buildManifest(node, site), null, 2) + '\n', 'utf8');
}

export function manifestHash(node: NodeInfo, site: SiteInfo): string {
  return sha256Hex(manifestBytes(node, site));
}

/** The manifest as flat key=value lines (nested keys joined with dots, arrays comma-joined). */
export function manifestKv(node: NodeInfo, site: SiteInfo): string {
  const out: string[] = [];
  // an array item: a command (or anything named) by its name, other objects as JSON, scalars as text
  const itemText = (x: unknown) =>
    (typeof x === 'object' && x !== null ? (x as { name?: string }).name ?? JSON.stringify(x) : String(x));
  const walk = (prefix: string, v: unknown) => {
    if (Array.isArray(v)) {
      out.push(`${prefix}=${v.map(itemText).join(',')}`);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) walk(prefix ? `${prefix}.${k}` : k, x);
    } else {
      out.push(`${prefix}=${String(v)}`);
    }
  };
  walk('', buildManifest(node, site));
  out.push(`manifest_sha256=${manifestHash(node, site)}`);
  return out.join('\n') + '\n';
}

export function pricebookPointer(site: SiteInfo): Record<string, unknown> {
  const text = pricebookText();
  return {
    format: VERSIONS.pricebookPointerFormat,
    price_book: PRICE_BOOK,
    price_version: PRICE_VERSION,
    quote_terms_version: QUOTE_TERMS_VERSION,
    url: site.base_url + DOCUMENT_PATHS.pricebook_text,
    sha256: sha256Hex(text),
    media_type: publicRoute('pricebookText').type,
  };
}

export function serviceCatalog(site: SiteInfo): Record<string, unknown> {
  return {
    format: 'svc_service_catalog_v1', price_version: PRICE_VERSION,
    services: SERVICES.map((s) => {
      const c = commandSpec(s.command)!;
      return {
        service: s.service, command: s.command, purpose: c.purpose, group: c.group,
        quote: {
          method: 'POST',
          url: `${site.base_url}/api/v1/quotes/${s.service}`,
          billing: s.quoteBilling,
          binds_input: s.quoteInput,
        },
        execute: {
          method: 'POST',
          url: `${site.base_url}${c.http!.path}`,
          billing: c.billing,
          auth: c.auth,
          input: s.execInput,
          ...('auxInput' in s ? { aux_input: s.auxInput } : {}),
        },
        cli: { quote: `quote-${s.service}`, execute: s.service },
        example_price: examplePrice(s.service),
      };
    }),
  };
}

export function nodeDocument(node: NodeInfo, site: SiteInfo): Record<string, unknown> {
  return {
    format: 'svc_node_v1',
    ...node,
    edge: `${site.edge_host}:${site.edge_port}`,
    core_protocol: VERSIONS.coreProtocol,
    base_url: site.base_url,
    role: 'core+gateway',
  };
}

export function nodesDocument(node: NodeInfo, site: SiteInfo): Record<string, unknown> {
  return { format: 'svc_nodes_v1', nodes: [nodeDocument(node, site)] };
}

export function networkDocument(site: SiteInfo): Record<string, unknown> {
  return {
    format: 'svc_network_v1', base_url: site.base_url,
    edge: {
      host: site.edge_host,
      port: site.edge_port,
      ip_versions: ['IPv4', 'IPv6'],
      transport: 'TLS 1.3',
      alpn: VERSIONS.coreProtocol,
    },
    backend: 'loopback TCP over IPv4 only (not public)',
  };
}

export function bootstrapDocument(node: NodeInfo, site: SiteInfo): Record<string, unknown> {
  return {
    format: 'svc_bootstrap_v1',
    steps: [
      {
        step: 1,
        what: 'create a funding invoice and pay it',
        http: 'POST /api/v1/invoices',
        cli: 'fund-account',
        note: 'the first invoice for a machine_id returns its machine token once; send it as Authorization: Bearer',
      },
      { step: 2, what: 'create a quote', http: 'POST /api/v1/quotes/{service}', cli: 'quote-<service>' },
      { step: 3, what: 'accept the quote', http: 'POST /api/v1/quotes/{quote_id}/accept', cli: 'accept-quote' },
      {
        step: 4,
        what: 'call the execution with the accepted quote_id',
        http: 'POST /api/v1/executions/{service}',
        cli: '<service>',
      },
      { step: 5, what: 'verify the receipt for free', http: 'POST /api/v1/receipts/verify', cli: 'verify-receipt' },
    ],
    try_first: {
      sandbox: site.base_url + publicRoute('sandboxQuote').path, openapi: site.base_url + DOCUMENT_PATHS.openapi,
    },
    edge: { host: site.edge_host, port: site.edge_port, pin_sha256: node.edge_cert_sha256 },
    node_public_key: node.public_key,
    // every signing key with its window: what verifies receipts and pulses from before a key rotation
    node_keys: node.keys,
  };
}

/**
 * The agent card. `x402`: the node's x402 (PAYMENT_INFO's), null when off; a node with it on also names the
 * per-request payment among its authentication schemes and says where to pay (the card is no part of the
 * manifest, so it may follow the running node's settings).
 */
export function agentCard(node: NodeInfo, site: SiteInfo, x402: X402Info | null = null): Record<string, unknown> {
  const paid = x402 ? x402Card(x402, site) : null;
  return {
    name: 'svc',
    description: 'Metered computation-and-proof service: verifiable randomness (GET_PULSE), sealed tokens,'
      + ' attestations, timestamps, Merkle event logs and a bounded VM, with signed receipts that verify offline.',
    url: site.base_url, version: VERSIONS.gateway, provider: { organization: 'svc operator', url: site.base_url },
    documentationUrl: site.base_url + '/docs',
    capabilities: { streaming: false, pushNotifications: false },
    defaultInputModes: ['application/json'], defaultOutputModes: ['application/json'],
    skills: SERVICES.map((s) => ({
      id: s.service,
      name: s.command,
      description: commandSpec(s.command)!.purpose,
      tags: ['paid', s.service],
    })),
    interfaces: {
      openapi: site.base_url + DOCUMENT_PATHS.openapi,
      llms: site.base_url + DOCUMENT_PATHS.llms,
      core: `svc/1 over TLS at ${site.edge_host}:${site.edge_port}`,
    },
    authentication: {
      schemes: paid ? ['bearer', 'x402'] : ['bearer'],
      note: 'machine token from the first funding invoice;'
        + (paid ? ' or, on the paid executions, an x402 payment per request instead (docs/x402.md);' : '')
        + ' discovery, quotes, receipt verification and the sandbox need none',
    },
    ...(paid ? { payments: { x402: paid } } : {}),
    node: { node_id: node.node_id, public_key: node.public_key },
  };
}

/** What an x402 client needs to pay here, and where the rest is: PAYMENT_INFO's x402 as the card shows it. */
function x402Card(x: X402Info, site: SiteInfo): Record<string, unknown> {
  return {
    x402_version: x.x402_version, scheme: x.scheme,
    networks: x.networks.map((n) => ({ network: n.network, asset: n.asset, pay_to: n.pay_to })),
    headers: x.headers,
    paid_executions: x.paid_executions.map((p) => site.base_url + p),
    mcp_tools: MCP_PAID_TOOL_NAMES,
    details: site.base_url + publicRoute('apiPayment').path,
  };
}

/**
 * Every published document by its manifest key, and every other discovery route (aliases included) by
 * route id.
 */
export function wellKnownIndex(site: SiteInfo): Record<string, unknown> {
  const others = PUBLIC_ROUTES.filter((r) => r.method === 'GET' && r.tag === 'Discovery' && !r.doc);
  return {
    format: 'svc_well_known_index_v1',
    documents: Object.fromEntries(Object.entries(DOCUMENT_PATHS).map(([k, p]) => [k, site.base_url + p])),
    routes: Object.fromEntries(others.map((r) => [
      r.id, { url: site.base_url + r.path, type: r.type, purpose: r.purpose },
    ])),
  };
}

export function hostMetaJson(site: SiteInfo): Record<string, unknown> {
  // each link's type is the media type its route is really served with
  const link = (rel: string, routeId: string) => {
    const r = publicRoute(routeId);
    return { rel, type: r.type, href: site.base_url + r.path };
  };
  const lrdd = publicRoute('webfinger');
  return {
    links: [
      link('service-desc', 'openapi'),
      link('describedby', 'manifest'),
      { rel: 'lrdd', type: lrdd.type, template: `${site.base_url}${lrdd.path}?resource={uri}` },
    ],
  };
}

/** Text for HTML and XML (element content and double-quoted attributes). */
export const escapeMarkup = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function hostMetaXml(site: SiteInfo): string {
  const target = (l: { href?: string; template?: string }) =>
    (l.href ? `href="${escapeMarkup(l.href)}"` : `template="${escapeMarkup(l.template!)}"`);
  const links = (hostMetaJson(site).links as { rel: string; type: string; href?: string; template?: string }[])
    .map((l) => `  <Link rel="${escapeMarkup(l.rel)}" type="${escapeMarkup(l.type)}" ${target(l)}/>`).join('\n');
  return '<?xml version="1.0" encoding="UTF-8"?>\n'
    + `<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">\n${links}\n</XRD>\n`;
}

/** RFC 7033 JRD for a resource; null when the resource is not ours. */
export function webfinger(resource: string, node: NodeInfo, site: SiteInfo): Record<string, unknown> | null {
  const host = new URL(site.base_url).host;
  const ours = [site.base_url, `${site.base_url}/`, `acct:svc@${host}`, `acct:${node.node_id}@${host}`];
  if (!ours.includes(resource)) return null;
  return {
    subject: resource,
    aliases: [site.base_url],
    properties: { 'https://svc/ns/node_id': node.node_id, 'https://svc/ns/public_key': node.public_key },
    links: (hostMetaJson(site).links as Record<string, unknown>[]).filter((l) => l.href),
  };
}

export function llmsTxt(site: SiteInfo): string {
  const b = site.base_url;
  const mcp = publicRoute('mcp');
  const sbx = (routeId: string) => publicRoute(routeId).path;
  const lines = [
    '# svc',
    '',
    '> Metered computation-and-proof service. Discovery, quotes (limited), receipt verification and an anonymous'
      + ' sandbox are free; executions are paid from an account funded with stablecoin invoices (USDT/TRON,'
      + ' USDC/Base, USDC/Solana, USDT/Solana). Every execution returns a signed receipt that verifies offline.',
    '',
    `Core protocol: svc/1 (line-delimited JSON over TLS 1.3, ALPN svc/1) at ${site.edge_host}:${site.edge_port}.`
      + ` HTTP/JSON gateway: ${b}${VERSIONS.pathPrefix} (API ${VERSIONS.api}).`,
    '',
    '## Start here',
    `- [OpenAPI description](${b}${DOCUMENT_PATHS.openapi}): every route, schema and error`
      + ` ([rendered for people](${b}${publicRoute('pageReference').path}))`,
    `- [Manifest](${b}${DOCUMENT_PATHS.manifest}): capabilities (${VERSIONS.capabilityCount}), node key,`
      + ' edge certificate, pricing, limits',
    `- [Service catalog](${b}${DOCUMENT_PATHS.service_catalog})`
      + ` and [pricebook](${b}${DOCUMENT_PATHS.pricebook_text})`,
    `- [Agent guide](${b}${publicRoute('pageForAgents').path})`
      + ` and [bootstrap steps](${b}${DOCUMENT_PATHS.bootstrap})`,
    `- MCP: POST ${b}${mcp.path}: ${mcp.purpose}`,
    `- [Verifier](${b}${publicRoute('pageVerify').path}): checks a receipt, pulse or proof in a browser, offline`,
    '',
    '## Documents',
    ...PUBLIC_ROUTES.filter((r) => r.doc).map((r) => `- [${r.purpose}](${b}${r.path}): ${r.type.split(';')[0]}`),
    '',
    '## Paid flow',
    '1. POST /api/v1/invoices {machine_id, units, network, asset}: pay amount_due to pay_to;'
      + ' the first invoice returns machine_token once (send it as Authorization: Bearer).',
    '2. POST /api/v1/quotes/{service} {machine_id, ...}: free quote with quote_units and expires_at.',
    '3. POST /api/v1/quotes/{quote_id}/accept {machine_id}: reserves the units.',
    '4. POST /api/v1/executions/{service} {machine_id, quote_id, ...}:'
      + ' runs, charges, returns receipt_id and result_tag.',
    '5. POST /api/v1/receipts/verify {machine_id, receipt_id}: free; returns the signed receipt.',
    '',
    ...x402Lines(site),
    '',
    '## Services',
    ...SERVICES.map((s) => `- ${s.service} (${s.command}): ${commandSpec(s.command)!.purpose}`),
    '',
    '## Free sandbox (no account)',
    `POST ${b}${sbx('sandboxQuote')} {} → POST ${b}${sbx('sandboxAccept')} {machine_id}`
      + ` → POST ${b}${sbx('sandboxExecute')} {machine_id, quote_id} → POST ${b}${sbx('sandboxVerify')}.`
      + ` Limits: bits ≤ ${SANDBOX_LIMITS.maxBits}, max_output ≤ ${SANDBOX_LIMITS.maxOutputBytes},`
      + ` quotes live ${SANDBOX_LIMITS.ttlSeconds} s.`,
    '',
    '## Errors',
    'Every failure is {"ok":false,"request_id","error":{"code","message","source"}}; 400 invalid request,'
      + ' 401 token, 402 payment required (x402 nodes), 404 not found, 409 invalid state, 422 idempotency key reused,'
      + ' 429 rate limited (Retry-After), 502 core edge unavailable.',
    '',
    'svcC is an internal accounting reference unit (1.00 USD reference), not a token, currency or redeemable asset'
      + ` (${UNIT_POLICY}).`,
  ];
  return lines.join('\n') + '\n';
}

/** An execution's path with its service as a parameter, from the registry: /api/v1/executions/{service}. */
export function executionPathPattern(): string {
  const s = SERVICES[0];
  return commandSpec(s.command)!.http!.path.replace(s.service, '{service}');
}

/**
 * llms.txt's x402 section: the same text on every node (llms.txt is a function of the site alone), so it
 * says where to look whether this node takes x402 rather than assuming it.
 */
function x402Lines(site: SiteInfo): string[] {
  const payment = `${site.base_url}${publicRoute('apiPayment').path}`;
  return [
    '## Paying per request (x402)',
    `Only where GET ${payment} shows \`x402\` non-null (its networks, asset, payee); elsewhere pay from a funded`
      + ' account as above. No invoice and no accept: each execution is paid on its own (x402 v2, scheme exact,'
      + ' EIP-3009 on EVM, a co-signed transfer on Solana), for its quote\'s price rounded up to a whole token unit.',
    `1. POST ${commandSpec('QUOTE')!.http!.path} {machine_id, ...}: the free quote.`,
    `2. POST ${executionPathPattern()} {machine_id, quote_id, ...} without a token: 402 payment_required, with`
      + ` the ${PAYMENT_REQUIRED_HEADER} header (base64 JSON of x402 PaymentRequired; the same object is in`
      + ' error.details.payment_required).',
    `3. Pay with an x402 v2 client: the same request again with ${PAYMENT_SIGNATURE_HEADER} (base64 JSON of`
      + ' PaymentPayload); the node settles the payment on chain itself.',
    `4. 200 with ${PAYMENT_RESPONSE_HEADER} (the settlement: transaction, network, payer); the result's \`payment\``
      + ' and the signed receipt name the payment.',
    'A machine_id claimed by a machine token needs that token (401 without it): pay under a machine_id of your own.'
      + ` MCP: the ${MCP_PAID_TOOL_NAMES[0]}, … tools (listed where x402 is on) take the payment in`
      + ' _meta["x402/payment"] and answer its settlement in _meta["x402/payment-response"].',
  ];
}

export function robotsTxt(site: SiteInfo): string {
  return 'User-agent: *\nAllow: /\nDisallow: /api/v1/executions/\nDisallow: /api/v1/invoices\n'
    + `Sitemap: ${site.base_url}/sitemap.xml\n`;
}

export function sitemapXml(site: SiteInfo): string {
  const urls = PUBLIC_ROUTES.filter((r) => r.sitemap)
    .map((r) => `  <url><loc>${escapeMarkup(site.base_url + r.path)}</loc></url>`).join('\n');
  return '<?xml version="1.0" encoding="UTF-8"?>\n'
    + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls}\n</urlset>\n`;
}

export function webManifest(): Record<string, unknown> {
  return {
    name: 'svc — metered computation and proof',
    short_name: 'svc',
    start_url: '/',
    display: 'standalone',
    background_color: '#ffffff',
    theme_color: '#1d3557',
    icons: [],
  };
}

export { pricebookText };
