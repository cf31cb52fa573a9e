// The HTML pages (SPEC "Landing and documentation pages"): server-rendered from the registry, the
// pricing model and the node facts — no client-side script, so they read the same to people,
// crawlers and agents. One small stylesheet inline; every page links the others.
import { MAX_LINE } from '../protocol/line-codec.ts';
import { COMMANDS, commandSpec } from '../protocol/registry.ts';
import {
  PRICE_BOOK, PRICE_VERSION, QUOTE_TERMS_VERSION, UNIT_POLICY, UNIT_SCALE, examplePrice,
} from '../protocol/pricing.ts';
import { SANDBOX_LIMITS } from '../protocol/sandbox.ts';
import { SERVICES } from '../protocol/services.ts';
import { VERSIONS } from '../protocol/versions.ts';
import { POLICY, escapeMarkup } from './documents.ts';
import type { NodeInfo, SiteInfo } from './node-info.ts';
import { DOCUMENT_PATHS, NAV, PUBLIC_ROUTES, WELL_KNOWN } from './routes.ts';

const esc = (s: unknown) => escapeMarkup(String(s));

const ICON = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E"
  + "%3Crect width='16' height='16' rx='3' fill='%231d3557'/%3E%3C/svg%3E";
const STYLE = [
  'body{font:16px/1.55 system-ui,sans-serif;max-width:60rem;margin:0 auto;padding:0 1rem 3rem;color:#1b1f23}',
  'header{display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:baseline;'
    + 'border-bottom:1px solid #d0d7de;padding:1rem 0}',
  'header strong{font-size:1.2rem;margin-right:1rem}',
  'nav a{margin-right:.8rem}a{color:#0550ae}a[aria-current]{font-weight:600;color:#1b1f23}',
  'table{border-collapse:collapse;width:100%;margin:1rem 0;font-size:.92rem}'
    + 'th,td{border:1px solid #d0d7de;padding:.35rem .5rem;text-align:left;vertical-align:top}',
  'th{background:#f6f8fa}code,pre{font:14px ui-monospace,monospace;background:#f6f8fa}pre{padding:.8rem;overflow:auto}',
  '.ok{color:#1a7f37}.bad{color:#cf222e}footer{margin-top:3rem;font-size:.85rem;color:#57606a}',
].join('\n');

function layout(path: string, title: string, body: string): string {
  const current = (href: string) => (href === path ? ' aria-current="page"' : '');
  const nav = NAV.map(([href, label]) => `<a href="${href}"${current(href)}>${label}</a>`).join(' ');
  const footer = `svc gateway ${VERSIONS.gateway} · API ${VERSIONS.api} · core protocol ${VERSIONS.coreProtocol}`
    + ` · <a href="${DOCUMENT_PATHS.openapi}">openapi.json</a> · <a href="${DOCUMENT_PATHS.llms}">llms.txt</a>`
    + ` · <a href="${WELL_KNOWN}/">/.well-known/svc/</a>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} — svc</title>
<link rel="manifest" href="/site.webmanifest">
<link rel="icon" href="${ICON}">
<link rel="alternate" type="application/json" href="${DOCUMENT_PATHS.openapi}" title="OpenAPI">
<link rel="alternate" type="text/plain" href="${DOCUMENT_PATHS.llms}" title="llms.txt">
<style>
${STYLE}
</style>
</head>
<body>
<header><strong>svc</strong><nav>${nav}</nav></header>
<main>
${body}
</main>
<footer>${footer}</footer>
</body>
</html>
`;
}

const tableRow = (r: unknown[]) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`;
const table = (head: string[], rows: unknown[][]) =>
  `<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>`
  + `<tbody>${rows.map(tableRow).join('')}</tbody></table>`;
const code = (s: unknown) => `<code>${esc(s)}</code>`;

export function landingPage(node: NodeInfo, site: SiteInfo): string {
  const intro = '<p>svc runs small, verifiable computations — randomness with a published commitment chain, sealed'
    + ' tokens, attestations, timestamps, Merkle event logs and a bounded VM — and returns a signed receipt for each,'
    + ' which anyone can check offline.</p>';
  const steps = '<ol><li>Create a funding invoice and pay it (USDT on TRON, USDC on Base, USDC or USDT on Solana).</li>'
    + '<li>Create a quote for the service you want (free).</li><li>Accept the quote.</li>'
    + `<li>Call the execution with the accepted ${code('quote_id')}.</li><li>Verify the receipt, for free.</li></ol>`;
  const tryIt = '<p>Try it without an account in the <a href="/for-agents#sandbox">sandbox</a>,'
    + ` read the <a href="/docs">API</a>, or point your agent at <a href="${DOCUMENT_PATHS.llms}">llms.txt</a>.</p>`;
  const services = SERVICES.map((s) => [
    code(s.service), code(s.command), esc(commandSpec(s.command)!.purpose),
  ]);
  const where = `<p>Node ${code(node.node_id)} · edge ${code(`${site.edge_host}:${site.edge_port}`)}`
    + ` (${VERSIONS.coreProtocol} over TLS).</p>`;
  return layout('/', 'Metered computation and proof', `
<h1>Metered computation and proof</h1>
${intro}
${table(['Activity', 'Policy'], Object.entries(POLICY).map(([k, v]) => [esc(k.replaceAll('_', ' ')), esc(v)]))}
<h2>How a paid execution works</h2>
${steps}
${tryIt}
<h2>Services</h2>
${table(['Service', 'Command', 'What it does'], services)}
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
  const otherRoutes = PUBLIC_ROUTES.map((r) => [
    code(`${r.method} ${r.path}`), code(r.type.split(';')[0]), esc(r.billing), esc(r.purpose),
  ]);
  const rows = COMMANDS.map((c) => [
    code(c.name),
    esc(c.group),
    c.http ? code(`${c.http.method} ${c.http.path}`) : 'not public over HTTP',
    c.cli.length ? code(c.cli.length > 1 ? 'quote-<service>' : c.cli[0]) : '—',
    esc(c.auth),
    esc(c.billing),
    esc(c.rateClass),
    esc(c.purpose),
  ]);
  const intro = `<p>Base URL ${code(site.base_url + VERSIONS.pathPrefix)}, API ${code(VERSIONS.api)}.`
    + ` Every request and response body is JSON. Successful responses carry ${code('{ok: true, request_id, source}')};`
    + ` errors are ${code('{ok: false, request_id, error: {code, message, source}}')}.`
    + ` The full description is <a href="${DOCUMENT_PATHS.openapi}">openapi.json</a>.</p>`;
  const auth = `<p>The first funding invoice for a ${code('machine_id')} returns its machine token once;`
    + ` send it as ${code('Authorization: Bearer svcm_…')} on accepts, invoices, balance and executions.`
    + ' Discovery, quotes, receipt verification and the sandbox need no token.</p>';
  return layout('/docs', 'API documentation', `
<h1>API documentation</h1>
${intro}
<h2>Commands</h2>
${table(['Command', 'Group', 'HTTP', 'CLI', 'Auth', 'Billing', 'Rate class', 'Purpose'], rows)}
<h2>Authentication</h2>
${auth}
<h2>Errors</h2>
${table(['Status', 'Meaning'], ERROR_ROWS)}
<p>Idempotency: send ${code('Idempotency-Key')} (or ${code('idempotency_key')}) on quotes, accepts and invoices;
a repeat with the same body is replayed with ${code('Idempotent-Replayed: true')}.</p>
<h2>Pages, documents, sandbox and MCP</h2>
${table(['Route', 'Returns', 'Billing', 'Purpose'], otherRoutes)}`);
}

export function protocolPage(node: NodeInfo, site: SiteInfo): string {
  const intro = `<p>The core speaks ${code(VERSIONS.coreProtocol)}: one UTF-8 JSON object per line over TLS 1.3`
    + ` (ALPN ${code('svc/1')}) at ${code(`${site.edge_host}:${site.edge_port}`)}, IPv4 and IPv6.`
    + ' The HTTP gateway is a facade over the same commands.</p>';
  return layout('/protocol', 'The svc/1 protocol', `
<h1>The ${VERSIONS.coreProtocol} protocol</h1>
${intro}
<pre>{"v":"svc/1","id":7,"cmd":"QUOTE","args":{"service":"get-pulse","machine_id":"m1","bits":256}}
{"id":7,"ok":true,"result":{"quote_id":"q1…","quote_units":23125,…}}</pre>
<ul><li>Lines are at most ${MAX_LINE / (1 << 20)} MiB; requests may be pipelined and replies come back by ${code('id')},
possibly out of order.</li><li>The machine token goes in ${code('auth.token')}.</li>
<li>Pin the edge certificate by its SHA-256: ${code(node.edge_cert_sha256)}.</li>
<li>The public client kit: ${code('svc hello')}, ${code('svc caps')}, ${code('svc quote-get-pulse')}, …
(${COMMANDS.filter((c) => c.cli.length).length} command forms).</li></ul>
<h2>Commands</h2>
${table(['Command', 'Access', 'Purpose'], COMMANDS.map((c) => [code(c.name), esc(c.access), esc(c.purpose)]))}`);
}

export function agentsPage(site: SiteInfo): string {
  const entryPoints = `<p>Machine-readable entry points: <a href="${DOCUMENT_PATHS.llms}">llms.txt</a>,`
    + ` <a href="${DOCUMENT_PATHS.openapi}">openapi.json</a>,`
    + ` <a href="${DOCUMENT_PATHS.agent_card}">agent card</a>,`
    + ` <a href="${DOCUMENT_PATHS.manifest}">manifest</a>,`
    + ` <a href="${DOCUMENT_PATHS.bootstrap}">bootstrap steps</a>.</p>`;
  const limits = `<p>GET_PULSE only, no account, no settlement: bits ≤ ${SANDBOX_LIMITS.maxBits},`
    + ` max_output ≤ ${SANDBOX_LIMITS.maxOutputBytes}, quotes live ${SANDBOX_LIMITS.ttlSeconds} s.</p>`;
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
  const retry = '<p>Retry safely: quotes, accepts and invoices take an idempotency key; repeating an execution with'
    + ' the same request returns the stored result and never charges twice.</p>';
  return layout('/for-agents', 'For agents', `
<h1>Integrating an agent</h1>
${entryPoints}
<h2 id="sandbox">Sandbox (free, anonymous)</h2>
${limits}
<pre>${curl}</pre>
<h2>Paid calls</h2>
${paid}
${retry}`);
}

export function pricingPage(): string {
  const rows = SERVICES.map((s) => {
    const p = examplePrice(s.service);
    return [
      code(s.service),
      esc(s.quoteBilling),
      esc(p.bits),
      esc(p.input_bytes),
      esc(p.estimated_ms),
      esc(p.quote_units),
      `$${esc(p.usd_estimate)}`,
    ];
  });
  const intro = `<p>Price book ${code(PRICE_BOOK)}, ${code(PRICE_VERSION)}, quote terms ${code(QUOTE_TERMS_VERSION)}.`
    + ` Prices are in svcC, an internal accounting reference unit: ${code(Number(UNIT_SCALE))} units per svcC,`
    + ` reference value 1.00 USD. ${esc(UNIT_POLICY.replaceAll('_', ' '))}. Settlement is crypto only.</p>`;
  const formula = '<p>quote_units = ceil(coef × √bits / 256) + units per KiB × ⌈bytes/1024⌉'
    + ' + units per ms × estimated ms, times the priority multiplier (standard 1×, priority 2×, critical 4×).</p>';
  const head = ['Service', 'Quote billing', 'Example bits', 'Input bytes', 'Est. ms', 'quote_units', 'USD estimate'];
  const links = `<p>The full coefficients: <a href="${DOCUMENT_PATHS.pricebook_text}">pricebook (text)</a>,`
    + ` <a href="${DOCUMENT_PATHS.pricebook_pointer}">pointer</a>.</p>`;
  return layout('/pricing', 'Pricing', `
<h1>Pricing</h1>
${intro}
${formula}
${table(head, rows)}
${links}`);
}

export function statusPage(edge: Record<string, unknown>): string {
  const ok = edge.status === 'ok';
  const edgeDetail = ok
    ? `node ${String(edge.node_id)}, pulse ${JSON.stringify(edge.pulse ?? {})}`
    : 'the gateway cannot reach the core';
  const machine = `<p>Machine-readable: <a href="${DOCUMENT_PATHS.status}">status.json</a>,`
    + ' <a href="/api/v1/status">/api/v1/status</a>.</p>';
  return layout('/status', 'Status', `
<h1>Status</h1>
${table(['Part', 'State', 'Detail'], [
    ['Gateway', '<span class="ok">ok</span>', esc(`version ${VERSIONS.gateway}`)],
    ['Core edge', ok ? '<span class="ok">ok</span>' : '<span class="bad">unavailable</span>', esc(edgeDetail)],
  ])}
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
  return layout('/trust', 'Trust and verification', `
<h1>Trust and verification</h1>
${table(['What', 'Value'], [
    ['Node', code(node.node_id)],
    ['Signing key (Ed25519, raw, base64url)', code(node.public_key)],
    ['Key id', code(node.key_id)],
    ['Edge certificate SHA-256', code(node.edge_cert_sha256)],
    ['Manifest SHA-256', code(manifestSha256)],
  ])}
${receipts}
${pulses}
${dns}`);
}

export function wellKnownHtml(site: SiteInfo): string {
  // WebFinger needs a resource: link the query for this site itself
  const href = (k: string, p: string) =>
    (k === 'webfinger' ? `${p}?resource=${encodeURIComponent(site.base_url)}` : p);
  const routes = PUBLIC_ROUTES.filter((r) => r.method === 'GET' && r.tag === 'Discovery');
  const links = routes.map((r) => {
    const url = esc(href(r.doc ?? r.id, r.path));
    return [esc(r.purpose), `<a href="${url}">${url}</a>`, code(r.type.split(';')[0])];
  });
  return layout(`${WELL_KNOWN}/`, 'Discovery index', `<h1>Discovery index</h1>
<p>Documents published by ${esc(site.base_url)}.</p>${table(['Document', 'Path', 'Type'], links)}`);
}
