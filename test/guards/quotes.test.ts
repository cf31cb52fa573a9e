// Guards of the quote life cycle (src/core/quotes.ts), in process with a clock the test moves: what
// QUOTE binds (input digest and size, the service's maximum, a pulse's output, the default priority),
// what a quote record says at its exact expiry, which ids cost a store read, how a stored quote ends
// (released, deleted, counted), which quotes never expire (executed ones) and what the sweeper skips.
// The transition counters are shared by the whole process, so these tests run one at a time.
import test from 'ava';
import { execute } from '../../src/core/executions.ts';
import {
  QUOTES_ENTERING, acceptQuote, createQuote, expiryKey, findQuote, quoteView, sweepExpired, type QuoteRecord,
} from '../../src/core/quotes.ts';
import { quoteTransitions } from '../../src/metrics/metrics.ts';
import { sha256Hex } from '../../src/protocol/canonical.ts';
import { price, priorityClass } from '../../src/protocol/pricing.ts';
import { BCT_MAX_PLAINTEXT } from '../../src/protocol/services.ts';
import { key, numPart } from '../../src/store/key-codec.ts';
import { put, type Json } from '../../src/store/store.ts';
import { coreFixture, type Fixture } from '../support/core-fixture.ts';
import { credit, ledgerHolds, quote, refused } from '../support/money.ts';

/** svc_quote_transitions_total by state, as the metrics endpoint renders it. */
async function transitions(): Promise<Record<string, number>> {
  const m = await quoteTransitions.get();
  return Object.fromEntries(m.values.map((v) => [v.labels.state!, v.value]));
}

/** What each state's counter moved by since `before`. */
async function moved(before: Record<string, number>): Promise<Record<string, number>> {
  const now = await transitions();
  return Object.fromEntries(Object.keys(now).map((s) => [s, now[s]! - (before[s] ?? 0)]));
}

const NONE = { issued: 0, accepted: 0, executed: 0, expired: 0 };

/** Point reads of the store, answered by the database or its cache. */
const reads = (f: Fixture) => f.store.stats.reads + f.store.stats.cacheHits;

async function acceptedQuote(f: Fixture, args: Record<string, unknown> = {}): Promise<QuoteRecord> {
  const q = quote(f, { quote_ttl_ms: 5000, ...args });
  await credit(f, 'm-q', BigInt(q.quote_units));
  return acceptQuote(f.ctx, q.quote_id, 'm-q');
}

test.serial('quote guard: the transition counters are labelled by state, one cell each', async (t) => {
  t.deepEqual(Object.keys(await transitions()).sort(), ['accepted', 'executed', 'expired', 'issued']);
  t.is(QUOTES_ENTERING.issued, quoteTransitions.at('issued'));
  t.is(QUOTES_ENTERING.expired, quoteTransitions.at('expired'));
});

test.serial('quote guard: MAKE_BCT quoted with its input binds the digest and size; a disagreeing bytes or an '
  + 'input past the service\'s maximum is invalid_request naming the field', async (t) => {
  const f = await coreFixture(t);
  const withInput = quote(f, { service: 'make-bct', bytes: undefined, plain_hex: 'aabbcc' });
  t.like(withInput, { bytes: 3, input_field: 'plain_hex', input_digest: sha256Hex(Buffer.from('aabbcc', 'hex')) });
  t.like(quote(f, { service: 'make-bct', bytes: 3, plain_hex: 'aabbcc' }), { bytes: 3, input_field: 'plain_hex' });
  const bySize = quote(f, { service: 'make-bct', bytes: 7 });
  t.like(bySize, { bytes: 7, input_field: null, input_digest: null }, 'bound by size only');
  const e = await refused(t, () => quote(f, { service: 'make-bct', bytes: 5, plain_hex: 'aabbcc' }), 'invalid_request');
  t.is(e.message, 'bytes (5) does not match plain_hex (3 bytes)');
  t.deepEqual(e.details, { field: 'bytes' });
  // the schema stops a longer input first; createQuote holds the bound by itself too
  const args = (n: number) => ({
    service: 'make-bct', machine_id: 'm-q', plain_hex: 'ab'.repeat(n), bits: 256, max_output: 1024,
    quote_ttl_ms: 5000,
  });
  t.is(createQuote(f.ctx, args(BCT_MAX_PLAINTEXT)).bytes, BCT_MAX_PLAINTEXT, 'the maximum itself');
  const big = await refused(t, () => createQuote(f.ctx, args(BCT_MAX_PLAINTEXT + 1)), 'invalid_request');
  t.is(big.message, `plain_hex is ${BCT_MAX_PLAINTEXT + 1} bytes; make-bct takes at most ${BCT_MAX_PLAINTEXT}`);
  t.deepEqual(big.details, { field: 'plain_hex' });
});

test.serial('quote guard: a GET_PULSE quote must return all its output (max_output); other services do not '
  + 'check it; the priority defaults to normal and is priced', async (t) => {
  const f = await coreFixture(t);
  const e = await refused(t, () => quote(f, { service: 'get-pulse', bytes: 0, bits: 64, max_output: 7 }),
    'invalid_request');
  t.is(e.message, 'bits 64 produce 8 bytes of output, above max_output 7');
  t.deepEqual(e.details, { field: 'max_output' });
  t.is(quote(f, { service: 'get-pulse', bytes: 0, bits: 64, max_output: 8 }).max_output, 8, 'exactly enough');
  const submit = createQuote(f.ctx, {
    service: 'submit-id', machine_id: 'm-q', bytes: 3, bits: 4096, max_output: 0, quote_ttl_ms: 5000,
  });
  t.is(submit.priority, 'normal', 'no priority given');
  t.deepEqual(submit.price, price('submit-id', 4096, 3, priorityClass('normal')));
  const high = quote(f, { priority: 'high' });
  t.is(high.priority, 'high');
  t.deepEqual(high.price, price('submit-id', high.bits, 3, priorityClass('high')));
});

test.serial('quote guard: a quote\'s view is its record without expires_ms; the id says issued until 1 ms '
  + 'before expires_ms and expired from it on, unstored', async (t) => {
  const f = await coreFixture(t);
  const q = quote(f, { quote_ttl_ms: 5000 });
  const { expires_ms: _e, ...rest } = q;
  t.deepEqual(quoteView(q), rest);
  t.false('expires_ms' in quoteView(q));
  t.deepEqual(q.price, { ...price('submit-id', q.bits, 3, priorityClass('normal')), quote_units: q.quote_units });
  f.clock.set(q.expires_ms - 1);
  t.deepEqual(await findQuote(f.ctx, q.quote_id, 'm-q'), { q, stored: false });
  f.clock.set(q.expires_ms);
  t.deepEqual(await findQuote(f.ctx, q.quote_id, 'm-q'), { q: { ...q, state: 'expired' }, stored: false });
});

test.serial('quote guard: a forged q1 id costs no store read; an id of another form costs one; each refusal '
  + 'names the quote', async (t) => {
  const f = await coreFixture(t);
  const q = quote(f, {});
  const forged = `${q.quote_id.slice(0, -2)}AA`;
  let before = reads(f);
  const e = await refused(t, findQuote(f.ctx, forged, 'm-q'), 'not_found');
  t.is(e.message, `no quote ${forged}`);
  t.is(reads(f) - before, 0, 'refused from the id alone');
  before = reads(f);
  const other = await refused(t, findQuote(f.ctx, 'q_never_issued', 'm-q'), 'not_found');
  t.is(other.message, 'no quote q_never_issued');
  t.is(reads(f) - before, 1, 'a legacy id is looked up');
  const wrong = await refused(t, findQuote(f.ctx, q.quote_id, 'm-other'), 'quote_wrong_machine');
  t.is(wrong.message, 'the quote was issued to another machine_id');
});

test.serial('quote guard: transitions count what is durable: issued, accepted, and expired only for a stored '
  + 'quote; an expired accepted quote releases its reservation, and its records go', async (t) => {
  const f = await coreFixture(t);
  let before = await transitions();
  const q = await acceptedQuote(f);
  t.deepEqual(await moved(before), { ...NONE, issued: 1, accepted: 1 });
  const units = BigInt(q.quote_units);
  const entry = await f.store.get('quote_expiry', expiryKey(q));
  t.deepEqual(entry, { quote_id: q.quote_id, machine_id: 'm-q' });

  // an issued quote is never stored: its expiry counts nothing and releases nothing
  const issued = quote(f, { quote_ttl_ms: 5000 });
  f.clock.set(q.expires_ms);
  before = await transitions();
  const plain = await refused(t, acceptQuote(f.ctx, issued.quote_id, 'm-q'), 'quote_expired');
  t.is(plain.message, `quote expired at ${issued.expires_at}`);
  t.deepEqual(plain.details, { state: 'expired' });
  t.deepEqual(await moved(before), NONE);

  // the accepted one: released (journaled with its quote id), its record and expiry entry deleted, counted
  before = await transitions();
  const e = await refused(t, acceptQuote(f.ctx, q.quote_id, 'm-q'), 'quote_expired');
  t.is(e.message, `quote expired at ${q.expires_at}; its reservation was released`);
  t.deepEqual(await moved(before), { ...NONE, expired: 1 });
  t.deepEqual(await f.ctx.ledger.account('m-q'), { available: units, reserved: 0n, seq: 3 });
  const journal = await f.ctx.ledger.journal('m-q');
  t.deepEqual(journal.map((j) => [j.kind, j.ref]), [
    ['credit', { test: 'credit' }], ['reserve', { quote_id: q.quote_id }], ['release', { quote_id: q.quote_id }],
  ]);
  t.is(await f.store.get('quotes', q.quote_id), undefined);
  t.is(await f.store.get('quote_expiry', expiryKey(q)), undefined);
  await ledgerHolds(t, f);
});

test.serial('quote guard: ACCEPT names what is short (insufficient_balance) and what the quote is (quote_not_issued)',
  async (t) => {
  const f = await coreFixture(t);
  const q = quote(f, {});
  await credit(f, 'm-q', BigInt(q.quote_units) - 1n);
  const e = await refused(t, acceptQuote(f.ctx, q.quote_id, 'm-q'), 'insufficient_balance');
  t.is(e.message, `available ${BigInt(q.quote_units) - 1n} units, quote needs ${q.quote_units}`);
  await credit(f, 'm-q', 1n);
  await acceptQuote(f.ctx, q.quote_id, 'm-q');
  const again = await refused(t, acceptQuote(f.ctx, q.quote_id, 'm-q'), 'quote_not_issued');
  t.is(again.message, 'quote is accepted, not issued');
});

test.serial('quote guard: ACCEPT writes the seal\'s ops in its own batch, given the accepted record', async (t) => {
  const f = await coreFixture(t);
  const q = quote(f, {});
  await credit(f, 'm-q', BigInt(q.quote_units));
  const sealed: QuoteRecord[] = [];
  const next = await acceptQuote(f.ctx, q.quote_id, 'm-q', (r) => {
    sealed.push(r);
    return [put('idempotency', 'seal-test', { quote_id: r.quote_id, state: r.state })];
  });
  t.deepEqual(sealed, [next]);
  t.is(next.state, 'accepted');
  t.is(next.accepted_at, f.clock.now().toISOString());
  t.deepEqual(await f.store.get('idempotency', 'seal-test'), { quote_id: q.quote_id, state: 'accepted' });
});

test.serial('quote guard: a quote stored as issued (before ids carried terms) expires without a release; an '
  + 'executed quote never expires: past its expiry it is quote_not_issued and stays stored', async (t) => {
  const f = await coreFixture(t);
  const q = quote(f, { quote_ttl_ms: 5000 });
  await credit(f, 'm-q', BigInt(q.quote_units));
  const legacy = { ...q, quote_id: 'q_legacy_issued' };
  await f.store.write([put('quotes', legacy.quote_id, legacy as unknown as Json)]);
  t.is((await acceptQuote(f.ctx, legacy.quote_id, 'm-q')).state, 'accepted', 'before its expiry it is issued');
  const legacy2 = { ...q, quote_id: 'q_legacy_issued_2' };
  await f.store.write([put('quotes', legacy2.quote_id, legacy2 as unknown as Json)]);

  const done = await acceptedQuote(f, { quote_ttl_ms: 5000 });
  await execute(f.ctx, 'SUBMIT_ID', { quote_id: done.quote_id, machine_id: 'm-q', plain_hex: 'abcdef' });
  f.clock.set(q.expires_ms + 60_000);
  const account = await f.ctx.ledger.account('m-q');
  const before = await transitions();
  const e = await refused(t, acceptQuote(f.ctx, legacy2.quote_id, 'm-q'), 'quote_expired');
  t.is(e.message, `quote expired at ${legacy2.expires_at}`, 'nothing was reserved, nothing released');
  t.is(await f.store.get('quotes', legacy2.quote_id), undefined, 'its record went');
  t.deepEqual(await moved(before), { ...NONE, expired: 1 });

  const executed = await refused(t, acceptQuote(f.ctx, done.quote_id, 'm-q'), 'quote_not_issued');
  t.is(executed.message, 'quote is executed, not issued');
  t.deepEqual(executed.details, { state: 'executed' });
  t.like(await f.store.get('quotes', done.quote_id), { state: 'executed' });
  const replay = await execute(f.ctx, 'SUBMIT_ID', { quote_id: done.quote_id, machine_id: 'm-q', plain_hex: 'abcdef' });
  t.is(replay.replayed, true, 'its result still replays');
  // the legacy quote accepted above did expire: ACCEPT released it, the rest is unchanged
  t.deepEqual((await f.ctx.ledger.account('m-q')).seq, account.seq);
  await ledgerHolds(t, f);
});

test.serial('quote guard: the sweeper reads only due expiry entries, and skips one whose quote is gone or not '
  + 'accepted (it releases nothing twice)', async (t) => {
  const f = await coreFixture(t);
  const later = await acceptedQuote(f, { quote_ttl_ms: 60_000 });
  const done = await acceptedQuote(f, { quote_ttl_ms: 5000 });
  await execute(f.ctx, 'SUBMIT_ID', { quote_id: done.quote_id, machine_id: 'm-q', plain_hex: 'abcdef' });
  f.clock.set(done.expires_ms);
  // nothing due: the accepted quote that is not yet due is not even read
  let before = reads(f);
  t.is(await sweepExpired(f.ctx), 0);
  t.is(reads(f) - before, 0);
  // entries that name no accepted quote: one whose quote is gone, one for the executed quote
  const due = f.clock.ms - 1;
  await f.store.write([
    put('quote_expiry', key(numPart(due), 'q_gone'), { quote_id: 'q_gone', machine_id: 'm-q' }),
    put('quote_expiry', expiryKey(done), { quote_id: done.quote_id, machine_id: 'm-q' }),
  ]);
  const account = await f.ctx.ledger.account('m-q');
  before = reads(f);
  t.is(await sweepExpired(f.ctx), 0);
  t.is(reads(f) - before, 4, 'per due entry: its quote, and its machine\'s account (the seq withMachine notes)');
  t.deepEqual(await f.ctx.ledger.account('m-q'), account, 'nothing released');
  f.clock.set(later.expires_ms);
  const counted = await transitions();
  t.is(await sweepExpired(f.ctx), 1, 'the accepted one, once due');
  t.deepEqual(await moved(counted), { ...NONE, expired: 1 });
  t.is((await f.ctx.ledger.account('m-q')).reserved, 0n);
  await ledgerHolds(t, f);
});
