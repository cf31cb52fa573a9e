// Guards on money, on an in-process core context whose clock the test moves by hand: invoice expiry
// at settlement (to the millisecond), the late-payment path, settlement exactly once, the open-invoice
// cap and unique amounts, machine tokens, quote ids (MAC, machine, spelling, price book), quote
// expiry at accept and at execute, balance checks, the sweeper, and the execution checks before any
// charge (state, service, input, replay). Every test ends with the ledger invariant holding.
import test from 'ava';
import { createHash, createHmac } from 'node:crypto';
import { execute } from '../../src/core/executions.ts';
import {
  fundAccount, loadInvoice, refreshInvoice, settleInvoice,
} from '../../src/core/invoices.ts';
import {
  authenticate, checkToken, claimedRecord, getMachine, machineOps, newToken, rotateOps,
} from '../../src/core/machines.ts';
import { decodeQuoteId, encodeQuoteId, type QuoteTerms } from '../../src/core/quote-token.ts';
import { acceptQuote, findQuote, sweepExpired } from '../../src/core/quotes.ts';
import { verifyReceipt, type SignedReceipt } from '../../src/core/receipts.ts';
import { ServiceError } from '../../src/errors.ts';
import { idPart, key } from '../../src/store/key-codec.ts';
import { create, isStoreConflict, put, replace, type Json, type Op } from '../../src/store/store.ts';
import { coreFixture, type Fixture } from '../support/core-fixture.ts';
import { credit, ledgerHolds, quote, refused } from '../support/money.ts';
import type { NodeIdentity } from '../../src/core/node-identity.ts';
import { txRef } from '../support/references.ts';
import { DEFAULT_AMOUNT_HOLD_MS } from '../../src/core/config.ts';

/** A payment reference on the invoices' rail. */
const R = (seed: string) => txRef(seed, 'USDT_TRON');

/** A receipt's verdict by `id`'s published key set (what VERIFY_RECEIPT and the audit check it with). */
function verdict(id: NodeIdentity, r: SignedReceipt): { valid: boolean; reason?: string } {
  const { valid, reason } = verifyReceipt(id.publishedKeys(), r);
  return reason ? { valid, reason } : { valid };
}

const TRON = { network: 'TRON', asset: 'USDT' };

// --- invoices ---------------------------------------------------------------------------------------

test('invoice guard: SETTLE_INVOICE takes an invoice until 1 ms before expires_ms, and refuses it from ' +
  'expires_ms on (invoice_expired)', async (t) => {
  const f = await coreFixture(t);
  const args = { machine_id: 'm-i', units: 1, ...TRON };
  const { invoice: a, machine_token: token } = await fundAccount(f.ctx, args, undefined);
  const { invoice: b } = await fundAccount(f.ctx, { machine_id: 'm-i', units: 2, ...TRON }, token);
  t.is(a.expires_ms, f.clock.ms + 60_000);
  f.clock.set(a.expires_ms - 1);
  t.is((await refreshInvoice(f.ctx, await loadInvoice(f.ctx, b.invoice_id))).state, 'pending', '1 ms before');
  t.is((await settleInvoice(f.ctx, a.invoice_id, R('tx-a'))).state, 'settled');
  f.clock.set(b.expires_ms);
  const e = await refused(t, settleInvoice(f.ctx, b.invoice_id, R('tx-b')), 'invoice_expired');
  t.regex(e.message, /CREDIT_LATE_PAYMENT/);
  t.is(e.status, 409);
  t.is((await loadInvoice(f.ctx, b.invoice_id)).state, 'pending', 'nothing written');
  t.is((await f.ctx.ledger.account('m-i')).available, BigInt(a.credit_units), 'only a was credited');
  await ledgerHolds(t, f);
});

test('invoice guard: CREDIT_LATE_PAYMENT refuses a pending invoice (invoice_not_expired) and takes it ' +
  'from expires_ms on, marking it settled_late', async (t) => {
  const f = await coreFixture(t);
  const { invoice } = await fundAccount(f.ctx, { machine_id: 'm-l', units: 1, ...TRON }, undefined);
  f.clock.set(invoice.expires_ms - 1);
  await refused(t, settleInvoice(f.ctx, invoice.invoice_id, R('late'), 'late'), 'invoice_not_expired');
  f.clock.set(invoice.expires_ms);
  const late = await settleInvoice(f.ctx, invoice.invoice_id, R('late'), 'late');
  t.deepEqual([late.state, late.settled_late, late.settlement_reference], ['settled', true, R('late')]);
  t.is((await f.ctx.ledger.account('m-l')).available, BigInt(invoice.credit_units));
  // an invoice already marked expired on read takes the same path
  const { invoice: other } = await fundAccount(f.ctx, { machine_id: 'm-l2', units: 1, ...TRON }, undefined);
  f.clock.set(other.expires_ms);
  t.is((await refreshInvoice(f.ctx, other)).state, 'expired');
  await refused(t, settleInvoice(f.ctx, other.invoice_id, R('x')), 'invoice_expired');
  t.true((await settleInvoice(f.ctx, other.invoice_id, R('x'), 'late')).settled_late);
  await ledgerHolds(t, f);
});

test('invoice guard: an invoice is credited exactly once; the same reference replays, another is ' +
  'invoice_already_settled', async (t) => {
  const f = await coreFixture(t);
  const { invoice } = await fundAccount(f.ctx, { machine_id: 'm-o', units: 1, ...TRON }, undefined);
  const first = await settleInvoice(f.ctx, invoice.invoice_id, R('tx-1'));
  t.deepEqual(await settleInvoice(f.ctx, invoice.invoice_id, R('tx-1')), first);
  const e = await refused(t, settleInvoice(f.ctx, invoice.invoice_id, R('tx-2')), 'invoice_already_settled');
  t.deepEqual(e.details, { settlement_reference: R('tx-1') });
  f.clock.set(invoice.expires_ms + 1);
  await refused(t, settleInvoice(f.ctx, invoice.invoice_id, R('tx-3'), 'late'), 'invoice_already_settled');
  t.deepEqual(await settleInvoice(f.ctx, invoice.invoice_id, R('tx-1'), 'late'), first, 'final, even after expiry');
  const journal = await f.ctx.ledger.journal('m-o');
  t.deepEqual(journal.map((j) => [j.kind, j.d_available]), [['credit', invoice.credit_units]]);
  t.is(invoice.credit_units, String(BigInt(invoice.amount_due) * 100n), 'credited exactly the amount due');
  await refused(t, settleInvoice(f.ctx, 'inv_nothing', R('tx')), 'not_found');
  await ledgerHolds(t, f);
});

test('invoice guard: a machine holds at most maxOpenInvoices pending invoices; they stop counting at ' +
  'their exact expiry', async (t) => {
  const f = await coreFixture(t);
  const args = { machine_id: 'm-c', units: 1, ...TRON };
  const { machine_token: token, invoice: first } = await fundAccount(f.ctx, args, undefined);
  await fundAccount(f.ctx, args, token);
  await fundAccount(f.ctx, args, token);
  const e = await refused(t, fundAccount(f.ctx, args, token), 'too_many_open_invoices');
  t.deepEqual(e.details, { open_invoices: 3 });
  f.clock.set(first.expires_ms - 1);
  await refused(t, fundAccount(f.ctx, args, token), 'too_many_open_invoices');
  f.clock.set(first.expires_ms);
  t.is((await fundAccount(f.ctx, args, token)).invoice.state, 'pending');
  // settling one frees its slot at once
  const g = await coreFixture(t);
  const { machine_token: tk, invoice: i1 } = await fundAccount(g.ctx, args, undefined);
  await fundAccount(g.ctx, args, tk);
  await fundAccount(g.ctx, args, tk);
  await settleInvoice(g.ctx, i1.invoice_id, R('tx'));
  t.is((await fundAccount(g.ctx, args, tk)).invoice.state, 'pending');
});

test('invoice guard: a claimed machine needs its token for FUND_ACCOUNT (missing, wrong or rotated: ' +
  'unauthorized)', async (t) => {
  const f = await coreFixture(t);
  const args = { machine_id: 'm-t', units: 1, ...TRON };
  const { machine_token: token } = await fundAccount(f.ctx, args, undefined);
  t.regex(token!, /^svcm_[A-Za-z0-9_-]{43}$/);
  await refused(t, fundAccount(f.ctx, args, undefined), 'unauthorized');
  await refused(t, fundAccount(f.ctx, args, newToken()), 'unauthorized');
  await refused(t, fundAccount(f.ctx, args, `${token}x`), 'unauthorized');
  const again = await fundAccount(f.ctx, args, token);
  t.is(again.machine_token, undefined, 'a token is returned once, at the claim');
});

test('machine guard: checkToken refuses no record, no token, a wrong token, and takes only the current one', (t) => {
  const token = newToken();
  const rec = claimedRecord(token, new Date());
  t.is(checkToken(rec, token), rec);
  const refusals = [[undefined, token], [rec, undefined], [rec, ''], [rec, newToken()], [undefined, '']] as const;
  for (const [r, tk] of refusals) {
    const e = t.throws(() => checkToken(r, tk)) as ServiceError;
    t.is(e.code, 'unauthorized');
  }
});

test('machine guard: a token is svcm_ and 32 random bytes, only its SHA-256 is stored, a rotation takes the old '
  + 'one away, and every refusal says the same', async (t) => {
  const f = await coreFixture(t);
  const token = newToken();
  t.regex(token, /^svcm_[A-Za-z0-9_-]{43}$/);
  t.not(newToken(), token);
  const at = f.clock.now();
  const rec = claimedRecord(token, at);
  t.deepEqual(rec, { token_sha256: createHash('sha256').update(token).digest('hex'), created_at: at.toISOString() });
  // a claim is a create; a change is a compare-and-set over the record read (the store checks both)
  const id = idPart('m-t');
  t.deepEqual(machineOps('m-t', rec, undefined), [create('machines', id, rec as unknown as Json)]);
  const changed = { ...rec, open_invoices: { inv_0: 1 } };
  const asJson = (r: object) => r as unknown as Json;
  t.deepEqual(machineOps('m-t', changed, rec), [replace('machines', id, asJson(changed), asJson(rec))]);
  t.deepEqual(rotateOps('m-t', rec, newToken(), at)[0]?.ifUnchanged, rec as unknown as Json);
  await f.store.write(machineOps('m-t', rec, undefined));
  t.deepEqual(await getMachine(f.store, 'm-t'), rec);
  t.is(await getMachine(f.store, 'm-none'), undefined);
  t.deepEqual(await authenticate(f.store, 'm-t', token), rec);
  f.clock.advance(1000);
  const next = newToken();
  const withInvoice = { ...rec, open_invoices: { inv_1: 5 } };
  await f.store.write(machineOps('m-t', withInvoice, rec));
  const stale = await t.throwsAsync(f.store.write(rotateOps('m-t', rec, next, f.clock.now())));
  t.true(isStoreConflict(stale), 'a rotation over a record that has changed since it was read lands nothing');
  await f.store.write(rotateOps('m-t', withInvoice, next, f.clock.now()));
  const rotated = await authenticate(f.store, 'm-t', next);
  t.deepEqual(rotated, { token_sha256: createHash('sha256').update(next).digest('hex'), created_at: rec.created_at,
    rotated_at: f.clock.now().toISOString(), open_invoices: { inv_1: 5 } });
  const messages = new Set<string>();
  for (const [m, tk] of [['m-t', token], ['m-t', undefined], ['m-none', next], ['m-none', undefined]] as const) {
    const e = await t.throwsAsync(authenticate(f.store, m, tk)) as ServiceError;
    t.is(e.code, 'unauthorized');
    messages.add(e.message);
  }
  t.deepEqual([...messages], ['a valid machine token for this machine_id is required (Authorization: Bearer over '
    + 'HTTP, auth.token over svc/1); the first funding invoice of a machine_id returns its token']);
});

test('invoice guard: amounts are unique among a rail\'s invoices; an expired holder frees its amount once its hold '
  + 'has passed',
  async (t) => {
  // the narrow range alone (the wider one is tried below)
  const f = await coreFixture(t, { invoiceWideSuffixMax: 99_999 });
  // every suffix of a 1 svcC invoice on TRON is held by an open invoice: no amount is left
  const now = f.clock.ms;
  const ops: Op[] = [];
  for (let s = 1; s <= 99_999; s++) {
    ops.push(put('invoice_amounts', key('USDT_TRON', String(1_000_000n + BigInt(s))),
      { invoice_id: `inv_${s}`, expires_ms: now + 1 }));
  }
  await f.store.write(ops);
  const args = { machine_id: 'm-u', units: 1, ...TRON };
  await refused(t, fundAccount(f.ctx, args, undefined), 'busy');
  t.is((await fundAccount(f.ctx, { ...args, units: 2 }, undefined)).invoice.units, 2, 'other amounts are free');
  f.clock.set(now + 1 + DEFAULT_AMOUNT_HOLD_MS - 1);
  await refused(t, fundAccount(f.ctx, { ...args, machine_id: 'm-u2' }, undefined), 'busy');
  f.clock.set(now + 1 + DEFAULT_AMOUNT_HOLD_MS);
  const { invoice } = await fundAccount(f.ctx, { ...args, machine_id: 'm-u2' }, undefined);
  t.is((await f.store.get('invoice_amounts', key('USDT_TRON', invoice.amount_due)))?.invoice_id, invoice.invoice_id);
  // with the wider range (svcd's default) a rail whose narrow suffixes are all held takes one of 100,000..999,999
  f.clock.set(now);
  (f.ctx.config as { invoiceWideSuffixMax?: number }).invoiceWideSuffixMax = 999_999;
  const wide = BigInt((await fundAccount(f.ctx, { ...args, machine_id: 'm-u3' }, undefined)).invoice.amount_due);
  t.true(wide >= 1_100_000n && wide <= 1_999_999n, String(wide));
});

// --- quotes ---------------------------------------------------------------------------------------

test('quote guard: quote ids are MAC\'d, bound to their machine and spelled one way only', async (t) => {
  const f = await coreFixture(t);
  const q = quote(f, {});
  const k = f.identity.quoteKey();
  t.true(decodeQuoteId(k, 'm-q', q.quote_id).ok);
  t.deepEqual(decodeQuoteId(k, 'm-other', q.quote_id), { ok: false, why: 'other_machine' });
  const raw = Buffer.from(q.quote_id.slice(2), 'base64url');
  const flip = (i: number) => { const b = Buffer.from(raw); b[i]! ^= 1; return `q1${b.toString('base64url')}`; };
  t.deepEqual(decodeQuoteId(k, 'm-q', flip(raw.length - 1)), { ok: false, why: 'not_a_quote' }, 'tag');
  t.deepEqual(decodeQuoteId(k, 'm-q', flip(0)), { ok: false, why: 'not_a_quote' }, 'created_ms under the tag');
  t.deepEqual(decodeQuoteId(k, 'm-q', flip(25)), { ok: false, why: 'not_a_quote' }, 'quote_units under the tag');
  t.deepEqual(decodeQuoteId(Buffer.alloc(32), 'm-q', q.quote_id), { ok: false, why: 'not_a_quote' }, 'another node');
  // 59 bytes are 79 base64url characters whose last one has 2 unused bits: a second spelling
  const last = q.quote_id.at(-1)!;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const twin = `${q.quote_id.slice(0, -1)}${alphabet[alphabet.indexOf(last) ^ 1]}`;
  t.deepEqual(Buffer.from(twin.slice(2), 'base64url'), raw, 'the same bytes');
  t.deepEqual(decodeQuoteId(k, 'm-q', twin), { ok: false, why: 'not_a_quote' });
  t.deepEqual(decodeQuoteId(k, 'm-q', `q2${q.quote_id.slice(2)}`), { ok: false, why: 'not_a_quote' });
  t.deepEqual(decodeQuoteId(k, 'm-q', q.quote_id.slice(0, -4)), { ok: false, why: 'not_a_quote' });
  // correctly MAC'd bodies that are still not quotes: unknown service, flags without a digest
  const retag = (body: Buffer) => {
    const tag = createHmac('sha256', k).update('svc/quote/v1').update(body).update('m-q').digest().subarray(0, 16);
    return `q1${Buffer.concat([body, tag]).toString('base64url')}`;
  };
  t.true(decodeQuoteId(k, 'm-q', retag(raw.subarray(0, 43))).ok, 'the test MACs as the node does');
  const badService = Buffer.from(raw.subarray(0, 43));
  badService[10] = 200;
  t.deepEqual(decodeQuoteId(k, 'm-q', retag(badService)), { ok: false, why: 'not_a_quote' });
  const badFlags = Buffer.from(raw.subarray(0, 43));
  badFlags[42] = 1;
  t.deepEqual(decodeQuoteId(k, 'm-q', retag(badFlags)), { ok: false, why: 'not_a_quote' });
  await refused(t, findQuote(f.ctx, flip(raw.length - 1), 'm-q'), 'not_found');
  await refused(t, findQuote(f.ctx, q.quote_id, 'm-other'), 'quote_wrong_machine');
});

test('quote guard: a quote id carries its terms exactly (with and without an input digest), and nothing else '
  + 'decodes', async (t) => {
  const f = await coreFixture(t);
  const k = f.identity.quoteKey();
  const terms = {
    created_ms: 2 ** 47 + 12_345, ttl_ms: 2 ** 31 + 7, service: 'verify-bct', priority: 'high', bits: 70_000,
    bytes: 2 ** 32 - 1, max_output: 65_537, quote_units: 2 ** 40 + 3, input_digest: null,
  } as const satisfies QuoteTerms;
  const plain = encodeQuoteId(k, 'm-rt', terms);
  t.is(plain.length, 81);
  t.not(encodeQuoteId(k, 'm-rt', terms), plain, 'a nonce makes every id its own');
  t.deepEqual(decodeQuoteId(k, 'm-rt', plain), { ok: true, terms });
  const digest = { ...terms, service: 'make-bct', priority: 'low', input_digest: 'c4'.repeat(32) } as const;
  const bound = encodeQuoteId(k, 'm-rt', digest);
  t.is(bound.length, 124);
  t.deepEqual(decodeQuoteId(k, 'm-rt', bound), { ok: true, terms: digest });
  const normal = { ...terms, priority: 'normal', service: 'get-pulse' } as const;
  t.deepEqual(decodeQuoteId(k, 'm-rt', encodeQuoteId(k, 'm-rt', normal)),
    { ok: true, terms: normal });
  const retag = (body: Buffer) => {
    const tag = createHmac('sha256', k).update('svc/quote/v1').update(body).update('m-rt').digest().subarray(0, 16);
    return `q1${Buffer.concat([body, tag]).toString('base64url')}`;
  };
  const raw = Buffer.from(bound.slice(2), 'base64url');
  const body = (n: number, edit: (b: Buffer) => void) => {
    const b = Buffer.from(raw.subarray(0, n));
    edit(b);
    return b;
  };
  t.true(decodeQuoteId(k, 'm-rt', retag(body(75, () => {}))).ok, 'the test MACs as the node does');
  t.deepEqual(decodeQuoteId(k, 'm-rt', retag(body(75, (b) => { b[42] = 0; }))), { ok: false, why: 'not_a_quote' },
    'a digest without its flag');
  t.deepEqual(decodeQuoteId(k, 'm-rt', retag(body(75, (b) => { b[11] = 3; }))), { ok: false, why: 'not_a_quote' },
    'no such priority');
  t.deepEqual(decodeQuoteId(k, 'm-rt', retag(body(74, () => {}))), { ok: false, why: 'not_a_quote' }, 'a byte short');
  t.deepEqual(decodeQuoteId(k, 'm-rt', retag(body(44, (b) => { b[42] = 0; }))), { ok: false, why: 'not_a_quote' },
    'a byte over');
  t.deepEqual(decodeQuoteId(k, 'm-rt', `q1${bound.slice(3)}`), { ok: false, why: 'not_a_quote' });
});

test('quote guard: ACCEPT_QUOTE takes a quote until 1 ms before expires_ms and refuses it from ' +
  'expires_ms on (quote_expired)', async (t) => {
  const f = await coreFixture(t);
  const a = quote(f, { quote_ttl_ms: 5000 });
  const b = quote(f, { quote_ttl_ms: 5000 });
  await credit(f, 'm-q', BigInt(a.quote_units) * 2n);
  t.is(a.expires_ms, f.clock.ms + 5000);
  f.clock.set(a.expires_ms - 1);
  t.is((await acceptQuote(f.ctx, a.quote_id, 'm-q')).state, 'accepted');
  f.clock.set(b.expires_ms);
  const e = await refused(t, acceptQuote(f.ctx, b.quote_id, 'm-q'), 'quote_expired');
  t.deepEqual(e.details, { state: 'expired' });
  const acct = await f.ctx.ledger.account('m-q');
  t.deepEqual([acct.available, acct.reserved], [BigInt(a.quote_units), BigInt(a.quote_units)], 'b reserved nothing');
  await ledgerHolds(t, f);
});

test('quote guard: a stored quote whose id carries no terms (stored before ids did) answers only its '
  + 'machine', async (t) => {
  const f = await coreFixture(t);
  const q = quote(f, {});
  const legacy = { ...q, quote_id: 'q_legacy_0001', state: 'accepted' as const };
  await f.ctx.store.write([put('quotes', legacy.quote_id, legacy as unknown as Record<string, unknown>)]);
  t.is((await findQuote(f.ctx, legacy.quote_id, 'm-q')).stored, true);
  await refused(t, findQuote(f.ctx, legacy.quote_id, 'm-other'), 'quote_wrong_machine');
  await refused(t, findQuote(f.ctx, 'q_never_issued', 'm-q'), 'not_found');
});

test('quote guard: a quote is accepted once (quote_not_issued), by its machine only, and only when ' +
  'available covers it (insufficient_balance)', async (t) => {
  const f = await coreFixture(t);
  const q = quote(f, {});
  const units = BigInt(q.quote_units);
  t.true(units > 0n);
  await credit(f, 'm-q', units - 1n);
  const e = await refused(t, acceptQuote(f.ctx, q.quote_id, 'm-q'), 'insufficient_balance');
  t.deepEqual(e.details, { available_units: String(units - 1n), quote_units: String(units) });
  await credit(f, 'm-q', 1n);
  await refused(t, acceptQuote(f.ctx, q.quote_id, 'm-other'), 'quote_wrong_machine');
  t.is((await acceptQuote(f.ctx, q.quote_id, 'm-q')).state, 'accepted');
  t.deepEqual(await f.ctx.ledger.account('m-q'), { available: 0n, reserved: units, seq: 3 }, 'down to exactly zero');
  await credit(f, 'm-q', units);
  const again = await refused(t, acceptQuote(f.ctx, q.quote_id, 'm-q'), 'quote_not_issued');
  t.deepEqual(again.details, { state: 'accepted' });
  await refused(t, acceptQuote(f.ctx, q.quote_id, 'm-other'), 'quote_wrong_machine');
  t.is((await f.ctx.ledger.account('m-q')).reserved, units, 'reserved once');
  await ledgerHolds(t, f);
});

test('quote guard: a quote priced by another price book is expired, never honoured', async (t) => {
  const f = await coreFixture(t);
  const q = quote(f, {});
  await credit(f, 'm-q', 10n ** 9n);
  const d = decodeQuoteId(f.identity.quoteKey(), 'm-q', q.quote_id);
  if (!d.ok) throw new Error('own quote does not decode');
  const cheaper = encodeQuoteId(f.identity.quoteKey(), 'm-q', { ...d.terms, quote_units: d.terms.quote_units - 1 });
  t.is((await findQuote(f.ctx, cheaper, 'm-q')).q.state, 'expired');
  await refused(t, acceptQuote(f.ctx, cheaper, 'm-q'), 'quote_expired');
  t.is((await acceptQuote(f.ctx, q.quote_id, 'm-q')).state, 'accepted');
});

test('quote guard: the sweeper releases an accepted quote\'s reservation at its exact expiry, not before',
  async (t) => {
  const f = await coreFixture(t);
  const q = quote(f, { quote_ttl_ms: 5000 });
  const units = BigInt(q.quote_units);
  await credit(f, 'm-q', units);
  await acceptQuote(f.ctx, q.quote_id, 'm-q');
  f.clock.set(q.expires_ms - 1);
  t.is(await sweepExpired(f.ctx), 0);
  t.is((await f.ctx.ledger.account('m-q')).reserved, units);
  f.clock.set(q.expires_ms);
  t.is(await sweepExpired(f.ctx), 1);
  const acct = await f.ctx.ledger.account('m-q');
  t.deepEqual([acct.available, acct.reserved], [units, 0n]);
  t.is(await f.store.get('quotes', q.quote_id), undefined, 'its record went');
  t.is(await sweepExpired(f.ctx), 0, 'released once');
  const journal = await f.ctx.ledger.journal('m-q');
  t.deepEqual(journal.map((j) => j.kind), ['credit', 'reserve', 'release']);
  await ledgerHolds(t, f);
});

// --- executions -----------------------------------------------------------------------------------

async function accepted(f: Fixture, args: Record<string, unknown> = {}) {
  const q = quote(f, { quote_ttl_ms: 5000, ...args });
  await credit(f, 'm-q', BigInt(q.quote_units));
  await acceptQuote(f.ctx, q.quote_id, 'm-q');
  return q;
}

test('execution guard: an accepted quote executes until 1 ms before expiry; from expires_ms on it is ' +
  'quote_expired and its reservation is released, uncharged', async (t) => {
  const f = await coreFixture(t);
  const a = await accepted(f);
  const b = await accepted(f);
  f.clock.set(a.expires_ms - 1);
  const r = await execute(f.ctx, 'SUBMIT_ID', { quote_id: a.quote_id, machine_id: 'm-q', plain_hex: 'abcdef' });
  t.regex(r.receipt_id as string, /^rcpt_/);
  f.clock.set(b.expires_ms);
  const e = await refused(t, execute(f.ctx, 'SUBMIT_ID', { quote_id: b.quote_id, machine_id: 'm-q', plain_hex: 'ab' }),
    'quote_expired');
  t.regex(e.message, /reservation was released/);
  const acct = await f.ctx.ledger.account('m-q');
  t.deepEqual([acct.available, acct.reserved], [BigInt(b.quote_units), 0n], 'a captured, b released');
  await ledgerHolds(t, f);
});

test('execution guard: only an accepted quote of this service and machine runs; the input must fit ' +
  'the quote (input_mismatch)', async (t) => {
  const f = await coreFixture(t);
  const issued = quote(f, {});
  const exec = (cmd: 'SUBMIT_ID' | 'ATTEST_EVENT', a: Record<string, unknown>) =>
    execute(f.ctx, cmd, { quote_id: issued.quote_id, machine_id: 'm-q', ...a });
  await refused(t, exec('SUBMIT_ID', { plain_hex: 'ab' }), 'quote_not_accepted');
  const q = await accepted(f, { bytes: 3, bits: 64 });
  const run = (cmd: 'SUBMIT_ID' | 'ATTEST_EVENT', a: Record<string, unknown>, m = 'm-q') =>
    execute(f.ctx, cmd, { quote_id: q.quote_id, machine_id: m, ...a });
  await refused(t, run('ATTEST_EVENT', { plain_hex: 'ab' }), 'quote_wrong_service');
  await refused(t, run('SUBMIT_ID', { plain_hex: 'ab' }, 'm-other'), 'quote_wrong_machine');
  const big = await refused(t, run('SUBMIT_ID', { plain_hex: 'abcdef01' }), 'input_mismatch');
  t.deepEqual(big.details, { field: 'bytes' });
  const bits = await refused(t, run('SUBMIT_ID', { plain_hex: 'ab', bits: 65 }), 'input_mismatch');
  t.deepEqual(bits.details, { field: 'bits' });
  t.deepEqual(await f.ctx.ledger.account('m-q'), { available: 0n, reserved: BigInt(q.quote_units), seq: 2 },
    'nothing was charged');
  t.is((await run('SUBMIT_ID', { plain_hex: 'abcdef', bits: 64 })).status, 'ok', 'exactly the quoted size');
  await ledgerHolds(t, f);
});

test('execution guard: a quote quoted with its input runs with that input only (digest)', async (t) => {
  const f = await coreFixture(t, {}, { pool: true });
  const q = quote(f, { service: 'make-bct', bytes: undefined, plain_hex: 'aabbcc' });
  t.is(q.input_field, 'plain_hex');
  await credit(f, 'm-q', BigInt(q.quote_units));
  await acceptQuote(f.ctx, q.quote_id, 'm-q');
  const other = { quote_id: q.quote_id, machine_id: 'm-q', plain_hex: 'aabbcd' };
  const e = await refused(t, execute(f.ctx, 'MAKE_BCT', other), 'input_mismatch');
  t.deepEqual(e.details, { field: 'plain_hex' });
  const r = await execute(f.ctx, 'MAKE_BCT', { quote_id: q.quote_id, machine_id: 'm-q', plain_hex: 'aabbcc' });
  t.is(r.status, 'ok');
});

test('execution guard: an executed quote replays the same request and refuses another ' +
  '(execution_mismatch); its receipt verifies and the capture is journaled once', async (t) => {
  const f = await coreFixture(t);
  const q = await accepted(f);
  const args = { quote_id: q.quote_id, machine_id: 'm-q', plain_hex: 'abcdef' };
  const r = await execute(f.ctx, 'SUBMIT_ID', args);
  t.deepEqual(await execute(f.ctx, 'SUBMIT_ID', args), { ...r, replayed: true });
  await refused(t, execute(f.ctx, 'SUBMIT_ID', { ...args, plain_hex: 'abcdee' }), 'execution_mismatch');
  await refused(t, execute(f.ctx, 'SUBMIT_ID', { ...args, bits: 1 }), 'execution_mismatch');
  f.clock.advance(10 * 60_000);
  t.deepEqual(await execute(f.ctx, 'SUBMIT_ID', args), { ...r, replayed: true }, 'an executed quote never expires');
  const stored = (await f.store.get('receipts', r.receipt_id as string)) as unknown as SignedReceipt;
  t.deepEqual(verdict(f.identity, stored), { valid: true });
  t.deepEqual([stored.receipt.machine_id, stored.receipt.units_charged], ['m-q', String(q.quote_units)]);
  const journal = await f.ctx.ledger.journal('m-q');
  t.deepEqual(journal.map((j) => [j.kind, j.d_available, j.d_reserved]), [
    ['credit', String(q.quote_units), '0'], ['reserve', `-${q.quote_units}`, String(q.quote_units)],
    ['capture', '0', `-${q.quote_units}`],
  ]);
  await ledgerHolds(t, f);
});
