// The HTTP gateway in front of the real core (svcd in one process): the paid flow over HTTP with
// a Bearer token, ApiError for every failure with the right status and source, request ids, 405
// with Allow, rate limits with their headers, Idempotency-Key, the sandbox, no admin routes, 502
// when the core is unreachable.
import test from 'ava';
import { Svcd } from '../support/svcd.ts';
import { httpJson } from '../support/http-from.ts';
import { sharedSvcd } from '../support/start-svcd.ts';
import { txRef } from '../support/references.ts';

const s = sharedSvcd(test, { SVC_RATE_PUBLIC_LOW: '10000/60' }, { checkLedger: true });
let base: string;
test.before(() => { base = s.ready.http!; });

const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  httpJson(base + path, method, body, headers);

test.serial('paid GET_PULSE flow over HTTP: invoice (token once) → settle → balance → quote'
  + ' → accept → execute → verify receipt', async (t) => {
  const inv = await call('POST', '/api/v1/invoices', {
    machine_id: 'http-m', units: 2, network: 'Base', asset: 'USDC',
  });
  t.is(inv.status, 200);
  t.deepEqual([inv.body.ok, inv.body.source, inv.body.state], [true, 'svc', 'pending']);
  t.regex(inv.body.request_id, /^[0-9a-f-]{36}$/);
  const auth = { authorization: `Bearer ${inv.body.machine_token}` };
  const st = await call('GET', `/api/v1/invoices/${inv.body.invoice_id}?machine_id=http-m`, undefined, auth);
  t.deepEqual([st.status, st.body.state, st.body.machine_token], [200, 'pending', undefined]);
  const settle = ['settle-invoice', inv.body.invoice_id, '--reference', txRef('base-tx', 'USDC_BASE')];
  t.is((await s.svcAdmin(settle)).code, 0);
  const bal = await call('POST', '/api/v1/balance', { machine_id: 'http-m' }, auth);
  t.is(bal.body.available_units, String(BigInt(inv.body.amount_due) * 100n), 'credited exactly the amount due');
  const q = await call('POST', '/api/v1/quotes/get-pulse', { machine_id: 'http-m', bits: 128 });
  t.is(q.body.state, 'issued');
  const acc = await call('POST', `/api/v1/quotes/${q.body.quote_id}/accept`, { machine_id: 'http-m' }, auth);
  t.is(acc.body.state, 'accepted');
  const ex = await call(
    'POST', '/api/v1/executions/get-pulse', { machine_id: 'http-m', quote_id: q.body.quote_id }, auth,
  );
  t.is(ex.status, 200);
  t.is(ex.body.output_hex.length, 32);
  const ver = await call('POST', '/api/v1/receipts/verify', { machine_id: 'http-m', receipt_id: ex.body.receipt_id });
  t.deepEqual([ver.status, ver.body.valid, ver.body.receipt.quote_id], [200, true, q.body.quote_id]);
});

test.serial('errors: ApiError with status and source (api for the gateway, svc for the core)', async (t) => {
  const cases: [string, string, unknown, Record<string, string>, number, string, string][] = [
    ['POST', '/api/v1/quotes/get-pulse', { machine_id: '' }, {}, 400, 'invalid_request', 'api'],
    ['POST', '/api/v1/quotes/get-pulse', '{not json', {}, 400, 'invalid_request', 'api'],
    ['POST', '/api/v1/quotes/get-pulse', [1, 2], {}, 400, 'invalid_request', 'api'],
    ['POST', '/api/v1/quotes/warp-drive', { machine_id: 'm' }, {}, 404, 'not_found', 'api'],
    ['POST', '/api/v1/balance', { machine_id: 'http-m' }, {}, 401, 'unauthorized', 'svc'],
    ['POST', '/api/v1/balance', { machine_id: 'http-m' }, { authorization: 'Bearer svcm_nope' },
      401, 'unauthorized', 'svc'],
    ['POST', '/api/v1/quotes/q_missing/accept', { machine_id: 'http-m' }, {}, 401, 'unauthorized', 'svc'],
    ['POST', '/api/v1/receipts/verify', { machine_id: 'http-m', receipt_id: 'rcpt_missing' }, {},
      404, 'not_found', 'svc'],
    ['POST', '/api/v1/invoices', { machine_id: 'fresh', units: 1, network: 'TRON', asset: 'USDC' }, {},
      400, 'unsupported_rail', 'svc'],
    ['GET', '/api/v1/nowhere', undefined, {}, 404, 'not_found', 'api'],
  ];
  for (const [m, p, b, h, status, code, source] of cases) {
    const r = await call(m, p, b, h);
    t.is(r.status, status, `${m} ${p}`);
    t.deepEqual([r.body.ok, r.body.error.code, r.body.error.source], [false, code, source], `${m} ${p}`);
    t.is(typeof r.body.error.message, 'string');
    t.is(r.body.request_id, r.headers.get('x-request-id'));
  }
  const big = await call(
    'POST', '/api/v1/quotes/get-pulse', JSON.stringify({ machine_id: 'm', pad: 'x'.repeat((1 << 20) + 10) }),
  );
  t.deepEqual([big.status, big.body.error.code], [413, 'payload_too_large']);
  const tok = (await call('POST', '/api/v1/invoices', {
    machine_id: 'conf-m', units: 1, network: 'TRON', asset: 'USDT',
  })).body.machine_token;
  const auth = { authorization: `Bearer ${tok}` };
  const q = await call('POST', '/api/v1/quotes/get-pulse', { machine_id: 'conf-m', bits: 64 });
  const poor = await call('POST', `/api/v1/quotes/${q.body.quote_id}/accept`, { machine_id: 'conf-m' }, auth);
  t.deepEqual([poor.status, poor.body.error.code, poor.body.error.source], [409, 'insufficient_balance', 'svc']);
  const short = await call('POST', '/api/v1/quotes/get-pulse', { machine_id: 'conf-m', bits: 64, quote_ttl_ms: 1000 });
  await new Promise((r) => setTimeout(r, 1100));
  const late = await call('POST', `/api/v1/quotes/${short.body.quote_id}/accept`, { machine_id: 'conf-m' }, auth);
  t.deepEqual([late.status, late.body.error.code, late.body.error.source], [409, 'quote_expired', 'svc']);
});

test.serial('bodies are UTF-8 JSON as sent: a content-encoding or another charset is 400 naming it, not a ' +
  'misread; paths match exactly as the contract spells them', async (t) => {
  const { gzipSync } = await import('node:zlib');
  const json = JSON.stringify({ machine_id: 'enc-m', bits: 64 });
  const post = (body: Buffer | string, headers: Record<string, string>, path = '/api/v1/quotes/get-pulse') =>
    fetch(base + path, {
      method: 'POST', body: typeof body === 'string' ? body : new Uint8Array(body),
      headers: { 'content-type': 'application/json', ...headers },
    })
      .then(async (r) => ({ status: r.status, body: await r.json() as any }));
  const gz = await post(gzipSync(json), { 'content-encoding': 'gzip' });
  t.deepEqual([gz.status, gz.body.error.code], [400, 'invalid_request']);
  t.regex(gz.body.error.message, /content-encoding gzip/);
  const utf16 = await post(Buffer.from(json, 'utf16le'), { 'content-type': 'application/json; charset=utf-16' });
  t.deepEqual([utf16.status, utf16.body.error.code], [400, 'invalid_request']);
  t.regex(utf16.body.error.message, /charset utf-16/);
  const fines: Record<string, string>[] = [{ 'content-encoding': 'identity' },
    { 'content-type': 'application/json; charset=UTF-8' }, { 'content-type': 'application/json;charset="utf-8"' }];
  for (const fine of fines) {
    t.is((await post(json, fine)).status, 200, JSON.stringify(fine));
  }
  // a path in other letters is not the contract's path: 404, as a proxy's rules keyed on the path see it
  const upper = await post(json, {}, '/API/V1/quotes/get-pulse');
  t.deepEqual([upper.status, upper.body.error.code], [404, 'not_found']);
  t.is((await post(json, {}, '/api/v1/quotes/GET-PULSE')).status, 404);
});

test.serial('405 carries Allow; request ids are echoed when valid and replaced when not', async (t) => {
  const r = await call('DELETE', '/api/v1/caps');
  t.is(r.status, 405);
  t.regex(r.headers.get('allow') ?? '', /GET/);
  t.is(r.body.error.code, 'method_not_allowed');
  const ok = await call('GET', '/api/v1/caps', undefined, { 'x-request-id': 'trace-abc.123' });
  t.deepEqual(
    [ok.body.request_id, ok.headers.get('x-request-id'), ok.body.capability_count],
    ['trace-abc.123', 'trace-abc.123', 21],
  );
  const bad = await call('GET', '/api/v1/caps', undefined, { 'x-request-id': 'has spaces & ~' });
  t.not(bad.body.request_id, 'has spaces & ~');
  t.regex(bad.body.request_id, /^[0-9a-f-]{36}$/);
});

test.serial('admin commands have no HTTP route; the route index lists every HTTP command', async (t) => {
  const adminPaths = [
    '/api/v1/settle-invoice', '/api/v1/invoices/inv_x/settle', '/api/v1/admin/settle',
    '/api/v1/recover-runtime', '/api/v1/runtime/recover',
  ];
  for (const p of adminPaths) {
    t.is((await call('POST', p, { invoice_id: 'inv_x', reference: 'r' })).status, 404, p);
  }
  const idx = await call('GET', '/api/v1');
  const cmds = idx.body.routes.map((r: any) => r.command).filter(Boolean);
  t.false(cmds.includes('SETTLE_INVOICE') || cmds.includes('RECOVER_RUNTIME') || cmds.includes('GET_RECEIPT'));
  t.is(idx.body.routes.filter((r: any) => r.path.startsWith('/api/v1/executions/')).length, 10);
});

test.serial('401: WWW-Authenticate Bearer realm, error="invalid_token" for a wrong token (RFC 6750)', async (t) => {
  const none = await call('POST', '/api/v1/balance', { machine_id: 'www-auth-m' });
  t.deepEqual([none.status, none.body.error.code], [401, 'unauthorized']);
  t.is(none.headers.get('www-authenticate'), 'Bearer realm="svc"');
  const bearer = { authorization: 'Bearer svcm_nope' };
  const wrong = await call('POST', '/api/v1/balance', { machine_id: 'www-auth-m' }, bearer);
  t.deepEqual([wrong.status, wrong.body.error.code], [401, 'unauthorized']);
  t.is(wrong.headers.get('www-authenticate'), 'Bearer realm="svc", error="invalid_token"');
  const basic = await call('POST', '/api/v1/balance', { machine_id: 'www-auth-m' }, { authorization: 'Basic dTpw' });
  t.is(basic.headers.get('www-authenticate'), 'Bearer realm="svc"', 'no bearer token presented: no error attribute');
  t.is((await call('GET', '/api/v1/caps')).headers.get('www-authenticate'), null, 'only on 401');
});

test.serial('Idempotency-Key header: same body replays with Idempotent-Replayed, another body is 422', async (t) => {
  const h = { 'idempotency-key': 'hdr-key-1' };
  const a = await call('POST', '/api/v1/quotes/get-pulse', { machine_id: 'idem-http', bits: 64 }, h);
  const b = await call('POST', '/api/v1/quotes/get-pulse', { machine_id: 'idem-http', bits: 64 }, h);
  t.is(b.body.quote_id, a.body.quote_id);
  t.is(b.headers.get('idempotent-replayed'), 'true');
  const c = await call('POST', '/api/v1/quotes/get-pulse', { machine_id: 'idem-http', bits: 65 }, h);
  t.deepEqual([c.status, c.body.error.code], [422, 'idempotency_key_reused']);
});

test.serial('sandbox: anonymous quote → accept → execute → verify, within the sandbox limits', async (t) => {
  const q = await call('POST', '/api/v1/sandbox/quotes/get-pulse', { bits: 256 });
  t.deepEqual([q.status, q.body.machine_id, q.body.quote_units, q.body.ttl_seconds], [200, 'sandbox_machine', 0, 300]);
  const early = await call('POST', '/api/v1/sandbox/executions/get-pulse', {
    machine_id: 'sandbox_machine', quote_id: q.body.quote_id,
  });
  t.deepEqual([early.status, early.body.error.code], [409, 'quote_not_accepted']);
  const acc = await call('POST', `/api/v1/sandbox/quotes/${q.body.quote_id}/accept`, { machine_id: 'sandbox_machine' });
  t.is(acc.body.state, 'accepted');
  const ex = await call('POST', '/api/v1/sandbox/executions/get-pulse', {
    machine_id: 'sandbox_machine', quote_id: q.body.quote_id,
  });
  t.is(ex.body.output_hex.length, 64);
  t.is(ex.body.units_charged, 0);
  const v = await call('POST', '/api/v1/sandbox/receipts/verify', {
    machine_id: 'sandbox_machine', receipt_id: ex.body.receipt_id,
  });
  t.deepEqual([v.body.valid, v.body.receipt.settlement], [true, 'none (sandbox)']);
  for (const bad of [{ bits: 65537 }, { max_output: 8193 }, { priority: 'high' }, { bits: 0 }, { colour: 'red' }]) {
    t.is((await call('POST', '/api/v1/sandbox/quotes/get-pulse', bad)).status, 400, JSON.stringify(bad));
  }
  const otherMachine = await call('POST', '/api/v1/sandbox/receipts/verify', {
    machine_id: 'other', receipt_id: ex.body.receipt_id,
  });
  t.is(otherMachine.status, 404);
  const noQuote = await call('POST', '/api/v1/sandbox/executions/get-pulse', {
    machine_id: 'sandbox_machine', quote_id: 'sbx_q_nope',
  });
  t.is(noQuote.status, 404);
});

test.serial('status, health, payment and payment-info', async (t) => {
  const st = await call('GET', '/api/v1/status');
  t.deepEqual([st.body.gateway.status, st.body.edge.status], ['ok', 'ok']);
  t.is((await call('GET', '/api/v1/health')).body.status, 'ok');
  const pay = await call('GET', '/api/v1/payment');
  t.deepEqual(Object.keys(pay.body.wallets).sort(), ['USDC_BASE', 'USDC_SOLANA', 'USDT_SOLANA', 'USDT_TRON']);
  t.is((await call('GET', '/api/v1/payment-info')).body.rails.length, 4);
});

test('rate limits: 429 rate_limited with Retry-After and RateLimit headers', async (t) => {
  const g = await Svcd.start({ SVC_RATE_PUBLIC_LOW: '3/60' }, ['start']);
  t.teardown(async () => { await g.stop(); g.cleanup(); });
  const codes: number[] = [];
  let last: Response | null = null;
  for (let i = 0; i < 5; i++) {
    last = await fetch(`${g.ready.http}/api/v1/caps`);
    codes.push(last.status);
    await last.text();
  }
  t.deepEqual(codes, [200, 200, 200, 429, 429]);
  t.regex(last!.headers.get('retry-after') ?? '', /^\d+$/);
  t.is(last!.headers.get('ratelimit-policy'), '"public_low";q=3;w=60');
  t.regex(last!.headers.get('ratelimit') ?? '', /^"public_low";r=0;t=\d+$/);
});

test('502 edge_unavailable when the gateway cannot reach the core', async (t) => {
  const g = new Svcd({ SVC_BACKEND_PORT: '1' });
  t.teardown(async () => { await g.stop(); g.cleanup(); });
  await g.start(['gateway']);
  const r = await fetch(`${g.ready.http}/api/v1/caps`);
  const body = await r.json() as any;
  t.deepEqual([r.status, body.error.code, body.error.source], [502, 'edge_unavailable', 'svc']);
  const st = await (await fetch(`${g.ready.http}/api/v1/status`)).json() as any;
  t.deepEqual([st.gateway.status, st.edge.status], ['ok', 'unavailable']);
});
