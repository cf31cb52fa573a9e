// Discovery: openapi.json is a valid OpenAPI 3.1 document whose schemas all compile under JSON
// Schema 2020-12 and which covers exactly the contract's HTTP surface; every well-known document is
// served with its type, ETag and caching; the manifest hash is the same everywhere it is published.
import test from 'ava';
import { createHash } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Svcd, runBin, BIN } from '../support/svcd.ts';
import { buildOpenApi } from '../../src/discovery/openapi.ts';
import { agentCard } from '../../src/discovery/documents.ts';
import { COMMANDS, commandSpec, isPaidExecution } from '../../src/protocol/registry.ts';
import { MCP_PAID_TOOL_NAMES } from '../../src/protocol/services.ts';
import { decodePayment } from '../../src/protocol/x402.ts';
import { sharedSvcd } from '../support/start-svcd.ts';

const s = sharedSvcd(test, { SVC_RATE_PUBLIC_LOW: '10000/60', SVC_BASE_URL: 'https://svc.example.test' });
let base: string;
test.before(() => { base = s.ready.http!; });

test('openapi.json: valid OpenAPI 3.1, every schema compiles (2020-12),'
  + ' exactly the contract\'s HTTP surface', async (t) => {
  const doc = buildOpenApi({
    base_url: 'https://svc.example.test', edge_host: 'svc.example.test', edge_port: 9443, wallets: {},
  });
  await t.notThrowsAsync(SwaggerParser.validate(structuredClone(doc) as never));
  const ajv = new Ajv2020({ strict: false });
  const components = (doc.components as { schemas: Record<string, object> }).schemas;
  for (const [name, schema] of Object.entries(components)) ajv.addSchema(schema, `#/components/schemas/${name}`);
  for (const name of Object.keys(components)) {
    t.notThrows(() => ajv.compile({ $ref: `#/components/schemas/${name}` }), name);
  }
  const paths = doc.paths as Record<string, Record<string, any>>;
  const want = COMMANDS.filter((c) => c.http && c.name !== 'QUOTE')
    .map((c) => `${c.http!.method.toLowerCase()} ${c.http!.path}`);
  for (const w of want) { const [m, p] = w.split(' '); t.truthy(paths[p!]?.[m!], w); }
  t.is(Object.keys(paths).filter((p) => p.startsWith('/api/v1/quotes/') && !p.includes('{')).length, 10);
  t.is(Object.keys(paths).filter((p) => p.startsWith('/api/v1/executions/')).length, 10);
  t.is(Object.keys(paths).filter((p) => p.startsWith('/api/v1/sandbox/')).length, 4);
  const ops = Object.values(paths).flatMap((p) => Object.values(p));
  t.false(ops.some((o) => ['SETTLE_INVOICE', 'RECOVER_RUNTIME', 'GET_RECEIPT'].includes(o['x-svc-command'])));
  for (const o of ops) {
    t.true(typeof o['x-svc-billing'] === 'string' && typeof o['x-svc-rate-class'] === 'string'
      && typeof o['x-svc-execution'] === 'boolean', o.operationId);
  }
  t.is(new Set(ops.map((o) => o.operationId)).size, ops.length, 'operationIds are unique');
  const served = await (await fetch(`${base}/openapi.json`)).json() as any;
  t.is(served.servers[0].url, 'https://svc.example.test');
  t.is(served.info.version, 'v1.0.5');
});

test('openapi.json: x-svc-billing on each quote route is the contract\'s (free_limited_quote on seven of ten)', (t) => {
  const site = { base_url: 'https://svc.example.test', edge_host: 'svc.example.test', edge_port: 9443, wallets: {} };
  const doc = buildOpenApi(site);
  const paths = doc.paths as Record<string, Record<string, any>>;
  // SPEC "Public API", typed from the contract's table rather than read from the registry
  const contract: Record<string, string> = {
    'get-pulse': 'free_limited', 'make-bct': 'free_limited', 'verify-bct': 'free_limited',
    'verify-result': 'free_limited_quote', 'attest-event': 'free_limited_quote', 'submit-id': 'free_limited_quote',
    'bvm-exec': 'free_limited_quote', 'sealed-message': 'free_limited_quote', 'timestamp-proof': 'free_limited_quote',
    'machine-event-log': 'free_limited_quote',
  };
  for (const [svc, billing] of Object.entries(contract)) {
    t.is(paths[`/api/v1/quotes/${svc}`]?.post?.['x-svc-billing'], billing, svc);
  }
  t.is(paths['/mcp']?.post?.['x-svc-billing'], 'free_limited');
  for (const p of ['/', '/docs', '/llms.txt', '/.well-known/svc/svc_public_manifest.json']) {
    t.is(paths[p]?.get?.['x-svc-billing'], 'free', p);
  }
});

test('openapi.json: x402 on the paid executions and nowhere else (402, PAYMENT-* headers, a second scheme)', (t) => {
  const doc = buildOpenApi({
    base_url: 'https://svc.example.test', edge_host: 'svc.example.test', edge_port: 9443, wallets: {},
  }) as any;
  const deref = (x: any): any =>
    (x?.$ref ? deref(x.$ref.split('/').slice(1).reduce((o: any, k: string) => o[k], doc)) : x);
  let paid = 0;
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(ops)) {
      const at = `${method.toUpperCase()} ${path}`;
      // SPEC "Paid executions": the ten POST /api/v1/executions/<service>, and only those (not the sandbox's)
      const isPaid = method === 'post' && path.startsWith('/api/v1/executions/');
      paid += isPaid ? 1 : 0;
      t.is('402' in op.responses, isPaid, `${at}: 402`);
      const params = (op.parameters ?? []).map(deref).map((p: any) => `${p.in} ${p.name}`);
      t.is(params.includes('header PAYMENT-SIGNATURE'), isPaid, `${at}: PAYMENT-SIGNATURE`);
      const ok = deref(op.responses['200']);
      t.is(Object.hasOwn(ok?.headers ?? {}, 'PAYMENT-RESPONSE'), isPaid, `${at}: PAYMENT-RESPONSE on 200`);
      const schemes = (op.security ?? []).flatMap((r: object) => Object.keys(r));
      t.is(schemes.includes('x402'), isPaid, `${at}: the x402 scheme`);
      if (!isPaid) continue;
      // either the machine token or the payment; everything else as the contract has it
      t.deepEqual(op.security, [{ bearerAuth: [] }, { x402: [] }], at);
      t.like(op, { 'x-svc-billing': commandSpec(op['x-svc-command'])!.billing, 'x-svc-auth': 'required' });
      for (const status of ['200', '400', '409', '502']) t.truthy(op.responses[status], `${at}: ${status}`);
      const r402 = deref(op.responses['402']);
      t.deepEqual(Object.keys(r402.content), ['application/json']);
      t.is(r402.content['application/json'].schema.$ref, '#/components/schemas/ApiError');
      t.true(deref(r402.headers['PAYMENT-REQUIRED']).required, `${at}: every 402 here carries PAYMENT-REQUIRED`);
      t.deepEqual(Object.keys(r402.content['application/json'].examples).sort(),
        ['payment_failed', 'payment_invalid', 'payment_required']);
    }
  }
  t.is(paid, 10);
  t.like(doc.components.securitySchemes.x402, { type: 'apiKey', in: 'header', name: 'PAYMENT-SIGNATURE' });
  t.regex(doc.components.securitySchemes.x402.description, /GET \/api\/v1\/payment.*x402.*docs\/x402\.md/s);
  // the recorded examples decode to what x402 clients read
  const decode = (b64: string) => JSON.parse(Buffer.from(b64, 'base64').toString('utf8'));
  t.like(decode(doc.components.headers.PaymentRequired.example), { x402Version: 2, accepts: [{ scheme: 'exact' }] });
  t.like(decode(doc.components.headers.PaymentResponse.example), { success: true });
  const signature = doc.components.parameters.PaymentSignature.example;
  t.like(decodePayment(signature), { x402Version: 2, accepted: { scheme: 'exact' } }, 'a payment the node reads');
});

test('agent card: x402 among its schemes, with where and how to pay, only from a node that has it on', (t) => {
  const site = { base_url: 'https://svc.example.test', edge_host: 'svc.example.test', edge_port: 9443, wallets: {} };
  const node = {
    node_id: 'svc-node-1', key_id: 'k1', alg: 'Ed25519' as const, public_key: 'pk', keys: [], edge_cert_sha256: 'ec',
  };
  const off = agentCard(node, site) as any;
  t.deepEqual(off.authentication.schemes, ['bearer']);
  t.false('payments' in off);
  const paths = COMMANDS.filter(isPaidExecution).map((c) => c.http!.path);
  const x402 = {
    x402_version: 2, scheme: 'exact', max_timeout_seconds: 120,
    networks: [{ network: 'eip155:8453', asset: '0xa', pay_to: '0xb', settlement: { by: 'node relayer' } }],
    headers: { payment: 'PAYMENT-SIGNATURE', required: 'PAYMENT-REQUIRED', response: 'PAYMENT-RESPONSE' },
    paid_executions: paths,
  };
  const on = agentCard(node, site, x402) as any;
  t.deepEqual(on.authentication.schemes, ['bearer', 'x402']);
  t.like(on.payments.x402, { scheme: 'exact', details: 'https://svc.example.test/api/v1/payment' });
  t.deepEqual(on.payments.x402.networks, [{ network: 'eip155:8453', asset: '0xa', pay_to: '0xb' }]);
  t.deepEqual(on.payments.x402.paid_executions, paths.map((p) => `https://svc.example.test${p}`));
  t.deepEqual(on.payments.x402.mcp_tools, [...MCP_PAID_TOOL_NAMES]);
  const rest = ({ payments: _p, authentication: _a, ...others }: any) => others;
  t.deepEqual(rest(on), rest(off), 'nothing else differs');
});

test('well-known documents: status, type, ETag and 304, CORS where conventional', async (t) => {
  const docs: [string, RegExp][] = [
    ['/openapi.json', /json/], ['/.well-known/openapi.json', /json/], ['/.well-known/svc/openapi.json', /json/],
    ['/llms.txt', /text\/plain/], ['/robots.txt', /text\/plain/], ['/sitemap.xml', /xml/],
    ['/site.webmanifest', /manifest\+json/], ['/.well-known/', /json/],
    ['/.well-known/host-meta', /xrd\+xml/], ['/.well-known/host-meta.json', /json/],
    ['/.well-known/agent-card.json', /json/], ['/.well-known/agent.json', /json/],
    ['/.well-known/svc/svc_public_manifest.json', /json/], ['/.well-known/svc/svc_public_manifest.kv', /text\/plain/],
    ['/.well-known/svc/status.json', /json/], ['/.well-known/svc/bootstrap.json', /json/],
    ['/.well-known/svc/pricebook.json', /json/], ['/.well-known/svc/svc_service_catalog.json', /json/],
    ['/.well-known/svc/svc_pricebook_public.txt', /text\/plain/], ['/.well-known/svc/nodes.json', /json/],
    ['/.well-known/svc/node.json', /json/],
    ['/.well-known/svc/network.json', /json/], ['/api/v1/manifest', /json/], ['/api/v1/pricebook', /json/],
  ];
  for (const [path, type] of docs) {
    const r = await fetch(base + path);
    const body = await r.text();
    t.is(r.status, 200, path);
    t.regex(r.headers.get('content-type') ?? '', type, path);
    t.true(body.length > 20, path);
    const etag = r.headers.get('etag');
    t.regex(etag ?? '', /^"[0-9a-f]{32}"$/, path);
    t.regex(r.headers.get('cache-control') ?? '', /max-age=\d+/, path);
    t.is(r.headers.get('access-control-allow-origin'), '*', `${path}: CORS`);
    if (!path.endsWith('status.json')) {
      const again = await fetch(base + path, { headers: { 'if-none-match': etag! } });
      t.is(again.status, 304, `${path} revalidates`);
    }
  }
  const wf = await fetch(`${base}/.well-known/webfinger?resource=${encodeURIComponent('https://svc.example.test')}`);
  t.deepEqual(
    [wf.status, wf.headers.get('access-control-allow-origin'), wf.headers.get('content-type')],
    [200, '*', 'application/jrd+json'],
  );
  t.is(((await wf.json()) as any).subject, 'https://svc.example.test');
  const noResource = await fetch(`${base}/.well-known/webfinger`);
  t.deepEqual([noResource.status, noResource.headers.get('access-control-allow-origin')], [400, '*'],
    'errors carry CORS too: browser clients read them (RFC 7033)');
  const mcp = ['/.well-known/mcp', '/.well-known/mcp.json', '/.well-known/svc/mcp.json'];
  for (const p of [...mcp, '/.well-known/WebFinger?resource=x', '/llms.txt/']) {
    t.is((await fetch(base + p)).headers.get('access-control-allow-origin'), '*', p);
  }
  for (const p of ['/', '/docs', '/trust']) {
    t.is((await fetch(base + p)).headers.get('access-control-allow-origin'), null, `${p}: a page, no CORS`);
  }
  t.is((await fetch(`${base}/.well-known/webfinger?resource=acct:nobody@elsewhere`)).status, 404);
});

test('the manifest hash is the SHA-256 of the served bytes, in /api/v1/discovery, in the .kv,'
  + ' and from `svcd manifest`', async (t) => {
  const bytes = Buffer.from(await (await fetch(`${base}/.well-known/svc/svc_public_manifest.json`)).arrayBuffer());
  const hash = createHash('sha256').update(bytes).digest('hex');
  const m = JSON.parse(bytes.toString('utf8'));
  t.is(m.format, 'svc_public_discovery_v1');
  t.is(m.capability_count, 21);
  t.is(m.capabilities.length, 21);
  t.is(m.edge.cert_sha256, s.ready.edge_cert_sha256);
  // published numbers are the running node's: the edge port svcd listens on (the harness picks a free one)
  t.deepEqual([m.edge.port, m.limits.core_edge_port], [s.edgePort, s.edgePort]);
  t.deepEqual(Object.keys(m.payment.wallets).sort(), ['USDC_BASE', 'USDC_SOLANA', 'USDT_SOLANA', 'USDT_TRON']);
  const disc = await (await fetch(`${base}/api/v1/discovery`)).json() as any;
  t.is(disc.manifest_sha256, hash);
  const kv = await (await fetch(`${base}/.well-known/svc/svc_public_manifest.kv`)).text();
  t.true(kv.includes(`manifest_sha256=${hash}`));
  const env = { SVC_DATA_DIR: s.dataDir, SVC_BASE_URL: 'https://svc.example.test' };
  const cli = await runBin(BIN.svcd, ['manifest'], { ...env, SVC_EDGE_PORT: String(s.edgePort) });
  t.is(cli.code, 0, cli.stderr);
  t.regex(cli.stdout, new RegExp(`sha256:\\s+${hash}`));
  t.regex(cli.stdout, /TXT "v=svc_public_discovery_v1; sha256=[0-9a-f]{64}"/);
  const published = { ...env, SVC_EDGE_PORT: '0', SVC_PUBLIC_EDGE_PORT: `${s.edgePort}` };
  const pub = await runBin(BIN.svcd, ['manifest'], published);
  t.regex(pub.stdout, new RegExp(`sha256:\\s+${hash}`), 'SVC_PUBLIC_EDGE_PORT is what the manifest publishes');
  const unknown = await runBin(BIN.svcd, ['manifest'], { ...env, SVC_EDGE_PORT: '0', SVC_PUBLIC_EDGE_PORT: '' });
  t.is(unknown.code, 1, 'a port picked at start cannot be published ahead of time');
  t.regex(unknown.stderr, /SVC_PUBLIC_EDGE_PORT/);
  const ptr = await (await fetch(`${base}/api/v1/pricebook`)).json() as any;
  const text = await (await fetch(`${base}/.well-known/svc/svc_pricebook_public.txt`)).text();
  t.is(ptr.format, 'svc_pricebook_pointer_v1');
  t.is(ptr.sha256, createHash('sha256').update(text).digest('hex'));
  t.regex(text, /^price_book=competitive_v6$/m);
  t.regex(text, /^price_version=svcC_REF_USD_WORK_V6$/m);
  const llms = await (await fetch(`${base}/llms.txt`)).text();
  for (const svc of ['get-pulse', 'make-bct', 'bvm-exec', 'machine-event-log']) t.true(llms.includes(svc), svc);
});

test('SVC_PUBLIC_EDGE_PORT: every discovery document publishes the configured public edge port', async (t) => {
  const p = await Svcd.start({ SVC_PUBLIC_EDGE_PORT: '8443', SVC_BASE_URL: 'https://svc.example.test' }, ['start']);
  t.teardown(async () => { await p.stop(); p.cleanup(); });
  const get = async (path: string) => (await fetch(p.ready.http + path)).json() as Promise<any>;
  const m = await get('/.well-known/svc/svc_public_manifest.json');
  t.deepEqual([m.edge.host, m.edge.port, m.limits.core_edge_port], ['svc.example.test', 8443, 8443]);
  t.is((await get('/.well-known/svc/network.json')).edge.port, 8443);
  t.is((await get('/.well-known/svc/node.json')).edge, 'svc.example.test:8443');
  t.is((await get('/.well-known/svc/bootstrap.json')).edge.port, 8443);
  t.regex(await (await fetch(`${p.ready.http}/llms.txt`)).text(), /svc\.example\.test:8443/);
});
