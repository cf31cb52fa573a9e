// One payment credits one invoice: SETTLE_INVOICE and
// CREDIT_LATE_PAYMENT credited two invoices with one reference, and the audit stayed clean. A reference
// now names the invoice it settled (settlement_refs, written in the settling batch), whichever path used
// it; concurrent settlements of two invoices with one reference credit one; a ledger from before the
// index is indexed at open, and its audit names a pair that shares a reference. References are printable
// text: blank, control characters and line or bidi controls are refused.
import test from 'ava';
import { coreFixture } from '../support/core-fixture.ts';
import { startSvcd } from '../support/start-svcd.ts';
import { audit } from '../../src/core/audit.ts';
import {
  fundAccount, indexSettlementReferences, referenceKey, settleInvoice, type InvoiceRecord,
} from '../../src/core/invoices.ts';
import { recordDeposit } from '../../src/core/deposits.ts';
import { ServiceError } from '../../src/errors.ts';
import { put } from '../../src/store/store.ts';
import { txId, txRef } from '../support/references.ts';

/** A payment reference on the invoices' rail. */
const R = (seed: string) => txRef(seed, 'USDT_TRON');

const fund = async (ctx: Parameters<typeof fundAccount>[0], machine: string) =>
  (await fundAccount(ctx, { machine_id: machine, units: 1, network: 'TRON', asset: 'USDT' }, undefined)).invoice;

const code = async (p: Promise<unknown>) => {
  try { await p; return 'no error'; } catch (e) { return e instanceof ServiceError ? e.code : String(e); }
};

test('a reference that settled one invoice is refused for another, by settle and by the late path', async (t) => {
  const { ctx, clock } = await coreFixture(t, { invoiceTtlMs: 1000, maxOpenInvoices: 20 });
  const a = await fund(ctx, 'ref-a'), b = await fund(ctx, 'ref-b');
  await settleInvoice(ctx, a.invoice_id, R('0xabc123:0'));
  const again = await t.throwsAsync(settleInvoice(ctx, b.invoice_id, R('0xabc123:0')), { instanceOf: ServiceError });
  t.is((again as ServiceError).code, 'deposit_already_credited');
  t.regex(again!.message, new RegExp(`already credited invoice ${a.invoice_id}`));
  t.deepEqual((again as ServiceError).details, { invoice_id: a.invoice_id, reference: R('0xabc123:0') });
  t.is((await settleInvoice(ctx, a.invoice_id, R('0xabc123:0'))).state, 'settled', 'its own replay still answers');
  t.is((await settleInvoice(ctx, b.invoice_id, R('0xabc123:1'))).state, 'settled', 'another reference settles it');
  // the late path: an expired invoice credited by hand with a reference another invoice already took
  const c = await fund(ctx, 'ref-c');
  clock.advance(1500);
  t.is(await code(settleInvoice(ctx, c.invoice_id, R('0xabc123:1'), 'late')), 'deposit_already_credited');
  t.true((await settleInvoice(ctx, c.invoice_id, R('late-0'), 'late')).settled_late);
  const d = await fund(ctx, 'ref-d');
  clock.advance(1500);
  t.is(await code(settleInvoice(ctx, d.invoice_id, R('late-0'), 'late')), 'deposit_already_credited');
  const balances = await Promise.all(['ref-a', 'ref-b', 'ref-c', 'ref-d'].map((m) => ctx.ledger.account(m)));
  t.deepEqual(balances.map((x) => x.available > 0n), [true, true, true, false], 'ref-d was credited nothing');
  t.deepEqual((await audit(ctx.store)).discrepancies, []);
});

test('concurrent settlements of many invoices with one reference credit exactly one', async (t) => {
  const { ctx } = await coreFixture(t, { maxOpenInvoices: 20 });
  const invoices: InvoiceRecord[] = [];
  for (let i = 0; i < 12; i++) invoices.push(await fund(ctx, `race-${i}`));
  const outcomes = await Promise.all(invoices.map((inv) => code(settleInvoice(ctx, inv.invoice_id, R('tx-race:0')))));
  t.is(outcomes.filter((o) => o === 'no error').length, 1, outcomes.join(', '));
  t.is(outcomes.filter((o) => o === 'deposit_already_credited').length, 11);
  t.deepEqual((await audit(ctx.store)).discrepancies, []);
});

test('a watcher\'s deposit whose reference an operator used for another invoice is queued, not credited',
  async (t) => {
    const { ctx } = await coreFixture(t, { maxOpenInvoices: 20 });
    const byHand = await fund(ctx, 'hand-m'), matching = await fund(ctx, 'chain-m');
    await settleInvoice(ctx, byHand.invoice_id, txRef('feed', 'USDT_TRON', 3));
    const { deposit } = await recordDeposit(ctx, {
      rail: matching.rail, tx_id: txId('feed', 'USDT_TRON'), log_index: 3, amount: matching.amount_due, from: 'TFrom',
      block_number: 10,
    } as Parameters<typeof recordDeposit>[1]);
    t.is(deposit.state, 'unmatched');
    t.is(deposit.reason, 'reference_already_credited');
    t.is(deposit.nearest_invoice_id, byHand.invoice_id);
    t.is((await ctx.ledger.account('chain-m')).available, 0n);
    t.deepEqual((await audit(ctx.store)).discrepancies, []);
  });

test('a ledger from before the index: indexed at open; a pair sharing a reference is named by the audit',
  async (t) => {
    const { ctx, store } = await coreFixture(t, { maxOpenInvoices: 20 });
    const a = await fund(ctx, 'old-a'), b = await fund(ctx, 'old-b');
    await settleInvoice(ctx, a.invoice_id, R('old-ref'));
    await settleInvoice(ctx, b.invoice_id, R('other-ref'));
    // as an older node left it: b settled with a's reference too, and no index
    const settledB = (await store.get('invoices', b.invoice_id))!;
    await store.write([
      // its spelling of a's reference in capitals, as a node before canonical references took it
      put('invoices', b.invoice_id, { ...settledB, settlement_reference: `0x${R('old-ref').toUpperCase()}` }),
      { type: 'del', sub: 'settlement_refs', key: referenceKey(R('old-ref')) },
      { type: 'del', sub: 'settlement_refs', key: referenceKey(R('other-ref')) },
      { type: 'del', sub: 'meta', key: 'settlement_refs_v2' },
    ]);
    const report = await audit(store);
    const pair = new RegExp(`were both settled with payment reference "(0x)?${R('old-ref')}"`, 'i');
    t.true(report.discrepancies.some((p: string) => pair.test(p)), report.discrepancies.join('\n'));
    t.is(await indexSettlementReferences(store), 1, 'one entry: the first invoice keeps the reference');
    t.is(await indexSettlementReferences(store), 0, 'once');
    const c = await fund(ctx, 'old-c');
    t.is(await code(settleInvoice(ctx, c.invoice_id, R('old-ref'))), 'deposit_already_credited');
  });

test('svc-admin: a reference that is blank or holds control, line or bidi characters is invalid_request',
  async (t) => {
    const s = await startSvcd(t, {}, { args: ['core'] });
    const c = await s.edge();
    const a = await s.admin();
    t.teardown(() => { c.close(); a.close(); });
    const inv = await c.request('FUND_ACCOUNT', { machine_id: 'ref-text', units: 1, network: 'TRON', asset: 'USDT' });
    for (const bad of [' ', '\t', 'tx\n2', 'tx\u0000', 'tx\u007f', 'tx\u0085', '\u202etx', 'tx\u2028', ' tx', 'tx ']) {
      const e = await t.throwsAsync(a.request('SETTLE_INVOICE', { invoice_id: inv.invoice_id, reference: bad }));
      t.is((e as { code?: string }).code, 'invalid_request', JSON.stringify(bad));
    }
    const ok = await a.request('SETTLE_INVOICE', { invoice_id: inv.invoice_id, reference: R('fine') });
    t.is(ok.state, 'settled');
  });
