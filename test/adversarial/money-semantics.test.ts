// Money semantics under attack: the claim race on a fresh machine_id, identity
// aliasing through ill-formed UTF-16, enumeration of claimed ids through 401 messages, invoice
// flooding that would exhaust a rail's amount suffixes, quotes that charge for input never read,
// stray fields, max_output on GET_PULSE, and a second accept of an accepted quote.
import test from 'ava';
import { generateKeyPairSync } from 'node:crypto';
import { httpJson } from '../support/http-from.ts';
import { sharedSvcd, stopCheckingLedger } from '../support/start-svcd.ts';
import { Svcd, fundMachine } from '../support/svcd.ts';
import { Store } from '../../src/store/store.ts';
import { idPart, key } from '../../src/store/key-codec.ts';
import type { SvcClient } from '../../src/client/client.ts';
import { txRef } from '../support/references.ts';

const s = sharedSvcd(test, { SVC_RATE_PUBLIC_LOW: '1000000/60', SVC_RATE_PAID_EXECUTION: '1000000/60' },
  { checkLedger: true });
let base: string;
test.before(() => { base = s.ready.http!; });

const http = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}, at = base) =>
  httpJson(at + path, method, body, headers);

const code = async (p: Promise<unknown>) => {
  try { await p; } catch (e) { return (e as { code: string }).code; }
  return 'no error';
};

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Every invoice the store holds for a machine (read after svcd stopped). */
async function invoicesIn(dataDir: string, machineId: string): Promise<Record<string, unknown>[]> {
  const store = await Store.open(dataDir);
  try {
    const out: Record<string, unknown>[] = [];
    for await (const [, v] of store.entries('invoices')) if (v.machine_id === machineId) out.push(v);
    return out;
  } finally {
    await store.close();
  }
}

test('claim race: 20 concurrent unauthenticated FUND_ACCOUNT on a fresh id → one 200 with a token', async (t) => {
  const own = await Svcd.start({ SVC_RATE_PUBLIC_LOW: '1000000/60' }, ['start']);
  t.teardown(() => own.cleanup());
  const body = { machine_id: 'claim-race', units: 1, network: 'TRON', asset: 'USDT' };
  const post = () => http('POST', '/api/v1/invoices', body, {}, own.ready.http!);
  const replies = await Promise.all(Array.from({ length: 20 }, post));
  const ok = replies.filter((r) => r.status === 200);
  t.is(ok.length, 1, JSON.stringify(replies.map((r) => r.status)));
  t.regex(ok[0]!.body.machine_token, /^svcm_/);
  const refused = replies.filter((r) => r.status !== 200);
  t.true(refused.every((r) => r.status === 401 && r.body.error.code === 'unauthorized'));
  // the same over svc/1, several connections at once, on another fresh id
  const clients = await Promise.all(Array.from({ length: 4 }, () => own.edge()));
  const args = { ...body, machine_id: 'claim-race-2' };
  const fund = (i: number) => clients[i % 4]!.request('FUND_ACCOUNT', args);
  const svc1 = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => fund(i)));
  clients.forEach((c) => c.close());
  t.is(svc1.filter((r) => r.status === 'fulfilled').length, 1);
  t.true(svc1.every((r) => r.status === 'fulfilled' || (r.reason as { code: string }).code === 'unauthorized'));
  // the store (read once svcd has stopped: LevelDB has one owner) holds one invoice per machine
  await stopCheckingLedger(own);
  t.is((await invoicesIn(own.dataDir, 'claim-race')).length, 1);
  t.is((await invoicesIn(own.dataDir, 'claim-race-2')).length, 1);
});

test.serial('identity aliasing: ill-formed UTF-16 in any identifier is 400 naming the field', async (t) => {
  const lone = 'x\uD800';
  const cases: [string, Record<string, unknown>, string][] = [
    ['/api/v1/quotes/get-pulse', { machine_id: lone }, 'machine_id'],
    ['/api/v1/invoices', { machine_id: lone, units: 1, network: 'TRON', asset: 'USDT' }, 'machine_id'],
    ['/api/v1/balance', { machine_id: `\uDC00${lone}` }, 'machine_id'],
    ['/api/v1/quotes/get-pulse', { machine_id: 'fine', idempotency_key: lone }, 'idempotency_key'],
    ['/api/v1/receipts/verify', { machine_id: 'fine', receipt_id: lone }, 'receipt_id'],
    ['/api/v1/quotes/q_x/accept', { machine_id: lone }, 'machine_id'],
    ['/api/v1/executions/get-pulse', { machine_id: 'fine', quote_id: lone }, 'quote_id'],
    ['/api/v1/sandbox/quotes/get-pulse', { machine_id: lone }, 'machine_id'],
  ];
  for (const [path, body, field] of cases) {
    const r = await http('POST', path, body);
    t.deepEqual([r.status, r.body.error.code], [400, 'invalid_request'], `${path} ${field}`);
    t.regex(r.body.error.message, new RegExp(`^${field} is not well-formed Unicode`), path);
  }
  const c = await s.edge();
  const a = await s.admin();
  t.teardown(() => { c.close(); a.close(); });
  const invoice = { machine_id: lone, units: 1, network: 'TRON', asset: 'USDT' };
  t.is(await code(c.request('FUND_ACCOUNT', invoice)), 'invalid_request');
  t.is(await code(c.request('INVOICE_STATUS', { machine_id: 'fine', invoice_id: lone })), 'invalid_request');
  t.is(await code(a.request('SETTLE_INVOICE', { invoice_id: 'inv_x', reference: lone })), 'invalid_request');
  t.is(await code(a.request('ROTATE_TOKEN', { machine_id: lone })), 'invalid_request');
  // a pair is fine, and U+FFFD is an ordinary character: its machine is not reachable through "x\uD800"
  const tokenFffd = await fundMachine(s, 'x\uFFFD', 1);
  t.regex(tokenFffd, /^svcm_/);
  t.regex(await fundMachine(s, 'x\uD83D\uDE00', 1), /^svcm_/);
  t.is(await code(c.request('BALANCE', { machine_id: lone }, { token: tokenFffd })), 'invalid_request');
  t.is((await c.request('BALANCE', { machine_id: 'x\uFFFD' }, { token: tokenFffd })).machine_id, 'x\uFFFD');
});

test('key codec refuses ill-formed identifiers (the second line of defence)', (t) => {
  for (const bad of ['x\uD800', '\uDFFF', 'a\uDC00\uD800b']) {
    t.is(t.throws(() => idPart(bad))?.message, 'identifier is not well-formed Unicode (unpaired surrogate)');
    t.throws(() => key('m', bad));
  }
  t.not(idPart('x\uFFFD'), idPart('x'));
  t.is(idPart('x\uD83D\uDE00'), Buffer.from('x😀', 'utf8').toString('hex'));
});

test.serial('401 says the same for an unclaimed id, a missing token and a wrong token (no enumeration)', async (t) => {
  const token = await fundMachine(s, 'enum-claimed', 1);
  const msgs = new Set<string>();
  const cases = [
    ['enum-never', undefined], ['enum-never', 'svcm_x'], ['enum-claimed', undefined], ['enum-claimed', 'svcm_x'],
  ] as const;
  for (const [m, auth] of cases) {
    const r = await http('POST', '/api/v1/balance', { machine_id: m }, auth ? bearer(auth) : {});
    t.deepEqual([r.status, r.body.error.code], [401, 'unauthorized'], `${m} ${auth}`);
    msgs.add(r.body.error.message);
  }
  t.is(msgs.size, 1, [...msgs].join(' | '));
  t.is((await http('POST', '/api/v1/balance', { machine_id: 'enum-claimed' }, bearer(token))).status, 200);
});

test('funding denial: 10,000 invoice attempts from one machine → 20 open; others still get invoices', async (t) => {
  const own = await Svcd.start();
  t.teardown(async () => { await own.stop(); own.cleanup(); });
  const token = await fundMachine(own, 'flood', 1);
  const clients: SvcClient[] = await Promise.all(Array.from({ length: 4 }, () => own.edge()));
  t.teardown(() => clients.forEach((c) => c.close()));
  const args = { machine_id: 'flood', units: 1, network: 'TRON', asset: 'USDT' };
  // 64 at a time (16 per connection, under the edge's in-flight bound): the core decides every one
  const results: PromiseSettledResult<Record<string, unknown>>[] = [];
  let next = 0;
  const worker = async (w: number) => {
    while (next < 10_000) {
      next++;
      const [r] = await Promise.allSettled([clients[w % 4]!.request('FUND_ACCOUNT', args, { token })]);
      results.push(r!);
    }
  };
  await Promise.all(Array.from({ length: 64 }, (_, w) => worker(w)));
  t.is(results.length, 10_000);
  const made = results.filter((r): r is PromiseFulfilledResult<Record<string, unknown>> => r.status === 'fulfilled');
  const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  t.is(made.length, 20, 'the default SVC_MAX_OPEN_INVOICES');
  const codes = new Set(refused.map((r) => r.reason.code));
  t.deepEqual([...codes], ['too_many_open_invoices']);
  // everyone else is unaffected: fresh machines on the same rail and amount get invoices
  for (let i = 0; i < 30; i++) {
    const inv = await clients[0]!.request('FUND_ACCOUNT', { ...args, machine_id: `bystander-${i}` });
    t.is(inv.state, 'pending');
  }
  // paying one frees a slot
  const admin = await own.admin();
  t.teardown(() => admin.close());
  const reference = txRef('flood-tx', 'USDT_TRON');
  await admin.request('SETTLE_INVOICE', { invoice_id: made[0]!.value.invoice_id, reference });
  t.is((await clients[0]!.request('FUND_ACCOUNT', args, { token })).state, 'pending');
  t.is(await code(clients[0]!.request('FUND_ACCOUNT', args, { token })), 'too_many_open_invoices');
});

test.serial('concurrent invoices of many machines on one rail and amount never share an amount_due', async (t) => {
  const clients: SvcClient[] = await Promise.all(Array.from({ length: 4 }, () => s.edge()));
  t.teardown(() => clients.forEach((c) => c.close()));
  const args = { units: 7, network: 'Solana', asset: 'USDT' };
  const fund = (i: number) => clients[i % 4]!.request('FUND_ACCOUNT', { ...args, machine_id: `same-rail-${i}` });
  const invoices = await Promise.all(Array.from({ length: 500 }, (_, i) => fund(i)));
  const amounts = invoices.map((inv) => inv.amount_due as string);
  t.is(new Set(amounts).size, amounts.length, 'each open invoice on a rail has its own amount');
  t.true(amounts.every((a) => BigInt(a) > 7_000_000n && BigInt(a) < 7_100_000n));
});

test.serial('invoices: a suffix of 1..99,999 base units; settling credits exactly amount_due × 100', async (t) => {
  const c = await s.edge();
  const a = await s.admin();
  t.teardown(() => { c.close(); a.close(); });
  const inv = await c.request('FUND_ACCOUNT', {
    machine_id: 'exact-credit', units: 2, network: 'Solana', asset: 'USDC',
  });
  const due = BigInt(inv.amount_due as string);
  t.true(due > 2_000_000n && due < 2_100_000n, String(due));
  t.is(inv.credit_units, String(due * 100n));
  await a.request('SETTLE_INVOICE', { invoice_id: inv.invoice_id, reference: txRef('exact-tx', 'USDT_SOLANA') });
  const bal = await c.request('BALANCE', { machine_id: 'exact-credit' }, { token: inv.machine_token as string });
  t.is(bal.available_units, String(due * 100n), 'the payer gets what they paid, suffix included');
});

test.serial('quotes: a declared size is priced, GET_PULSE never charges bytes, BCT quotes by bytes', async (t) => {
  const q = (service: string, body: Record<string, unknown>) =>
    http('POST', `/api/v1/quotes/${service}`, { machine_id: 'shape', ...body });
  // bytes alone suffices for the BCT pair (OpenAPI and the CLI's --bytes say so)
  const byBytes = await q('make-bct', { bytes: 5 });
  t.is(byBytes.status, 200, JSON.stringify(byBytes.body));
  const byHex = await q('make-bct', { plain_hex: '68656c6c6f' });
  t.is(byBytes.body.quote_units, byHex.body.quote_units, 'the same size prices the same');
  t.is((await q('verify-bct', { bytes: 60 })).status, 200);
  const neither = await q('make-bct', {});
  t.deepEqual([neither.status, neither.body.error.message], [400, 'bytes or plain_hex is required']);
  t.is((await q('make-bct', { bytes: 4097 })).status, 400);
  // the others need bytes (never a silent 0 that fails at execution); a fixed-size input defaults to its size
  for (const svc of ['verify-result', 'attest-event', 'submit-id', 'bvm-exec', 'sealed-message', 'machine-event-log']) {
    const r = await q(svc, {});
    t.deepEqual([r.status, r.body.error.message], [400, 'bytes is required'], svc);
  }
  t.is((await q('sealed-message', { bytes: 31 })).status, 400, 'the recipient key alone is 32 bytes');
  const ts = await q('timestamp-proof', {});
  t.deepEqual([ts.status, ts.body.bytes, ts.body.price.input_bytes], [200, 32, 32]);
  t.is((await q('timestamp-proof', { bytes: 64 })).status, 400);
  // GET_PULSE reads no input: bytes other than 0 are refused, so nothing is priced that is never read
  const pulse = await q('get-pulse', { bits: 256, bytes: 1 << 20 });
  t.deepEqual([pulse.status, pulse.body.error.code], [400, 'invalid_request']);
  t.regex(pulse.body.error.message, /^bytes /);
  const zero = await q('get-pulse', { bits: 256, bytes: 0 });
  t.deepEqual([zero.status, zero.body.price.input_bytes], [200, 0]);
});

test.serial('stray fields: a quote or an execution refuses fields its command does not take', async (t) => {
  const auth = bearer(await fundMachine(s, 'stray', 1));
  const quote = (service: string, body: Record<string, unknown>) =>
    http('POST', `/api/v1/quotes/${service}`, { machine_id: 'stray', ...body });
  const exec = (service: string, body: Record<string, unknown>) =>
    http('POST', `/api/v1/executions/${service}`, { machine_id: 'stray', ...body }, auth);
  const mk = await quote('make-bct', { plain_hex: '00', packet_hex: '11' });
  t.deepEqual([mk.status, mk.body.error.message], [400, 'unknown field packet_hex']);
  t.is((await quote('verify-bct', { packet_hex: '00', plain_hex: '11' })).status, 400);
  t.is((await quote('get-pulse', { plain_hex: '00' })).status, 400);
  const good = await quote('make-bct', { plain_hex: '00' });
  await http('POST', `/api/v1/quotes/${good.body.quote_id}/accept`, { machine_id: 'stray' }, auth);
  const run = await exec('make-bct', { quote_id: good.body.quote_id, plain_hex: '00', packet_hex: '11' });
  t.deepEqual([run.status, run.body.error.message], [400, 'unknown field packet_hex']);
  const pulse = await exec('get-pulse', { quote_id: 'q_x', plain_hex: '00' });
  t.deepEqual([pulse.status, pulse.body.error.message], [400, 'unknown field plain_hex']);
  const sealed = await exec('sealed-message', { quote_id: 'q_x', plain_hex: '00' });
  t.deepEqual([sealed.status, sealed.body.error.message], [400, 'packet_hex is required']);
  t.is((await exec('make-bct', { quote_id: good.body.quote_id, plain_hex: '00' })).status, 200);
});

test.serial('inputs an execution cannot use are 400 naming the field, charge nothing and leave the quote usable: ' +
  'a low-order X25519 recipient, a summary time that does not exist', async (t) => {
  const m = 'unusable-input';
  const auth = bearer(await fundMachine(s, m, 1));
  const balance = async () => {
    const b = (await http('POST', '/api/v1/balance', { machine_id: m }, auth)).body;
    return [b.available_units, b.reserved_units];
  };
  const accepted = async (service: string, bytes: number) => {
    const q = (await http('POST', `/api/v1/quotes/${service}`, { machine_id: m, bytes })).body;
    t.is((await http('POST', `/api/v1/quotes/${q.quote_id}/accept`, { machine_id: m }, auth)).status, 200);
    return q.quote_id as string;
  };
  const exec = (service: string, body: Record<string, unknown>) =>
    http('POST', `/api/v1/executions/${service}`, { machine_id: m, ...body }, auth);

  // RFC 7748's point of order 8: X25519 with it is all zeros whatever the private key
  const sealedQuote = await accepted('sealed-message', 33);
  const before = await balance();
  const lowOrder = 'e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800';
  const bad = await exec('sealed-message', { quote_id: sealedQuote, plain_hex: 'aa', packet_hex: lowOrder });
  t.deepEqual([bad.status, bad.body.error.code, bad.body.error.details?.field], [400, 'invalid_request', 'packet_hex'],
    JSON.stringify(bad.body));
  t.deepEqual(await balance(), before, 'nothing charged, the reservation held');
  const recipient = generateKeyPairSync('x25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const packet = recipient.toString('hex');
  const good = await exec('sealed-message', { quote_id: sealedQuote, plain_hex: 'aa', packet_hex: packet });
  t.is(good.status, 200, JSON.stringify(good.body));

  // a 30th of February is no time: not charged, not appended to the signed log
  const summary = (from: string) => Buffer.from(JSON.stringify({
    count: 1, head_hash: 'ab'.repeat(32), from, to: '2026-03-01T00:00:00Z',
  })).toString('hex');
  const logQuote = await accepted('machine-event-log', summary('2020-02-28T00:00:00Z').length / 2);
  const mid = await balance();
  const feb30 = await exec('machine-event-log', { quote_id: logQuote, plain_hex: summary('2020-02-30T00:00:00Z') });
  t.deepEqual([feb30.status, feb30.body.error.code], [400, 'invalid_request'], JSON.stringify(feb30.body));
  t.regex(feb30.body.error.message, /from must be an RFC 3339 time/);
  t.deepEqual(await balance(), mid);
  const logged = await exec('machine-event-log', { quote_id: logQuote, plain_hex: summary('2020-02-28T00:00:00Z') });
  t.is(logged.status, 200, JSON.stringify(logged.body));
  t.is(logged.body.entry.summary.from, '2020-02-28T00:00:00Z');
});

test.serial('MAKE_BCT/VERIFY_BCT quoted by bytes bind the exact size: another is 409 input_mismatch', async (t) => {
  const auth = { token: await fundMachine(s, 'bct-size', 1) };
  const c = await s.edge();
  t.teardown(() => c.close());
  const accepted = async (service: string, bytes: number) => {
    const q = await c.request('QUOTE', { service, machine_id: 'bct-size', bytes });
    await c.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: 'bct-size' }, auth);
    return q.quote_id as string;
  };
  const run = (cmd: string, quoteId: string, input: Record<string, string>) =>
    c.request(cmd, { quote_id: quoteId, machine_id: 'bct-size', ...input }, auth);
  const q1 = await accepted('make-bct', 5);
  t.is(await code(run('MAKE_BCT', q1, { plain_hex: '00'.repeat(4) })), 'input_mismatch');
  t.is(await code(run('MAKE_BCT', q1, { plain_hex: '00'.repeat(6) })), 'input_mismatch');
  const packet = (await run('MAKE_BCT', q1, { plain_hex: '68656c6c6f' })).packet_hex as string;
  const q2 = await accepted('verify-bct', packet.length / 2);
  t.is(await code(run('VERIFY_BCT', q2, { packet_hex: packet.slice(2) })), 'input_mismatch');
  const opened = await run('VERIFY_BCT', q2, { packet_hex: packet });
  t.deepEqual([opened.valid, opened.plain_hex], [true, '68656c6c6f']);
});

test.serial('max_output on GET_PULSE: bits/8 above it is 400 (paid, sandbox); within it the output fits', async (t) => {
  const auth = bearer(await fundMachine(s, 'maxout', 1));
  const over = await http('POST', '/api/v1/quotes/get-pulse', { machine_id: 'maxout', bits: 1024, max_output: 100 });
  const field = over.body.error.details?.field;
  t.deepEqual([over.status, over.body.error.code, field], [400, 'invalid_request', 'max_output']);
  const sbxOver = await http('POST', '/api/v1/sandbox/quotes/get-pulse', { bits: 1024, max_output: 100 });
  t.deepEqual([sbxOver.status, sbxOver.body.error.code], [400, 'invalid_request']);
  const q = await http('POST', '/api/v1/quotes/get-pulse', { machine_id: 'maxout', bits: 800, max_output: 100 });
  t.is(q.status, 200);
  await http('POST', `/api/v1/quotes/${q.body.quote_id}/accept`, { machine_id: 'maxout' }, auth);
  const runArgs = { machine_id: 'maxout', quote_id: q.body.quote_id };
  const run = await http('POST', '/api/v1/executions/get-pulse', runArgs, auth);
  t.is(run.body.output_hex.length / 2, 100);
  const sq = await http('POST', '/api/v1/sandbox/quotes/get-pulse', { bits: 800, max_output: 100 });
  await http('POST', `/api/v1/sandbox/quotes/${sq.body.quote_id}/accept`, { machine_id: 'sandbox_machine' });
  const sandboxRun = { machine_id: 'sandbox_machine', quote_id: sq.body.quote_id };
  const sr = await http('POST', '/api/v1/sandbox/executions/get-pulse', sandboxRun);
  t.is(sr.body.output_hex.length / 2, 100);
});

test.serial('a second ACCEPT is 409 quote_not_issued with its state; an idempotent replay gets reply 1', async (t) => {
  const auth = bearer(await fundMachine(s, 'accept-twice', 1));
  const q = await http('POST', '/api/v1/quotes/get-pulse', { machine_id: 'accept-twice', bits: 64 });
  const accept = (headers: Record<string, string>) =>
    http('POST', `/api/v1/quotes/${q.body.quote_id}/accept`, { machine_id: 'accept-twice' }, headers);
  const first = await accept({ ...auth, 'idempotency-key': 'acc-1' });
  t.deepEqual([first.status, first.body.state], [200, 'accepted']);
  const replay = await accept({ ...auth, 'idempotency-key': 'acc-1' });
  const replayed = replay.headers.get('idempotent-replayed');
  t.deepEqual([replay.status, replayed, replay.body.accepted_at], [200, 'true', first.body.accepted_at]);
  for (const headers of [auth, { ...auth, 'idempotency-key': 'acc-2' }]) {
    const again = await accept(headers);
    t.deepEqual([again.status, again.body.error.code, again.body.error.source], [409, 'quote_not_issued', 'svc']);
    t.deepEqual(again.body.error.details, { state: 'accepted' });
  }
  const bal = await http('POST', '/api/v1/balance', { machine_id: 'accept-twice' }, auth);
  t.is(bal.body.reserved_units, String(q.body.quote_units), 'reserved once');
});
