// The HTML pages (SPEC "Landing and documentation pages"): server-rendered from the registry, the
// pricing model and the node facts — no client-side script, so they read the same to people,
// crawlers and agents (the one exception is /reference, which mounts the Redoc bundle the gateway
// serves on openapi.json). One small stylesheet inline; every page links the others. Nothing may
// scroll the page sideways at phone width: tables sit in their own scroll box, code wraps.
import { moduleFile } from '../package-root.ts';
import { MAX_LINE } from '../protocol/line-codec.ts';
import { COMMANDS, commandSpec } from '../protocol/registry.ts';
import {
  COSTS, MULTIPLIERS, PRICE_BOOK, PRICE_VERSION, QUOTE_TERMS_VERSION, REFERENCE_VALUE_USD_PER_SVCC, UNIT_POLICY,
  UNIT_SCALE, UNITS_PER_KIB, UNITS_PER_MS, examplePrice,
} from '../protocol/pricing.ts';
import { SANDBOX_LIMITS } from '../protocol/sandbox.ts';
import { MCP_PAID_TOOL_NAMES, SERVICES } from '../protocol/services.ts';
import { VERSIONS } from '../protocol/versions.ts';
import { PAYMENT_REQUIRED_HEADER, PAYMENT_RESPONSE_HEADER, PAYMENT_SIGNATURE_HEADER } from '../protocol/x402.ts';
import { POLICY, escapeMarkup, executionPathPattern } from './documents.ts';
import type { NodeInfo, SiteInfo } from './node-info.ts';
import { DOCUMENT_PATHS, NAV, PUBLIC_ROUTES, WELL_KNOWN, publicRoute } from './routes.ts';

const esc = (s: unknown) => escapeMarkup(String(s));
const num = (n: number | bigint) => n.toLocaleString('en-US');
const path = (routeId: string) => publicRoute(routeId).path;

const ICON = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E"
  + "%3Crect width='16' height='16' rx='3' fill='%231d3557'/%3E%3C/svg%3E";
// the frame every page has: header, navigation, footer
const FRAME_STYLE = [
  'body{font:16px/1.55 system-ui,sans-serif;max-width:60rem;margin:0 auto;padding:0 1rem 3rem;color:#1b1f23}',
  'body.wide{max-width:none;padding:0 0 3rem}'
    + 'body.wide>header,body.wide>footer,body.wide>main>h1,body.wide>main>.intro{padding:0 1rem}',
  'header{display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:baseline;'
    + 'border-bottom:1px solid #d0d7de;padding:1rem 0}',
  'header strong{font-size:1.2rem;margin-right:1rem}',
  'nav a{margin-right:.8rem;white-space:nowrap}a{color:#0550ae}a[aria-current]{font-weight:600;color:#1b1f23}',
  'footer{margin-top:3rem;font-size:.85rem;color:#57606a;overflow-wrap:anywhere}',
].join('\n');
// the server-rendered content (not applied on /reference, where Redoc styles its own tables and code)
const CONTENT_STYLE = [
  '.scroll{overflow-x:auto;margin:1rem 0}',
  'table{border-collapse:collapse;width:100%;font-size:.92rem}table.many{min-width:44rem}'
    + 'th,td{border:1px solid #d0d7de;padding:.35rem .5rem;text-align:left;vertical-align:top}',
  'th{background:#f6f8fa}code,pre{font:14px ui-monospace,monospace;background:#f6f8fa}',
  // code in prose, hashes and long links wrap anywhere; other code in a table keeps its words
  // (paths break at <wbr>), so a narrow table scrolls in its box rather than split names
  'code,td a,td code.hash{overflow-wrap:anywhere}td code{overflow-wrap:normal}',
  'pre{padding:.8rem;overflow-x:auto}pre.wrap{white-space:pre-wrap}',
  '.ok{color:#1a7f37}.bad{color:#cf222e}',
].join('\n');

interface Page {
  path: string;
  /** the <title>, and the page's <h1> unless it has a heading of its own */
  title: string;
  heading?: string;
  /** the page's own <meta name="description">: what a search result or a link preview shows */
  description: string;
  /** full-width, frame styles only, and this markup at the end of <body> (the API reference) */
  app?: { tail: string };
}

function layout(page: Page, body: string): string {
  const current = (href: string) => (href === page.path ? ' aria-current="page"' : '');
  const nav = NAV.map(([href, label]) => `<a href="${href}"${current(href)}>${label}</a>`).join(' ');
  const footer = `svc gateway ${VERSIONS.gateway} · API ${VERSIONS.api} · core protocol ${VERSIONS.coreProtocol}`
    + ` · <a href="${DOCUMENT_PATHS.openapi}">openapi.json</a> · <a href="${DOCUMENT_PATHS.llms}">llms.txt</a>`
    + ` · <a href="${WELL_KNOWN}/">/.well-known/svc/</a>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(page.title)} — svc</title>
<meta name="description" content="${esc(page.description)}">
<link rel="manifest" href="/site.webmanifest">
<link rel="icon" href="${ICON}">
<link rel="alternate" type="application/json" href="${DOCUMENT_PATHS.openapi}" title="OpenAPI">
<link rel="alternate" type="text/plain" href="${DOCUMENT_PATHS.llms}" title="llms.txt">
<style>
${page.app ? FRAME_STYLE : `${FRAME_STYLE}\n${CONTENT_STYLE}`}
</style>
</head>
<body${page.app ? ' class="wide"' : ''}>
<header><strong>svc</strong><nav>${nav}</nav></header>
<main>
<h1>${esc(page.heading ?? page.title)}</h1>
${body}
</main>
<footer>${footer}</footer>
${page.app?.tail ?? ''}</body>
</html>
`;
}

const tableRow = (r: unknown[]) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`;
/**
 * A table in its own horizontal scroll box (focusable, so a keyboard can scroll it); four columns
 * or more keep a readable minimum width and scroll inside the box on a phone rather than crush.
 */
const table = (label: string, head: string[], rows: unknown[][]) =>
  `<div class="scroll" role="region" aria-label="${esc(label)}" tabindex="0">`
  + `<table${head.length >= 4 ? ' class="many"' : ''}>`
  + `<thead><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr></thead>`
  + `<tbody>${rows.map(tableRow).join('')}</tbody></table></div>`;
const code = (s: unknown) => `<code>${esc(s)}</code>`;
/** A hash or an opaque id: in a table cell too, it may wrap at any character. */
const hash = (s: unknown) => `<code class="hash">${esc(s)}</code>`;
/** A route or media type in code that may break after each slash (and nowhere else). */
const pathCode = (s: string) => `<code>${esc(s).replaceAll('/', '/<wbr>')}</code>`;

/**
 * Where an agent or a developer starts beyond HTTP: the MCP endpoint and the embedding kit. One
 * section, shown on /, /docs and /for-agents.
 */
function mcpAndKit(site: SiteInfo): string {
  return `<h2 id="mcp-and-embedding">MCP and the embedding kit</h2>
<p><strong>MCP.</strong> ${code(`POST ${site.base_url}${path('mcp')}`)} is a stateless MCP server (Streamable HTTP,
JSON responses) with the free tools: greeting, capabilities, pricebook, quotes, receipt verification and a sandbox
pulse. It needs no account: add its URL to an MCP client as a remote server. Where x402 is on, it also lists paid
execution tools (${code(MCP_PAID_TOOL_NAMES[0])}, …), paid per call as in
<a href="${path('pageForAgents')}#x402">paying per request</a>,
the payment in ${code('_meta["x402/payment"]')}.
<a href="${path('mcpMetadata')}">${path('mcpMetadata')}</a> lists its tools and protocol versions.</p>
<p><strong>Embedding kit.</strong> To recompute or check results inside your own program, import the
${code('@svc/kit')} package's ${code('@svc/kit/kernels')} (the WebAssembly proof kernels) and
${code('@svc/kit/verify')} (offline verification) entry points; the guide is ${code('docs/embedding.md')} in the
svc repository. Every HTTP operation is in the
<a href="${path('pageReference')}">API reference</a> and <a href="${DOCUMENT_PATHS.openapi}">openapi.json</a>.</p>`;
}

/** The landing page's policy table, in words (the keys are the manifest's). */
const POLICY_LABELS: Record<keyof typeof POLICY, string> = {
  discovery: 'Discovery documents',
  receipt_verification: 'Receipt verification',
  quote_generation: 'Quotes',
  sandbox: 'Sandbox',
  integration: 'Integration',
  real_execution: 'Executions',
  anonymous_real_execution: 'Executions without an account',
  execution_requires_account_balance: 'Executions need a funded account',
  commercial_tiers: 'Commercial tiers',
  settlement: 'Settlement',
};

export function landingPage(node: NodeInfo, site: SiteInfo): string {
  const intro = '<p>svc runs small, verifiable computations — randomness with a published commitment chain, sealed'
    + ' tokens, attestations, timestamps, Merkle event logs and a bounded VM — and returns a signed receipt for each,'
    + ' which anyone can check offline.</p>';
  const steps = '<ol><li>Create a funding invoice and pay it (USDT on TRON, USDC on Base, USDC or USDT on Solana).</li>'
    + '<li>Create a quote for the service you want (free).</li><li>Accept the quote.</li>'
    + `<li>Call the execution with the accepted ${code('quote_id')}.</li><li>Verify the receipt, for free.</li></ol>`;
  const tryIt = '<p>Try it without an account in the <a href="/for-agents#sandbox">sandbox</a>,'
    + ` read the <a href="/docs">API documentation</a> or the <a href="${path('pageReference')}">API reference</a>,`
    + ` or point your agent at <a href="${DOCUMENT_PATHS.llms}">llms.txt</a> or the <a href="#mcp-and-embedding">MCP`
    + ' endpoint</a>.</p>';
  const services = SERVICES.map((s) => [
    code(s.service), code(s.command), esc(commandSpec(s.command)!.purpose),
  ]);
  const where = `<p>Node ${code(node.node_id)} · edge ${code(`${site.edge_host}:${site.edge_port}`)}`
    + ` (${VERSIONS.coreProtocol} over TLS).</p>`;
  const policy = Object.entries(POLICY).map(([k, v]) => [esc(POLICY_LABELS[k as keyof typeof POLICY]), esc(v)]);
  return layout({
    path: '/', title: 'Metered computation and proof',
    description: 'svc runs small verifiable computations — randomness, sealed tokens, attestations, timestamps,'
      + ' event logs, a bounded VM — and returns a signed receipt for each that anyone can check offline.',
  }, `${intro}
${table('What is free and what is paid', ['Activity', 'Policy'], policy)}
<h2>How a paid execution works</h2>
${steps}
${tryIt}
<h2>Services</h2>
${table('Services', ['Service', 'Command', 'What it does'], services)}
${mcpAndKit(site)}
${where}`);
}

const ERROR_ROWS = [
  ['400', 'invalid request (the message names the field)'],
  ['401', 'missing or wrong machine token (WWW-Authenticate: Bearer)'],
  ['404', 'not found'],
  ['405', 'method not allowed (see Allow)'],
  ['409', 'invalid state, for example an expired quote'],
  ['413', 'request body too large'],
  ['422', 'idempotency key reused with another body'],
  ['429', 'rate limited (Retry-After, RateLimit headers)'],
  ['502', 'the core edge is unavailable or rejected the call'],
  ['503', 'the sandbox is busy; retry later'],
];

export function docsPage(site: SiteInfo): string {
  const byId = new Map(PUBLIC_ROUTES.map((r) => [r.id, r]));
  const otherRoutes = PUBLIC_ROUTES.map((r) => [
    pathCode(`${r.method} ${r.path}`), pathCode(r.type.split(';')[0]!), code(r.billing),
    esc(r.purpose) + (r.aliasOf ? ` (same as ${code(byId.get(r.aliasOf)!.path)})` : ''),
  ]);
  const rows = COMMANDS.map((c) => [
    code(c.name),
    c.http ? pathCode(`${c.http.method} ${c.http.path}`) : 'not public over HTTP',
    c.cli.length ? code(c.cli.length > 1 ? 'quote-<service>' : c.cli[0]) : '—',
    [c.auth, c.billing, c.rateClass].map(code).join(' · '),
    esc(c.purpose),
  ]);
  const intro = `<p>Base URL ${code(site.base_url + VERSIONS.pathPrefix)}, API ${code(VERSIONS.api)}.`
    + ` Every request and response body is JSON. Successful responses carry ${code('{ok: true, request_id, source}')};`
    + ` errors are ${code('{ok: false, request_id, error: {code, message, source}}')}.`
    + ` The full description is <a href="${DOCUMENT_PATHS.openapi}">openapi.json</a>; the`
    + ` <a href="${path('pageReference')}">API reference</a> renders it with every schema and example.</p>`;
  const auth = `<p>The first funding invoice for a ${code('machine_id')} returns its machine token once;`
    + ` send it as ${code('Authorization: Bearer svcm_…')} on accepts, invoices, balance and executions.`
    + ' Discovery, quotes, receipt verification and the sandbox need no token.</p>';
  const head = ['Command', 'HTTP', 'CLI', 'Auth · billing · rate class', 'Purpose'];
  return layout({
    path: '/docs', title: 'API documentation',
    description: 'The svc HTTP API: base URL, every command with its route, CLI form, authentication, billing and'
      + ' rate class; errors, idempotency, and every other public route.',
  }, `${intro}
<h2>Commands</h2>
${table('Commands', head, rows)}
<h2>Authentication</h2>
${auth}
<h2>Errors</h2>
${table('Error statuses', ['Status', 'Meaning'], ERROR_ROWS)}
<p>Idempotency: send ${code('Idempotency-Key')} (or ${code('idempotency_key')}) on quotes, accepts and invoices;
a repeat with the same body is replayed with ${code('Idempotent-Replayed: true')}.</p>
${mcpAndKit(site)}
<h2>Pages, documents, sandbox and MCP</h2>
${table('Other routes', ['Route', 'Returns', 'Billing', 'Purpose'], otherRoutes)}`);
}

/** The interactive API reference: Redoc, from the gateway's own copy of the bundle, on openapi.json. */
export function referencePage(): string {
  const theme = {
    typography: {
      fontFamily: 'system-ui, sans-serif', headings: { fontFamily: 'system-ui, sans-serif' },
      code: { fontFamily: 'ui-monospace, monospace' },
    },
    colors: { primary: { main: '#1d3557' } },
  };
  const intro = '<div class="intro">'
    + `<p>Every HTTP operation of this gateway, rendered in your browser from <a href="${DOCUMENT_PATHS.openapi}">`
    + 'openapi.json</a> by Redoc, which this gateway serves itself. The <a href="/docs">API documentation</a> lists'
    + ' the same routes as plain tables.</p>'
    + '<noscript><p>This page needs JavaScript; <a href="/docs">the API documentation</a> does not.</p></noscript>'
    + '</div>';
  return layout({
    path: path('pageReference'), title: 'API reference',
    description: 'Interactive reference of the svc HTTP API, rendered from openapi.json: every operation with its'
      + ' parameters, request and response schemas, status codes and examples.',
    app: { tail: `<script src="${path('assetRedoc')}"></script>\n` },
  }, `${intro}
<redoc spec-url="${DOCUMENT_PATHS.openapi}" theme="${esc(JSON.stringify(theme))}"></redoc>`);
}

export function protocolPage(node: NodeInfo, site: SiteInfo): string {
  const intro = `<p>The core speaks ${code(VERSIONS.coreProtocol)}: one UTF-8 JSON object per line over TLS 1.3`
    + ` (ALPN ${code('svc/1')}) at ${code(`${site.edge_host}:${site.edge_port}`)}, IPv4 and IPv6.`
    + ' The HTTP gateway is a facade over the same commands.</p>';
  const commands = COMMANDS.map((c) => [code(c.name), esc(c.access), esc(c.purpose)]);
  return layout({
    path: '/protocol', title: `The ${VERSIONS.coreProtocol} protocol`,
    description: 'The svc/1 core protocol: one JSON object per line over TLS 1.3 (ALPN svc/1), pipelined'
      + ' requests, machine tokens, certificate pinning and every command.',
  }, `${intro}
<pre>{"v":"svc/1","id":7,"cmd":"QUOTE","args":{"service":"get-pulse","machine_id":"m1","bits":256}}
{"id":7,"ok":true,"result":{"quote_id":"q1…","quote_units":23125,…}}</pre>
<ul><li>Lines are at most ${MAX_LINE / (1 << 20)} MiB; requests may be pipelined and replies come back by ${code('id')},
possibly out of order.</li><li>The machine token goes in ${code('auth.token')}.</li>
<li>Pin the edge certificate by its SHA-256: ${code(node.edge_cert_sha256)}.</li>
<li>The public client kit: ${code('svc hello')}, ${code('svc caps')}, ${code('svc quote-get-pulse')}, …
(${COMMANDS.filter((c) => c.cli.length).length} command forms).</li></ul>
<h2>Commands</h2>
${table('Commands', ['Command', 'Access', 'Purpose'], commands)}`);
}

export function agentsPage(site: SiteInfo): string {
  const entryPoints = `<p>Machine-readable entry points: <a href="${DOCUMENT_PATHS.llms}">llms.txt</a>,`
    + ` <a href="${DOCUMENT_PATHS.openapi}">openapi.json</a>,`
    + ` <a href="${DOCUMENT_PATHS.agent_card}">agent card</a>,`
    + ` <a href="${DOCUMENT_PATHS.manifest}">manifest</a>,`
    + ` <a href="${DOCUMENT_PATHS.bootstrap}">bootstrap steps</a>,`
    + ` and the <a href="#mcp-and-embedding">MCP endpoint</a>.</p>`;
  const limits = `<p>${code('GET_PULSE')} only, no account, no settlement:`
    + ` ${code('bits')} ≤ ${SANDBOX_LIMITS.maxBits}, ${code('max_output')} ≤ ${SANDBOX_LIMITS.maxOutputBytes},`
    + ` quotes live ${SANDBOX_LIMITS.ttlSeconds} s.</p>`;
  const json = "-H 'content-type: application/json'";
  const sandbox = `${esc(site.base_url)}/api/v1/sandbox`;
  const curl = [
    `curl -X POST ${sandbox}/quotes/get-pulse ${json} -d '{}'`,
    `curl -X POST ${sandbox}/quotes/QUOTE_ID/accept ${json} -d '{"machine_id":"sandbox_machine"}'`,
    `curl -X POST ${sandbox}/executions/get-pulse ${json} -d '{"machine_id":"sandbox_machine","quote_id":"QUOTE_ID"}'`,
  ].join('\n');
  const paid = `<ol><li>${code('POST /api/v1/invoices')} — keep the ${code('machine_token')} it returns once.</li>`
    + `<li>${code('POST /api/v1/quotes/{service}')}, then ${code('POST /api/v1/quotes/{quote_id}/accept')}.</li>`
    + `<li>${code('POST /api/v1/executions/{service}')} with ${code('Authorization: Bearer')}.</li>`
    + `<li>${code('POST /api/v1/receipts/verify')} (free).</li></ol>`;
  const x402 = x402Section();
  const retry = '<p>Retry safely: quotes, accepts and invoices take an idempotency key; repeating an execution with'
    + ' the same request returns the stored result and never charges twice.</p>';
  return layout({
    path: '/for-agents', title: 'For agents', heading: 'Integrating an agent',
    description: 'How an AI agent uses svc: llms.txt, OpenAPI and the agent card, the MCP endpoint, the free'
      + ' anonymous sandbox with curl examples, and the paid call sequence.',
  }, `${entryPoints}
<h2 id="sandbox">Sandbox (free, anonymous)</h2>
${limits}
<pre>${curl}</pre>
<h2>Paid calls</h2>
${paid}
${retry}
${x402}
${mcpAndKit(site)}`);
}

/** /for-agents' x402 section: the same on every node (the page is a function of the site), so it says where to look. */
function x402Section(): string {
  const payment = path('apiPayment');
  const steps = [
    `${code(`POST ${commandSpec('QUOTE')!.http!.path}`)}: the free quote.`,
    `${code(`POST ${executionPathPattern()}`)} with the ${code('quote_id')} and no token: ${code('402')}`
      + ` ${code('payment_required')} with a ${code(PAYMENT_REQUIRED_HEADER)} header, base64 JSON of the x402`
      + ' PaymentRequired (the amount: the quote\'s price, rounded up to a whole token unit).',
    `Pay with an x402 version 2 client: the same request again with ${code(PAYMENT_SIGNATURE_HEADER)}`
      + ' (base64 JSON of the PaymentPayload). The node settles it on chain itself.',
    `${code('200')} with ${code(PAYMENT_RESPONSE_HEADER)} (transaction, network, payer); the result's`
      + ` ${code('payment')} and the signed receipt name the payment.`,
  ];
  return `<h2 id="x402">Paying per request (x402)</h2>
<p>Where <a href="${payment}">${code(`GET ${payment}`)}</a> shows ${code('x402')} other than ${code('null')},
an execution can be paid on its own with <a href="https://www.x402.org/">x402</a> (version 2, scheme
${code('exact')}, EIP-3009 on EVM, a transfer the node co-signs on Solana): no invoice, no accept.</p>
<ol>${steps.map((x) => `<li>${x}</li>`).join('')}</ol>
<p>A ${code('machine_id')} claimed by a machine token needs that token (${code('401')} without it): pay under a
${code('machine_id')} of your own. Paying from a funded account, as above, works on every node
(<a href="${DOCUMENT_PATHS.openapi}">openapi.json</a> has both).</p>`;
}

export function pricingPage(): string {
  const rows = SERVICES.map((s) => {
    const p = examplePrice(s.service);
    return [
      code(s.service),
      code(s.quoteBilling),
      num(COSTS[s.service].coef_bits),
      num(p.bits),
      num(p.input_bytes),
      num(p.estimated_ms),
      num(p.quote_units),
      `$${esc(p.usd_estimate)}`,
    ];
  });
  const multipliers = Object.entries(MULTIPLIERS).map(([k, v]) => `${k} ${v}×`).join(', ');
  const intro = `<p>Prices come from the price book ${code(PRICE_BOOK)} (price version ${code(PRICE_VERSION)},`
    + ` quote terms version ${code(QUOTE_TERMS_VERSION)}). They are counted in units of svcC, an internal accounting`
    + ` reference unit: ${num(UNIT_SCALE)} units make one svcC, whose reference value is`
    + ` ${esc(REFERENCE_VALUE_USD_PER_SVCC)} USD. svcC is only a reference for quotes: it has no parity with any`
    + ' currency, is not backed by any asset, not redeemable and earns no yield'
    + ` (unit policy ${code(UNIT_POLICY)}). Settlement is in crypto only.</p>`;
  const formula = '<p>The units of a quote:</p>'
    + `<pre class="wrap">quote_units = (ceil(coef_bits × √bits / 256) + ${UNITS_PER_KIB} × ceil(bytes / 1024)`
    + ` + ${UNITS_PER_MS} × estimated_ms) × multiplier</pre>`
    + `<p>${code('coef_bits')} is the service's bits coefficient (below), ${code('bytes')} the input size and`
    + ` ${code('estimated_ms')} the service's time estimate for that input; the multiplier is the priority class's`
    + ` (${multipliers}), and a quote asking for ${code('"priority": "high"')} is priced in the priority class.</p>`;
  const head = ['Service', 'Quote billing', 'Bits coefficient', 'Example bits', 'Input bytes', 'Est. ms',
    code('quote_units'), 'USD estimate'];
  const links = `<p>Every coefficient, machine-readable: <a href="${DOCUMENT_PATHS.pricebook_text}">pricebook`
    + ` (text)</a> and its <a href="${DOCUMENT_PATHS.pricebook_pointer}">pointer with the SHA-256</a>.</p>`;
  return layout({
    path: '/pricing', title: 'Pricing',
    description: 'svc pricing: the price book, how a quote\'s units follow from bits, input size and estimated time,'
      + ' and an example price for every service in units and US dollars.',
  }, `${intro}
${formula}
${table('Example prices', head, rows)}
${links}`);
}

/** Labels for the status document's edge facts (`pool.threads` is the key path); others are spelled out. */
const EDGE_LABELS: Record<string, string> = {
  version: 'Core version',
  node_id: 'Node',
  'pool.threads': 'Kernel worker threads',
  'pool.in_flight': 'Kernel jobs in flight',
  'pulse.chain_id': 'Pulse chain',
  'pulse.latest_index': 'Latest pulse index',
  reason: 'Reason',
};
const spelled = (key: string) => {
  const words = key.replace(/[._]+/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** Every scalar of a nested object as [key path, value], in document order. */
function facts(v: Record<string, unknown>, prefix = ''): [string, string][] {
  return Object.entries(v).flatMap(([k, x]): [string, string][] => {
    const key = prefix + k;
    if (x !== null && typeof x === 'object' && !Array.isArray(x)) return facts(x as Record<string, unknown>, `${key}.`);
    return [[key, Array.isArray(x) ? x.join(', ') : String(x)]];
  });
}

/** The status snapshot as a table: one row per fact the core's HEALTH reports (SPEC /status). */
export function statusPage(edge: Record<string, unknown>, time: string): string {
  const state = (ok: boolean, text: string) => `<span class="${ok ? 'ok' : 'bad'}">${esc(text)}</span>`;
  const { status, ...details } = edge;
  const rows: unknown[][] = [
    ['Gateway', `${state(true, 'ok')}, version ${esc(VERSIONS.gateway)}`],
    ['Core edge', status === 'ok' ? state(true, 'ok') : state(false, `${String(status)}: the gateway cannot reach it`)],
    ...facts(details).map(([k, v]) => [esc(EDGE_LABELS[k] ?? spelled(k)), /_id$/.test(k) ? hash(v) : esc(v)]),
    ['Checked at', esc(time)],
  ];
  const machine = `<p>Machine-readable: <a href="${DOCUMENT_PATHS.status}">status.json</a>,`
    + ' <a href="/api/v1/status">/api/v1/status</a>.</p>';
  return layout({
    path: '/status', title: 'Status',
    description: 'Live status of this svc node: the HTTP gateway and the core edge, with the node id, the kernel'
      + ' worker pool and the pulse chain.',
  }, `${table('Status', ['What', 'Value'], rows)}
${machine}`);
}

export function trustPage(node: NodeInfo, manifestSha256: string): string {
  const receipts = '<p>Every execution returns a receipt: RFC 8785 canonical JSON signed with the key above.'
    + ` ${code('POST /api/v1/receipts/verify')} re-checks it for free;`
    + ' you can also check it offline with any Ed25519 library.</p>';
  const pulses = '<p>GET_PULSE outputs are committed before they exist: each pulse publishes SHA-256 of the next'
    + " period's seed and reveals the previous one, so once a period ends anyone can recompute an output"
    + ` (${code('svc verify-pulse')}). Timestamps and machine event logs come with RFC 6962 inclusion proofs`
    + ` under C2SP signed checkpoints (${code('svc verify-log')}).</p>`;
  const dns = '<p>The manifest hash is published in DNS as a TXT record; it is a public liveness value,'
    + ' not authentication, payment or authorization.</p>';
  // after a key rotation, what was signed before verifies with the retired key of its time
  const keys = table('Signing keys (old receipts, pulses and checkpoints verify with the key they name)',
    ['Key id', 'Public key (Ed25519, raw, base64url)', 'Valid from', 'Valid until', 'Status'],
    node.keys.map((k) => [hash(k.key_id), hash(k.public_key), esc(k.valid_from ?? 'first start'),
      esc(k.valid_until ?? '—'), esc(k.status)]));
  return layout({
    path: '/trust', title: 'Trust and verification',
    description: 'How to check svc without trusting it: the node\'s Ed25519 signing key, edge certificate and'
      + ' manifest hashes, signed receipts, committed pulses and transparency-log proofs.',
  }, `${table('Keys and hashes', ['What', 'Value'], [
    ['Node', hash(node.node_id)],
    ['Signing key (Ed25519, raw, base64url)', hash(node.public_key)],
    ['Key id', hash(node.key_id)],
    ['Edge certificate SHA-256', hash(node.edge_cert_sha256)],
    ['Manifest SHA-256', hash(manifestSha256)],
  ])}
${keys}
${receipts}
${pulses}
<p>Check a receipt, a pulse or a proof in your browser, offline once loaded: <a href="${path('pageVerify')}">the
verifier</a>.</p>
${dns}`);
}

// the verifier's form: boxes as wide as the page, a drop zone, the verdict and its checks
const VERIFY_STYLE = 'textarea{box-sizing:border-box;width:100%;font:14px ui-monospace,monospace}'
  + 'label{display:block;font-weight:600;margin:.8rem 0 .3rem}#drop{border:2px dashed #8c959f;padding:1rem;'
  + 'margin:.6rem 0;border-radius:6px}#drop.over{background:#ddf4ff}#drop label{display:inline;font-weight:400}'
  + 'button{font:inherit;padding:.4rem 1.2rem;margin:.4rem 0}.verdict{font-size:1.15rem;font-weight:600}'
  + 'ul.checks{padding-left:1.2rem;overflow-wrap:anywhere}#keys-table table{min-width:0}';

/** The browser entry the gateway bundles for /verify (src/gateway/verify-bundle.ts). */
export const VERIFY_BROWSER_ENTRY: URL = new URL(`./${moduleFile('verify-browser')}`, import.meta.url);

/**
 * The offline verifier: markup only; the bundled kit (`scriptSrc`, same origin) fills it in, loads
 * the kernels and the manifest's key set once, then checks what is pasted, dropped or chosen.
 */
export function verifyPage(scriptSrc: string): string {
  const intro = '<p>Paste, drop or choose a signed receipt, a signed pulse (or two consecutive ones), a timestamp'
    + ' proof, a machine event log proof or an attestation, as the API and the command line return them. It is'
    + ` checked here, in your browser, by the same embedding kit (${code('@svc/kit/verify')}) the command line runs:`
    + ' once this page has loaded, nothing you check is sent anywhere.</p>';
  const form = `<label for="doc">Receipt, pulse or proof (JSON)</label>
<textarea id="doc" rows="10" spellcheck="false" autocomplete="off"></textarea>
<div id="drop"><label for="file">Drop a file here, or choose one:</label>
<input id="file" type="file" accept=".json,.txt,application/json,text/plain"></div>
<button id="check" type="button">Verify</button>
<section id="result" aria-live="polite" aria-label="Verdict"></section>`;
  const keys = `<h2>Trusted keys</h2>
<p id="keys-status">Loading this node's key set from its manifest…</p>
<div id="keys-table" class="scroll" role="region" aria-label="Trusted signing keys" tabindex="0"></div>
<label for="keys">Trusted keys (a key set as the manifest publishes it, nodes.json, or one raw public key)</label>
<textarea id="keys" rows="6" spellcheck="false" autocomplete="off"></textarea>
<p>Where the keys come from: <a href="/trust">the trust page</a>, <a href="${DOCUMENT_PATHS.manifest}">the manifest</a>
and <a href="${DOCUMENT_PATHS.nodes}">nodes.json</a>. Keys taken from the material itself would prove only that it is
self-consistent.</p>`;
  return layout({
    path: path('pageVerify'), title: 'Verify a receipt, pulse or proof',
    description: 'Check a signed svc receipt, pulse, timestamp or log proof in your browser with the embedding kit:'
      + ' valid or invalid, every check and the reason, offline once the page has loaded.',
  }, `<style>${VERIFY_STYLE}</style>
${intro}
<noscript><p>This page needs JavaScript; ${code('svc verify-pulse')} and ${code('svc verify-log')} do the same on
the command line.</p></noscript>
<div id="verifier" data-wasm="${path('kernelsWasm')}" data-manifest="${DOCUMENT_PATHS.manifest}">
${form}
</div>
${keys}
<script type="module" src="${esc(scriptSrc)}"></script>`);
}

export function wellKnownHtml(site: SiteInfo): string {
  // WebFinger needs a resource: link the query for this site itself
  const href = (k: string, p: string) =>
    (k === 'webfinger' ? `${p}?resource=${encodeURIComponent(site.base_url)}` : p);
  const routes = PUBLIC_ROUTES.filter((r) => r.method === 'GET' && r.tag === 'Discovery');
  const links = routes.map((r) => {
    const url = esc(href(r.doc ?? r.id, r.path));
    return [esc(r.purpose), `<a href="${url}">${url}</a>`, pathCode(r.type.split(';')[0]!)];
  });
  return layout({
    path: `${WELL_KNOWN}/`, title: 'Discovery index',
    description: 'Index of the machine-readable documents this svc node publishes: manifest, OpenAPI, agent card,'
      + ' MCP metadata, pricebook, node and network metadata.',
  }, `<p>Documents published by ${esc(site.base_url)}.</p>${table('Documents', ['Document', 'Path', 'Type'], links)}`);
}
