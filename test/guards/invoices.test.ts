// Guards of the invoice life cycle (src/core/invoices.ts), in process with a clock the test moves:
// what an invoice shows and owes (its view, the decimal amount, the rail by network AND asset), the
// amount index (what holds an amount, kept through the hold past expiry, settled or not, and the holder
// before it), allocation under the rail lock (one
// amount, one invoice; a full range is busy after exactly its tries), expiry on read (once, counted,
// final even when the clock steps back), settlement (who it credits, what the journal says, a
// deposit riding in its batch, the open-invoice slots it frees and keeps) and LIST_INVOICES (filters,
// pages, the scan bound). The transition counters are shared by the whole process: serial tests.
import test from 'ava';
import {
  decimal, fundAccount, invoiceHoldingAmount, invoiceView, listInvoices, loadInvoice,
  railFor, refreshInvoice, settle, settleInvoice, type InvoiceFilter, type InvoiceRecord,
} from '../../src/core/invoices.ts';
import { argsAs } from '../../src/core/call.ts';
import { getMachine } from '../../src/core/machines.ts';
import { invoiceTransitions } from '../../src/metrics/metrics.ts';
import { commandSpec } from '../../src/protocol/registry.ts';
import { LIMITS } from '../../src/protocol/schemas.ts';
import { validateArgs } from '../../src/protocol/validate.ts';
import { idPart, key } from '../../src/store/key-codec.ts';
import { del, put } from '../../src/store/store.ts';
import { coreFixture, type Fixture } from '../support/core-fixture.ts';
import { ledgerHolds, refused } from '../support/money.ts';
import { txRef } from '../support/references.ts';
import { DEFAULT_AMOUNT_HOLD_MS } from '../../src/core/config.ts';

/** A payment reference on the invoices' rail. */
const R = (seed: string) => txRef(seed, 'USDT_TRON');

const TRON = { network: 'TRON', asset: 'USDT' };
const BASE = { network: 'Base', asset: 'USDC' };

/** svc_invoice_transitions_total by state. */
async function transitions(): Promise<Record<string, number>> {
  const m = await invoiceTransitions.get();
  return Object.fromEntries(m.values.map((v) => [v.labels.state!, v.value]));
}

async function moved(before: Record<string, number>): Promise<Record<string, number>> {
  const now = await transitions();
  const all = ['created', 'settled', 'settled_late', 'expired'];
  return Object.fromEntries(all.map((s) => [s, (now[s] ?? 0) - (before[s] ?? 0)]));
}

/** A funded invoice of `units` on a rail for `machine` (claimed on its first invoice; its token kept). */
async function invoice(
  f: Fixture, machine: string, units = 1, rail = TRON, tokens = new Map<string, string>(),
): Promise<InvoiceRecord> {
  const r = await fundAccount(f.ctx, { machine_id: machine, units, ...rail }, tokens.get(machine));
  if (r.machine_token) tokens.set(machine, r.machine_token);
  return r.invoice;
}

const amountHolder = async (f: Fixture, inv: InvoiceRecord) =>
  (await invoiceHoldingAmount(f.ctx, inv.rail, inv.amount_due))?.invoice_id;

test('invoice guard: the view is the record without expires_ms; amounts show six decimals', (t) => {
  const inv = { invoice_id: 'inv_x', state: 'pending', expires_ms: 5, amount_due: '1000001' } as InvoiceRecord;
  t.deepEqual(invoiceView(inv), { invoice_id: 'inv_x', state: 'pending', amount_due: '1000001' });
  t.is(inv.expires_ms, 5, 'the record itself is unchanged');
  t.is(decimal(1_000_001n), '1.000001');
  t.is(decimal(25_099_999n), '25.099999');
  t.is(decimal(7n), '0.000007');
  t.is(decimal(3_000_000n), '3.000000');
});

test('invoice guard: a rail is chosen by its network and its asset together', async (t) => {
  const f = await coreFixture(t);
  t.is(railFor(f.ctx, 'Solana', 'USDT').rail, 'USDT_SOLANA');
  t.is(railFor(f.ctx, 'Solana', 'USDC').rail, 'USDC_SOLANA');
  t.is(railFor(f.ctx, 'Base', 'USDC').address, 'addr-USDC_BASE');
  for (const [network, asset] of [['Base', 'USDT'], ['TRON', 'USDC'], ['Ethereum', 'USDC']] as const) {
    const e = await refused(t, () => railFor(f.ctx, network, asset), 'unsupported_rail');
    t.is(e.message, `${asset} on ${network} is not a payment rail `
      + '(rails: USDT/TRON, USDC/Base, USDC/Solana, USDT/Solana)');
  }
  const e = await refused(t, loadInvoice(f.ctx, 'inv_missing'), 'not_found');
  t.is(e.message, 'no invoice inv_missing');
});

test.serial('invoice guard: FUND_ACCOUNT writes a pending invoice, its amount index entry and the claim; '
  + 'counted once created', async (t) => {
  const f = await coreFixture(t);
  const before = await transitions();
  const replay: string[] = [];
  const r = await fundAccount(f.ctx, { machine_id: 'm-new', units: 2, ...BASE }, undefined, {
    record: 'idem-record-1', seal: (x) => { replay.push(x.invoice.invoice_id); return []; },
  });
  const inv = r.invoice;
  t.is(inv.state, 'pending');
  t.deepEqual(replay, [inv.invoice_id], 'the reply is sealed in the same batch');
  t.deepEqual(await loadInvoice(f.ctx, inv.invoice_id), inv);
  t.is(await amountHolder(f, inv), inv.invoice_id, 'the rail\'s amount index names it');
  t.is(BigInt(inv.amount_due) / 1_000_000n, 2n);
  t.is(inv.amount_due_decimal, decimal(BigInt(inv.amount_due)));
  t.is(inv.credit_units, (BigInt(inv.amount_due) * 100n).toString());
  const m = await getMachine(f.store, 'm-new');
  t.is(m?.replay_record, 'idem-record-1', 'the claim names the record that keeps its token');
  t.deepEqual(m?.open_invoices, { [inv.invoice_id]: inv.expires_ms });
  t.deepEqual(await moved(before), { created: 1, settled: 0, settled_late: 0, expired: 0 });
  // without an idempotency key the claim names no record
  await fundAccount(f.ctx, { machine_id: 'm-plain', units: 1, ...BASE }, undefined);
  t.false('replay_record' in (await getMachine(f.store, 'm-plain'))!);
  const e = await refused(t, (async () => {
    const tokens = new Map<string, string>();
    for (let i = 0; i < 4; i++) await invoice(f, 'm-cap', 1, TRON, tokens);
  })(), 'too_many_open_invoices');
  t.is(e.message, 'machine_id has 3 open invoices (the most allowed): pay one or let one expire first');
});

test('invoice guard: the rail lock makes amount allocation one at a time: one free amount, one invoice', async (t) => {
  // one possible suffix: two machines funding the same units on one rail at once cannot both get it
  const f = await coreFixture(t, { invoiceSuffixMax: 1 });
  const results = await Promise.allSettled([
    fundAccount(f.ctx, { machine_id: 'm-a', units: 1, ...TRON }, undefined),
    fundAccount(f.ctx, { machine_id: 'm-b', units: 1, ...TRON }, undefined),
  ]);
  t.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
  const e = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
  t.is(e.reason.code, 'busy');
  t.is(e.reason.message, 'could not allocate a unique amount for this rail; retry');
  // another rail, or other units, have their own amounts
  t.is((await fundAccount(f.ctx, { machine_id: 'm-c', units: 1, ...BASE }, undefined)).invoice.amount_due, '1000001');
  t.is((await fundAccount(f.ctx, { machine_id: 'm-d', units: 2, ...TRON }, undefined)).invoice.amount_due, '2000001');
});

test('invoice guard: a full amount range is busy after exactly 64 tries, each one read of the index', async (t) => {
  const f = await coreFixture(t, { invoiceSuffixMax: 1 });
  await fundAccount(f.ctx, { machine_id: 'm-a', units: 1, ...TRON }, undefined);
  const reads = f.store.stats.reads;
  await refused(t, fundAccount(f.ctx, { machine_id: 'm-b', units: 1, ...TRON }, undefined), 'busy');
  // the account (a miss: the seq withMachine notes first), the machine record (a miss) and 64 lookups of
  // the one amount
  t.is(f.store.stats.reads - reads, 2 + 64);
  // two suffixes: both are used before busy, never a third
  const g = await coreFixture(t, { invoiceSuffixMax: 2 });
  const dues = new Set<string>();
  for (const m of ['m-1', 'm-2']) dues.add((await invoice(g, m)).amount_due);
  t.deepEqual([...dues].sort(), ['1000001', '1000002']);
  await refused(t, fundAccount(g.ctx, { machine_id: 'm-3', units: 1, ...TRON }, undefined), 'busy');
});

test('invoice guard: an amount is held by its invoice, on its rail only', async (t) => {
  const f = await coreFixture(t, { invoiceSuffixMax: 1 });
  const tokens = new Map<string, string>();
  const three = await invoice(f, 'm-n', 3, TRON, tokens); // 3.000001
  await invoice(f, 'm-other', 7, BASE); // 7.000001 on another rail
  t.is(await amountHolder(f, three), three.invoice_id);
  t.is(await invoiceHoldingAmount(f.ctx, 'USDT_TRON', '7000001'), undefined, 'another rail\'s amount');
  t.is(await invoiceHoldingAmount(f.ctx, 'USDT_TRON', '3000002'), undefined, 'an amount no invoice was given');
});

test.serial('invoice guard: expiry on read marks once, counted once, keeps the amount held; a later read changes '
  + 'nothing', async (t) => {
  const f = await coreFixture(t);
  const inv = await invoice(f, 'm-e');
  const before = await transitions();
  f.clock.set(inv.expires_ms - 1);
  t.is(await refreshInvoice(f.ctx, inv), inv, 'still pending: the same record back');
  f.clock.set(inv.expires_ms);
  const expired = await refreshInvoice(f.ctx, inv);
  t.deepEqual([expired.state, expired.expired_at], ['expired', new Date(inv.expires_ms).toISOString()]);
  t.deepEqual(await loadInvoice(f.ctx, inv.invoice_id), expired, 'written');
  t.is(await amountHolder(f, inv), inv.invoice_id, 'its amount stays held: a payment made in time may still land');
  f.clock.advance(5000);
  t.deepEqual(await refreshInvoice(f.ctx, inv), expired, 'the stale pending copy finds it expired already');
  t.deepEqual(await refreshInvoice(f.ctx, expired), expired);
  t.deepEqual(await moved(before), { created: 0, settled: 0, settled_late: 0, expired: 1 });
  // an invoice settled meanwhile is not expired by a stale pending copy
  const paid = await invoice(f, 'm-p');
  await settleInvoice(f.ctx, paid.invoice_id, R('tx-p'));
  f.clock.set(paid.expires_ms + 1);
  t.is((await refreshInvoice(f.ctx, paid)).state, 'settled');
  t.is((await loadInvoice(f.ctx, paid.invoice_id)).state, 'settled');
});

test('invoice guard: an old invoice never releases an amount a newer invoice holds', async (t) => {
  const f = await coreFixture(t, { invoiceSuffixMax: 1 });
  const old = await invoice(f, 'm-old');
  f.clock.set(old.expires_ms + DEFAULT_AMOUNT_HOLD_MS - 1); // past its expiry, within the hold: still its own
  await refused(t, invoice(f, 'm-new'), 'busy');
  f.clock.set(old.expires_ms + DEFAULT_AMOUNT_HOLD_MS); // the hold is over, and it was never marked: free to take
  const fresh = await invoice(f, 'm-new');
  t.is(fresh.amount_due, old.amount_due);
  t.is(await amountHolder(f, fresh), fresh.invoice_id);
  t.is((await refreshInvoice(f.ctx, old)).state, 'expired');
  t.is(await amountHolder(f, fresh), fresh.invoice_id, 'expiring the old one left the new one\'s entry');
  await settleInvoice(f.ctx, old.invoice_id, R('late-tx'), 'late');
  t.is(await amountHolder(f, fresh), fresh.invoice_id, 'crediting the old one late left it too');
  await settleInvoice(f.ctx, fresh.invoice_id, R('tx'));
  t.is(await amountHolder(f, fresh), fresh.invoice_id, 'settling the holder keeps it: a second payment is named');
  const entry = await f.store.get('invoice_amounts', key(fresh.rail, fresh.amount_due));
  t.like(entry, { previous: { invoice_id: old.invoice_id, expires_ms: old.expires_ms } }, 'the old holder is kept');
});

test('invoice guard: expiry is decided by the clock read under the machine lock; a final invoice is read '
  + 'without waiting for that lock', async (t) => {
  const f = await coreFixture(t);
  const inv = await invoice(f, 'm-lock');
  let release!: () => void;
  const held = new Promise<void>((r) => { release = r; });
  let entered!: () => void;
  const inside = new Promise<void>((r) => { entered = r; });
  const holder = f.ctx.ledger.withMachine('m-lock', async () => { entered(); await held; });
  await inside;
  f.clock.set(inv.expires_ms); // expired by the look outside the lock…
  const read = refreshInvoice(f.ctx, inv);
  await new Promise((r) => setImmediate(r));
  f.clock.set(inv.expires_ms - 1); // …but the clock stepped back before the lock was had
  release();
  await holder;
  t.is((await read).state, 'pending', 'the time read under the lock decides');
  t.is((await loadInvoice(f.ctx, inv.invoice_id)).state, 'pending');
  await settleInvoice(f.ctx, inv.invoice_id, R('tx-l'));
  const settled = await loadInvoice(f.ctx, inv.invoice_id);
  f.clock.set(inv.expires_ms + 1);
  let stop!: () => void;
  const busy = new Promise<void>((r) => { stop = r; });
  const longWrite = f.ctx.ledger.withMachine('m-lock', () => busy);
  const answer = await Promise.race([
    refreshInvoice(f.ctx, settled),
    new Promise((r) => setTimeout(() => r('waited for the lock'), 200)),
  ]);
  stop();
  await longWrite;
  t.is(answer, settled, 'a settled invoice past its expiry comes back as it is, at once');
});

test('invoice guard: an invoice whose machine record is gone still settles and credits', async (t) => {
  const f = await coreFixture(t);
  const inv = await invoice(f, 'm-gone', 2);
  const rec = await getMachine(f.store, 'm-gone');
  t.truthy(rec);
  await f.store.write([del('machines', idPart('m-gone'))]); // e.g. a restore that lost the machines sublevel
  t.is(await getMachine(f.store, 'm-gone'), undefined);
  const settled = await settleInvoice(f.ctx, inv.invoice_id, R('tx-g'));
  t.is(settled.state, 'settled');
  t.is(await getMachine(f.store, 'm-gone'), undefined, 'no machine record is made up');
  t.is((await f.ctx.ledger.account('m-gone')).available, BigInt(inv.credit_units));
  await ledgerHolds(t, f);
});

test('invoice guard: an invoice marked expired stays expired when the clock steps back', async (t) => {
  const f = await coreFixture(t);
  const inv = await invoice(f, 'm-back');
  f.clock.set(inv.expires_ms);
  await refreshInvoice(f.ctx, inv);
  f.clock.set(inv.expires_ms - 10_000); // NTP stepped the clock back
  await refused(t, settleInvoice(f.ctx, inv.invoice_id, R('tx')), 'invoice_expired');
  const late = await settleInvoice(f.ctx, inv.invoice_id, R('tx'), 'late');
  t.true(late.settled_late);
});

test.serial('invoice guard: settling credits the machine, journals why, counts it, and frees only its own '
  + 'open slot', async (t) => {
  const f = await coreFixture(t);
  const tokens = new Map<string, string>();
  const [a, b, c] = [await invoice(f, 'm-s', 1, TRON, tokens), await invoice(f, 'm-s', 2, TRON, tokens),
    await invoice(f, 'm-s', 3, TRON, tokens)];
  const before = await transitions();
  const settled = await settleInvoice(f.ctx, a.invoice_id, R('tx-a'));
  t.deepEqual([settled.state, settled.settlement_reference, settled.settled_at],
    ['settled', R('tx-a'), f.clock.now().toISOString()]);
  t.false('settled_late' in settled);
  t.false('deposit_id' in settled);
  const m = await getMachine(f.store, 'm-s');
  t.deepEqual(m?.open_invoices, { [b.invoice_id]: b.expires_ms, [c.invoice_id]: c.expires_ms });
  // b and c still count: one slot was freed, not all
  await invoice(f, 'm-s', 4, TRON, tokens);
  await refused(t, invoice(f, 'm-s', 5, TRON, tokens), 'too_many_open_invoices');
  const journal = await f.ctx.ledger.journal('m-s');
  t.deepEqual(journal.map((j) => [j.kind, j.d_available, j.ref]),
    [['credit', a.credit_units, { invoice_id: a.invoice_id, reference: R('tx-a') }]]);
  const p = await refused(t, settleInvoice(f.ctx, c.invoice_id, R('x'), 'late'), 'invoice_not_expired');
  t.is(p.message, `invoice is pending until ${c.expires_at}: settle it with SETTLE_INVOICE`);
  // a late credit says so in its journal entry
  f.clock.set(b.expires_ms);
  await settleInvoice(f.ctx, b.invoice_id, R('tx-b'), 'late');
  const last = (await f.ctx.ledger.journal('m-s')).at(-1)!;
  t.deepEqual(last.ref, { invoice_id: b.invoice_id, reference: R('tx-b'), late: 'true' });
  t.deepEqual(await moved(before), { created: 1, settled: 1, settled_late: 1, expired: 0 });
  const e = await refused(t, settleInvoice(f.ctx, a.invoice_id, R('tx-other')), 'invoice_already_settled');
  t.is(e.message, `invoice ${a.invoice_id} was already settled with reference "${R('tx-a')}"`);
  // another id: its last character changed (replacing it with a fixed one was c's own id 1 time in 64)
  const otherId = c.invoice_id.slice(0, -1) + (c.invoice_id.endsWith('0') ? '1' : '0');
  const x = await refused(t, settleInvoice(f.ctx, otherId, R('x')), 'not_found');
  t.regex(x.message, /^no invoice inv_/);
  await ledgerHolds(t, f);
});

test('invoice guard: a chain deposit settles pending or expired alike, its records and journal fields in '
  + 'the same batch, crediting what it paid', async (t) => {
  const f = await coreFixture(t);
  const pending = await invoice(f, 'm-d');
  const attach = (id: string, units?: bigint) => ({
    deposit_id: id, ops: [put('meta', `deposit-${id}`, { id })], ref: { deposit_id: id, tx: `0x${id}` },
    ...(units === undefined ? {} : { creditUnits: units }),
  });
  const one = await settle(f.ctx, pending.invoice_id, R('tx-d1'), 'claim', attach('d1', 5n));
  t.deepEqual([one.invoice.state, one.invoice.deposit_id, one.invoice.settled_late], ['settled', 'd1', undefined]);
  t.true(one.landed);
  t.deepEqual(await f.store.get('meta', 'deposit-d1'), { id: 'd1' });
  t.is((await f.ctx.ledger.account('m-d')).available, 5n, 'the units it paid, not the amount due');
  const j = (await f.ctx.ledger.journal('m-d')).at(-1)!;
  t.deepEqual(j.ref, { invoice_id: pending.invoice_id, reference: R('tx-d1'), deposit_id: 'd1', tx: '0xd1' });
  // past its expiry, a deposit's claim settles it late
  const expiring = await invoice(f, 'm-d2');
  f.clock.set(expiring.expires_ms);
  const two = await settle(f.ctx, expiring.invoice_id, R('tx-d2'), 'claim', attach('d2'));
  t.deepEqual([two.invoice.state, two.invoice.settled_late, two.invoice.deposit_id], ['settled', true, 'd2']);
  t.is((await f.ctx.ledger.account('m-d2')).available, BigInt(expiring.credit_units), 'the amount due');
  // the same reference again: the invoice as settled, and the deposit's batch did not land twice
  const three = await settle(f.ctx, expiring.invoice_id, R('tx-d2'), 'claim', attach('d3'));
  t.deepEqual(three, { invoice: two.invoice, landed: false });
  t.is(await f.store.get('meta', 'deposit-d3'), undefined);
  // a transfer made in time settles an expired invoice on time, however late it became final
  const slow = await invoice(f, 'm-d4');
  f.clock.set(slow.expires_ms + 60_000);
  const four = await settle(f.ctx, slow.invoice_id, R('tx-d4'), 'paid_in_time', attach('d4'));
  t.deepEqual([four.invoice.state, four.invoice.settled_late], ['settled', undefined]);
  await ledgerHolds(t, f);
});

// --- LIST_INVOICES ------------------------------------------------------------------------------------

/** LIST_INVOICES' args as the schema gives them (limit defaulted). */
/** LIST_INVOICES arguments as the gate hands them over: validated, defaults applied. */
function listArgs(a: Record<string, unknown>): InvoiceFilter {
  const args = { ...a };
  validateArgs(commandSpec('LIST_INVOICES')!, args);
  return argsAs<InvoiceFilter>(args);
}
const ids = (r: { invoices: Record<string, unknown>[] }) => r.invoices.map((i) => i.invoice_id as string);

test('invoice guard: LIST_INVOICES filters by state as callers see it, by machine and by settled_late',
  async (t) => {
  const f = await coreFixture(t);
  const tokens = new Map<string, string>();
  const a = await invoice(f, 'm-la', 1, TRON, tokens); // settled
  const b = await invoice(f, 'm-la', 2, TRON, tokens); // settled late
  const c = await invoice(f, 'm-lb', 1, TRON, tokens); // pending, then past expiry unmarked
  await settleInvoice(f.ctx, a.invoice_id, R('tx-a'));
  f.clock.set(b.expires_ms);
  await settleInvoice(f.ctx, b.invoice_id, R('tx-b'), 'late');
  f.clock.set(b.expires_ms - 1); // before c's expiry (same ttl, created no earlier)
  const d = await invoice(f, 'm-lb', 3, TRON, tokens); // pending until later
  const list = (x: Record<string, unknown>) => listInvoices(f.ctx, listArgs(x));
  const sorted = (xs: string[]) => [...xs].sort();
  t.deepEqual(ids(await list({})), sorted([a, b, c, d].map((i) => i.invoice_id)));
  t.deepEqual(ids(await list({ state: 'pending' })), sorted([c.invoice_id, d.invoice_id]));
  t.deepEqual(ids(await list({ state: 'settled' })), sorted([a.invoice_id, b.invoice_id]));
  t.deepEqual(ids(await list({ state: 'settled_late' })), [b.invoice_id]);
  t.deepEqual(ids(await list({ machine_id: 'm-lb' })), sorted([c.invoice_id, d.invoice_id]));
  t.deepEqual(ids(await list({ machine_id: 'm-lb', state: 'settled' })), []);
  t.deepEqual(ids(await list({ machine_id: 'm-none' })), []);
  // c past its expiry lists as expired (not written so: a read), d still pending
  f.clock.set(c.expires_ms);
  const r = await list({ state: 'expired' });
  t.deepEqual(ids(r), [c.invoice_id]);
  t.is(r.invoices[0]!.state, 'expired');
  t.false('expires_ms' in r.invoices[0]!, 'listed as viewed');
  t.deepEqual(ids(await list({ state: 'pending' })), [d.invoice_id]);
  t.is((await loadInvoice(f.ctx, c.invoice_id)).state, 'pending', 'listing wrote nothing');
  t.deepEqual([r.next_cursor, r.scanned], [null, 4]);
});

test('invoice guard: LIST_INVOICES pages from a cursor (exclusive) to the end, limit at a time', async (t) => {
  const f = await coreFixture(t);
  const all: string[] = [];
  for (let i = 0; i < 5; i++) all.push((await invoice(f, `m-pg${i}`)).invoice_id);
  all.sort();
  const page = (x: Record<string, unknown>) => listInvoices(f.ctx, listArgs(x));
  const p1 = await page({ limit: 2 });
  t.deepEqual([ids(p1), p1.next_cursor, p1.scanned], [all.slice(0, 2), all[1], 2]);
  const p2 = await page({ limit: 2, cursor: p1.next_cursor });
  t.deepEqual([ids(p2), p2.next_cursor, p2.scanned], [all.slice(2, 4), all[3], 2]);
  const p3 = await page({ limit: 2, cursor: p2.next_cursor });
  t.deepEqual([ids(p3), p3.next_cursor, p3.scanned], [all.slice(4), null, 1]);
  // exactly limit left: this page holds them, and says whether there is more only by looking
  const p4 = await page({ limit: 3, cursor: p1.next_cursor });
  t.deepEqual([ids(p4), p4.next_cursor], [all.slice(2), null]);
  // a cursor that is no invoice id starts after where it would sort
  const p5 = await page({ limit: 10, cursor: `${all[2]!}~` });
  t.deepEqual(ids(p5), all.slice(3));
  // a filter that skips records still counts them as scanned
  const p6 = await page({ machine_id: 'm-pg4' });
  t.deepEqual([p6.invoices.length, p6.scanned], [1, 5]);
});

test('invoice guard: LIST_INVOICES reads at most its scan bound per page, then names where to go on',
  async (t) => {
  const f = await coreFixture(t);
  const SCAN = LIMITS.listInvoicesScan;
  // SCAN + 3 invoice records, written straight to the store (funding them would take minutes)
  const ops = Array.from({ length: SCAN + 3 }, (_, i) => {
    const id = `inv_${String(i).padStart(6, '0')}`;
    const rec = { invoice_id: id, machine_id: i === SCAN + 1 ? 'm-far' : 'm-near', state: 'pending',
      expires_ms: f.clock.ms + 60_000 };
    return put('invoices', id, rec);
  });
  await f.store.write(ops);
  const r = await listInvoices(f.ctx, listArgs({ machine_id: 'm-far' }));
  t.deepEqual([r.invoices.length, r.scanned, r.next_cursor], [0, SCAN, `inv_${String(SCAN - 1).padStart(6, '0')}`]);
  const next = await listInvoices(f.ctx, listArgs({ machine_id: 'm-far', cursor: r.next_cursor }));
  t.deepEqual([ids(next), next.scanned, next.next_cursor], [[`inv_${String(SCAN + 1).padStart(6, '0')}`], 3, null]);
});
