// Which invoice a transfer pays (src/core/deposit-match.ts): the block time against the holders' lives,
// the decision per invoice state, and the near-amount scan (tolerance, nearest, candidates, the invoices
// open at the transfer's time), each at its exact boundary. In process on a real store.
import test from 'ava';
import {
  AMOUNT_TOLERANCE_DIVISOR, CLOCK_SKEW_MS, decide, invoiceAt, matchTransfer, paidAtMs,
} from '../../src/core/deposit-match.ts';
import { fundAccount, settleInvoice, type InvoiceRecord } from '../../src/core/invoices.ts';
import { key } from '../../src/store/key-codec.ts';
import { put } from '../../src/store/store.ts';
import { coreFixture } from '../support/core-fixture.ts';
import { txRef } from '../support/references.ts';

const inv = (over: Partial<InvoiceRecord>): InvoiceRecord => ({
  invoice_id: 'inv_a', state: 'pending', created_at: new Date(1_000_000).toISOString(), expires_ms: 2_000_000,
  ...over,
} as InvoiceRecord);

test('paidAtMs: a block time as milliseconds; none or a time that is not one is null', (t) => {
  t.is(paidAtMs('2026-11-22T12:00:00.000Z'), Date.UTC(2026, 10, 22, 12));
  t.is(paidAtMs(undefined), null);
  t.is(paidAtMs('not a time'), null);
});

test('invoiceAt: the newest holder created no later than the block time plus the clock skew', (t) => {
  const holder = inv({ invoice_id: 'inv_new', created_at: new Date(5_000_000).toISOString() });
  const previous = inv({ invoice_id: 'inv_old', created_at: new Date(1_000_000).toISOString() });
  const at = (ms: number | null) => invoiceAt({ holder, previous }, ms)?.invoice_id;
  t.is(at(5_000_000 - CLOCK_SKEW_MS), 'inv_new', 'at the skew: the holder');
  t.is(at(5_000_000 - CLOCK_SKEW_MS - 1), 'inv_old', 'before: the one before it');
  t.is(at(1_000_000 - CLOCK_SKEW_MS), 'inv_old');
  t.is(at(1_000_000 - CLOCK_SKEW_MS - 1), undefined, 'before both: neither');
  t.is(at(null), 'inv_new', 'no block time: the holder only');
  t.is(invoiceAt({ previous }, null), undefined);
  t.is(invoiceAt({}, 5_000_000), undefined);
});

test('decide: settled → duplicate or hand-settled; made before the expiry → credited; after → late', (t) => {
  t.deepEqual(decide(inv({ state: 'settled', deposit_id: 'dep_x' }), 0, 0),
    { queue: 'duplicate_payment', invoice: inv({ state: 'settled', deposit_id: 'dep_x' }) });
  const byHand = inv({ state: 'settled' });
  t.deepEqual(decide(byHand, 0, 0), { queue: 'invoice_already_settled', invoice: byHand });
  const open = inv({});
  t.deepEqual(decide(open, 1_999_999, 9_999_999), { credit: open, mode: 'paid_in_time' });
  t.deepEqual(decide(inv({ state: 'expired' }), 1_999_999, 9_999_999),
    { credit: inv({ state: 'expired' }), mode: 'paid_in_time' }, 'marked expired since: still its payment');
  t.deepEqual(decide(open, 2_000_000, 0), { queue: 'invoice_expired', invoice: open });
  t.deepEqual(decide(open, null, 1_999_999), { credit: open, mode: 'open' });
  t.deepEqual(decide(open, null, 2_000_000), { queue: 'invoice_expired', invoice: open });
});

test('matchTransfer: near amounts within the tolerance, the nearest named, counted; the open ones at the time',
  async (t) => {
    const f = await coreFixture(t, { invoiceSuffixMax: 99_999, maxOpenInvoices: 20, invoiceTtlMs: 60_000 });
    const open = async (m: string, units: number) =>
      (await fundAccount(f.ctx, { machine_id: m, units, network: 'Base', asset: 'USDC' }, undefined)).invoice;
    const now = f.clock.ms;
    const a = await open('near-a', 10), b = await open('near-b', 10), c = await open('near-c', 40);
    const [lo, hi] = [a, b].sort((x, y) => Number(BigInt(x.amount_due) - BigInt(y.amount_due)));
    const match = (amount: bigint, at = now) => matchTransfer(f.ctx, 'USDC_BASE', amount.toString(), at, now);
    // below both: the lower is nearer; above both: the higher; both within 5%
    t.like(await match(BigInt(lo!.amount_due) - 7n), { queue: 'amount_mismatch', invoice: lo, candidates: 2 });
    t.like(await match(BigInt(hi!.amount_due) + 7n), { queue: 'amount_mismatch', invoice: hi, candidates: 2 });
    // the tolerance's edge: exactly due / 20 away counts, one base unit more does not
    const due = BigInt(c.amount_due);
    const edge = due / AMOUNT_TOLERANCE_DIVISOR;
    t.like(await match(due - edge), { queue: 'amount_mismatch', invoice: c, candidates: 1 });
    t.like(await match(due + edge), { queue: 'amount_mismatch', invoice: c, candidates: 1 });
    t.deepEqual(await match(due + edge + 1n), { queue: 'unknown_amount' });
    t.deepEqual(await match(due - edge - 1n), { queue: 'unknown_amount' });
    // the invoices open at the transfer's time: from creation less the skew, until (not at) the expiry
    t.deepEqual(await match(99_000_000n, a.expires_ms), { queue: 'no_open_invoice' });
    t.deepEqual(await match(99_000_000n, a.expires_ms - 1), { queue: 'unknown_amount' });
    t.deepEqual(await match(99_000_000n, now - CLOCK_SKEW_MS), { queue: 'unknown_amount' });
    t.deepEqual(await match(99_000_000n, now - CLOCK_SKEW_MS - 1), { queue: 'no_open_invoice' });
    t.like(await match(due - 1n, now - CLOCK_SKEW_MS - 1), { queue: 'no_open_invoice' }, 'near, but not yet open');
    // a settled invoice is never named for another payment, and another rail's never counts
    await settleInvoice(f.ctx, c.invoice_id, txRef('paid-c'));
    t.deepEqual(await match(due - 1n), { queue: 'unknown_amount' });
    t.deepEqual(await matchTransfer(f.ctx, 'USDT_TRON', (due - 1n).toString(), now, now), { queue: 'no_open_invoice' });
    // an entry from before created_ms counts from any time; one of an invoice gone is not named
    const gone = { invoice_id: 'inv_gone', expires_ms: now + 1 };
    await f.store.write([put('invoice_amounts', key('USDC_BASE', '77000001'), gone)]);
    t.deepEqual(await match(77_000_002n, 0), { queue: 'unknown_amount' });
  });

test('matchTransfer: exact tolerance, a tie and a legacy entry of a settled invoice, on crafted amounts', async (t) => {
  const f = await coreFixture(t);
  const now = f.clock.ms;
  /** an invoice of `due` base units on Base, open now, written as the allocator writes it */
  const craft = async (id: string, due: bigint, state: InvoiceRecord['state'] = 'pending', createdMs?: number) => {
    const rec = { invoice_id: id, machine_id: `m-${id}`, state, rail: 'USDC_BASE', amount_due: due.toString(),
      created_at: new Date(now).toISOString(), expires_ms: now + 60_000 };
    const created = createdMs === undefined ? {} : { created_ms: createdMs };
    const entry = { invoice_id: id, expires_ms: now + 60_000, ...created };
    await f.store.write([put('invoices', id, rec), put('invoice_amounts', key('USDC_BASE', due.toString()), entry)]);
  };
  const match = (amount: bigint) => matchTransfer(f.ctx, 'USDC_BASE', amount.toString(), now, now);
  // 40,000,020 / 20 = 2,000,001 exactly: a gap of that much is within, one more is not
  await craft('inv_exact', 40_000_020n, 'pending', now);
  t.like(await match(40_000_020n - 2_000_001n), { invoice: { invoice_id: 'inv_exact' }, candidates: 1 });
  t.deepEqual(await match(40_000_020n - 2_000_002n), { queue: 'unknown_amount' });
  // equally near two invoices: the lower amount is named, both counted
  await craft('inv_lo', 10_000_100n, 'pending', now);
  await craft('inv_hi', 10_000_300n, 'pending', now);
  t.like(await match(10_000_200n), { queue: 'amount_mismatch', invoice: { invoice_id: 'inv_lo' }, candidates: 2 });
  t.like(await match(10_000_250n), { invoice: { invoice_id: 'inv_hi' }, candidates: 2 }, 'nearer to the higher');
  t.like(await match(10_000_101n), { invoice: { invoice_id: 'inv_lo' }, candidates: 2 });
  // an entry written before created_ms and settled_ms (an older node): a settled invoice is never named
  await craft('inv_paid', 70_000_000n, 'settled');
  t.deepEqual(await match(70_000_001n), { queue: 'unknown_amount' });
});
