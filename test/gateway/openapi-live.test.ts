// openapi.json against the live gateway, both ways: every route the Koa router registers is a
// documented operation and every documented operation is routed; every operation answers a valid
// request, and a bad one, with a documented status, media type, body schema (Ajv) and headers.
import test, { type ExecutionContext } from 'ava';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { pino } from 'pino';
import { Svcd, fundMachine } from '../support/svcd.ts';
import { createGateway } from '../../src/gateway/app.ts';
import { DEFAULT_RATES } from '../../src/protocol/rate-limit.ts';
import { svc1Caller } from '../../src/gateway/core-nodes.ts';
import { assemble } from '../../src/kernels/bvm-assembler.ts';

interface Op { id: string; method: string; path: string; spec: any }
interface Req {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  headers?: Record<string, string>;
}
interface Answer { status: number; body: any; headers: Headers }

let s: Svcd; // generous limits: valid requests and natural errors
let tight: Svcd; // one request per window: every rate-limited operation answers 429
let doc: any;
const ops = new Map<string, Op>();
const seen = new Map<string, Set<number>>();
const ajv = new Ajv2020({ strict: false });
const validators = new Map<string, ValidateFunction>();

test.before(async () => {
  const rates = { SVC_RATE_PUBLIC_LOW: '100000/60', SVC_RATE_PAID_EXECUTION: '100000/60' };
  [s, tight] = await Promise.all([
    Svcd.start(rates, ['start']),
    Svcd.start({ SVC_RATE_PUBLIC_LOW: '1/3600', SVC_RATE_PAID_EXECUTION: '1/3600' }, ['start']),
  ]);
  doc = await (await fetch(`${s.ready.http}/openapi.json`)).json();
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    ajv.addSchema(schema as object, `#/components/schemas/${name}`);
  }
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, spec] of Object.entries(methods)) {
      ops.set(spec.operationId, { id: spec.operationId, method: method.toUpperCase(), path, spec });
    }
  }
});
test.after.always(async () => {
  await Promise.all([s?.stop(), tight?.stop()]);
  s?.cleanup();
  tight?.cleanup();
});

const deref = (x: any) => (x?.$ref ? x.$ref.split('/').slice(1).reduce((o: any, k: string) => o[k], doc) : x);
const validator = (schema: unknown) => {
  const key = JSON.stringify(schema);
  if (!validators.has(key)) validators.set(key, ajv.compile(schema as object));
  return validators.get(key)!;
};
const sample = (path: string) => path.replace(/\{(\w+)\}/g, 'x_$1');

async function send(t: ExecutionContext, id: string, req: Req = {}, server: Svcd = s, raw?: string): Promise<Answer> {
  const op = ops.get(id);
  if (!op) throw new Error(`${id} is not documented`);
  const path = op.path.replace(/\{(\w+)\}/g, (_m, p: string) => encodeURIComponent(req.params?.[p] ?? `x_${p}`));
  const url = new URL(server.ready.http + path);
  for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
  const hasBody = raw !== undefined || req.body !== undefined;
  const res = await fetch(url, {
    method: op.method,
    headers: { ...(hasBody ? { 'content-type': 'application/json' } : {}), ...req.headers },
    ...(hasBody ? { body: raw ?? JSON.stringify(req.body) } : {}),
  });
  return answeredAsDocumented(t, op, res);
}

/** The response's status, media type, body and required headers are what the operation documents. */
async function answeredAsDocumented(t: ExecutionContext, op: Op, res: Response): Promise<Answer> {
  const text = await res.text();
  const where = `${op.method} ${op.path} → ${res.status}`;
  const spec = deref(op.spec.responses[String(res.status)]);
  if (!spec) t.fail(`${where} is not documented (${Object.keys(op.spec.responses).join(', ')}): ${text.slice(0, 300)}`);
  (seen.get(op.id) ?? seen.set(op.id, new Set()).get(op.id)!).add(res.status);
  let body: any = null;
  for (const [name, h] of Object.entries(spec?.headers ?? {})) {
    if (deref(h).required) t.truthy(res.headers.get(name), `${where}: header ${name}`);
  }
  if (!spec?.content) {
    t.is(text, '', `${where}: no body documented`);
    return { status: res.status, body, headers: res.headers };
  }
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const media = spec.content[type];
  t.truthy(media, `${where}: ${type} is not among ${Object.keys(spec.content).join(', ')}`);
  if (/^application\/([\w.-]+\+)?json$/.test(type)) {
    body = JSON.parse(text);
    const v = validator(media?.schema ?? {});
    t.true(v(body), `${where}: ${ajv.errorsText(v.errors)}: ${text.slice(0, 300)}`);
  } else {
    t.true(text.length > 0, `${where}: empty ${type}`);
    body = text;
  }
  return { status: res.status, body, headers: res.headers };
}

test('every route the live Koa router registers is documented, and every documented operation is routed', (t) => {
  const gw = createGateway({
    core: svc1Caller({ kind: 'tcp', host: '127.0.0.1', port: s.backendPort }), rates: DEFAULT_RATES,
    log: pino({ level: 'silent' }),
  });
  t.teardown(() => gw.close());
  const router = (gw.app.middleware as any[]).find((m) => m.router)?.router;
  t.truthy(router, 'the gateway mounts a @koa/router');
  const layers = (router.stack as any[]).filter((l) => l.methods.length);
  const documented = [...ops.values()];
  t.true(layers.length > 50, `${layers.length} routes read`);
  for (const l of layers) {
    for (const m of (l.methods as string[]).filter((x) => x !== 'HEAD')) {
      const isDocumented = documented.some((o) => o.method === m && l.match(sample(o.path)));
      t.true(isDocumented, `${m} ${l.path} is not in openapi.json`);
    }
  }
  for (const o of documented) {
    const isRouted = layers.some((l) => l.methods.includes(o.method) && l.match(sample(o.path)));
    t.true(isRouted, `${o.method} ${o.path} is not routed`);
  }
});

const hex = (b: Uint8Array | string) => Buffer.from(b).toString('hex');

test('every documented operation answers a valid request, and a bad one, as documented', async (t) => {
  const m = 'oa-live';
  const token = await fundMachine(s, m, 50);
  const auth = { authorization: `Bearer ${token}` };
  const ok = async (id: string, req: Req = {}) => {
    const r = await send(t, id, req);
    t.true(r.status < 400, `${id}: ${r.status} ${JSON.stringify(r.body)?.slice(0, 300)}`);
    const etag = r.headers.get('etag');
    if (etag && r.status === 200) await send(t, id, { ...req, headers: { ...req.headers, 'if-none-match': etag } });
    return r.body;
  };

  // the paid flow, one service at a time: quote → accept → execute → verify the receipt
  const invoice = { machine_id: m, units: 1, network: 'Base', asset: 'USDC' };
  const inv = await ok('fundAccount', { body: invoice, headers: auth });
  await ok('invoiceStatus', { params: { invoice_id: inv.invoice_id }, query: { machine_id: m }, headers: auth });
  await ok('balance', { body: { machine_id: m }, headers: auth });
  await ok('pulse', { params: { index: '0' } }); // also `latest`: test/kit/http.test.ts
  const run = async (service: string, quote: Record<string, unknown>, exec: Record<string, unknown>) => {
    const camel = service.replace(/-(\w)/g, (_x, c: string) => c.toUpperCase());
    const q = await ok(`quote${camel[0]!.toUpperCase()}${camel.slice(1)}`, { body: { machine_id: m, ...quote } });
    await ok('acceptQuote', { params: { quote_id: q.quote_id }, body: { machine_id: m }, headers: auth });
    return ok(camel, { body: { machine_id: m, quote_id: q.quote_id, ...exec }, headers: auth });
  };
  const pulse = await run('get-pulse', { bits: 256 }, {});
  const plain = hex('hi');
  const made = await run('make-bct', { plain_hex: plain }, { plain_hex: plain });
  await run('verify-bct', { packet_hex: made.packet_hex }, { packet_hex: made.packet_hex });
  const tag = hex(JSON.stringify({
    service: made.service, quote_id: made.quote_id, input_digest: made.input_digest, output_digest: made.output_digest,
    result_tag: made.result_tag,
  }));
  const sized = (h: string) => ({ bytes: h.length / 2 });
  await run('verify-result', sized(tag), { packet_hex: tag });
  const event = hex('{"door":"opened"}');
  await run('attest-event', sized(event), { plain_hex: event });
  await run('submit-id', sized(event), { plain_hex: event });
  const prog = hex(assemble('push8 42\nout8\nhalt').image);
  await run('bvm-exec', sized(prog), { plain_hex: prog });
  const recipient = hex(generateKeyPairSync('x25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
  await run('sealed-message', { bytes: 32 + 2 }, { plain_hex: plain, packet_hex: recipient });
  const digest = createHash('sha256').update('a contract').digest('hex');
  await run('timestamp-proof', sized(digest), { plain_hex: digest });
  const from = '2026-01-01T00:00:00Z';
  const summary = hex(JSON.stringify({ count: 1, head_hash: 'ab'.repeat(32), from, to: from }));
  await run('machine-event-log', sized(summary), { plain_hex: summary });
  await ok('verifyReceipt', { body: { machine_id: m, receipt_id: pulse.receipt_id } });
  await ok('hello', { query: { nonce: 'openapi-live-1' } });

  // the sandbox
  const sq = await ok('sandboxQuote', { body: { bits: 64 } });
  await ok('sandboxAccept', { params: { quote_id: sq.quote_id }, body: { machine_id: sq.machine_id } });
  const sx = await ok('sandboxExecute', { body: { machine_id: sq.machine_id, quote_id: sq.quote_id } });
  await ok('sandboxVerify', { body: { machine_id: sq.machine_id, receipt_id: sx.receipt_id } });

  // MCP: a 2025 initialize, then its notification (202); GET is 405 by contract
  const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'openapi-live', version: '1' } };
  const mcpHeaders = { accept: 'application/json, text/event-stream' };
  await ok('mcp', { body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: init }, headers: mcpHeaders });
  await ok('mcp', { body: { jsonrpc: '2.0', method: 'notifications/initialized' }, headers: mcpHeaders });
  await send(t, 'mcpStream');

  // everything else takes no input but WebFinger's resource
  for (const o of ops.values()) {
    if (seen.has(o.id)) continue;
    await ok(o.id, o.id === 'webfinger' ? { query: { resource: s.ready.http! } } : {});
  }

  // bad requests: a broken JSON body on every POST; a rate-limited GET on the tight gateway
  await fetch(`${tight.ready.http}/api/v1/caps`).then((r) => r.text()); // spends its one request
  for (const o of ops.values()) {
    const documented = Object.keys(o.spec.responses).map(Number);
    if (o.method === 'POST') {
      const r = await send(t, o.id, { headers: o.id === 'mcp' ? mcpHeaders : {} }, s, '{"machine_id": ');
      t.is(r.status, 400, `${o.id}: broken JSON`);
    } else if (documented.includes(429)) {
      // the limit applies before any work: even an unknown WebFinger resource is 429, not 404
      const unknown = { query: { resource: 'acct:nobody@elsewhere' } };
      const r = await send(t, o.id, o.id === 'webfinger' ? unknown : {}, tight);
      t.is(r.status, 429, `${o.id}: rate limited`);
      t.regex(r.headers.get('retry-after') ?? '', /^\d+$/);
    } else if (o.id !== 'readyz') {
      // (readyz takes no input and is not limited: its 503 while draining is test/ops/lifecycle.test.ts's)
      t.true((await send(t, o.id)).status >= 400, o.id);
    }
  }
  // and the errors a client meets most, each as documented
  t.is((await send(t, 'getPulse', { body: { machine_id: m, quote_id: 'q_nope' } })).status, 401);
  t.is((await send(t, 'getPulse', { body: { machine_id: m, quote_id: 'q_nope' }, headers: auth })).status, 404);
  const other = { params: { quote_id: pulse.quote_id }, body: { machine_id: 'someone-else' } };
  t.is((await send(t, 'acceptQuote', other)).status, 401);
  t.is((await send(t, 'verifyReceipt', { body: { machine_id: m, receipt_id: 'rcpt_nope' } })).status, 404);
  const noInvoice = { params: { invoice_id: 'inv_nope' }, query: { machine_id: m }, headers: auth };
  t.is((await send(t, 'invoiceStatus', noInvoice)).status, 404);
  const key = { 'idempotency-key': 'openapi-live-key' };
  await send(t, 'quoteGetPulse', { body: { machine_id: m, bits: 64 }, headers: key });
  t.is((await send(t, 'quoteGetPulse', { body: { machine_id: m, bits: 65 }, headers: key })).status, 422);
  const late = await ok('sandboxQuote', { body: {} });
  const early = { body: { machine_id: late.machine_id, quote_id: late.quote_id } };
  t.is((await send(t, 'sandboxExecute', early)).status, 409, 'not accepted yet');
  t.is((await send(t, 'sandboxAccept', { params: { quote_id: 'sbx_q_nope' }, body: { machine_id: 'm' } })).status, 404);
  t.is((await send(t, 'webfinger', { query: { resource: 'acct:nobody@elsewhere' } })).status, 404);
  t.is((await send(t, 'webfinger')).status, 400);
  const initBody = { jsonrpc: '2.0', id: 2, method: 'initialize', params: init };
  const sseOnly = { body: initBody, headers: { accept: 'text/event-stream' } };
  t.is((await send(t, 'mcp', sseOnly)).status, 406);
  const huge = JSON.stringify({ machine_id: m, pad: 'x'.repeat((1 << 20) + 1) });
  t.is((await send(t, 'quoteMakeBct', {}, s, huge)).status, 413);

  // coverage: each operation gave a success and an error, both documented (GET /mcp's answer is its 405)
  for (const o of ops.values()) {
    const got = [...(seen.get(o.id) ?? [])];
    t.true(got.some((x) => x < 400) || o.id === 'mcpStream', `${o.id}: no success seen (${got.join(', ')})`);
    if (o.id === 'readyz') continue; // its 503 (draining) is test/ops/lifecycle.test.ts's
    t.true(got.some((x) => x >= 400), `${o.id}: no error seen (${got.join(', ')})`);
  }
});
