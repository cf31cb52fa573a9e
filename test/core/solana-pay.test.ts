// Solana Pay references and the wider suffix space (src/core/solana-pay.ts, invoices.ts, deposit-match.ts): a Solana
// rail's invoice names a fresh reference and a transfer request; a transfer naming the reference pays that invoice
// whatever amount the index holds; a rail whose amounts are all held takes the wider range, and a Solana rail then
// issues reference-only invoices instead of refusing. In process on a real store, both engines' contract.
import { createHash } from 'node:crypto';
import { base58 } from '@scure/base';
import test from 'ava';
import { matchTransfer } from '../../src/core/deposit-match.ts';
import { recordDeposit, type Deposit } from '../../src/core/deposits.ts';
import { fundAccount, loadInvoice } from '../../src/core/invoices.ts';
import { RAILS, isSolanaAddress } from '../../src/core/rails.ts';
import { ServiceError } from '../../src/errors.ts';
import { coreFixture } from '../support/core-fixture.ts';

const SOL_WALLET = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const rails = RAILS.map((r) => ({ ...r, address: r.network === 'Solana' ? SOL_WALLET : `addr-${r.rail}` }));

/** A transfer as the Solana watcher records it; `tx` names it (a base58 signature made from the name). */
const deposit = (amount: string, tx: string, at: number): Deposit => ({
  rail: 'USDC_SOLANA', tx_id: base58.encode(createHash('sha512').update(tx).digest()), log_index: 2, amount,
  from: 'payer', to: 'rail-ata', block_number: 10,
  block_hash: '', block_time: new Date(at).toISOString(), confirmations: 32,
});

test('a Solana invoice names a fresh reference and a transfer request a Solana Pay wallet opens', async (t) => {
  const f = await coreFixture(t, { rails });
  const fund = (m: string) =>
    fundAccount(f.ctx, { machine_id: m, units: 5, network: 'Solana', asset: 'USDC' }, undefined);
  const { invoice: a } = await fund('pay-a');
  const { invoice: b } = await fund('pay-b');
  t.true(isSolanaAddress(a.reference!));
  t.not(a.reference, b.reference);
  const uri = new URL(a.payment_uri!);
  t.is(uri.protocol, 'solana:');
  t.is(uri.pathname, SOL_WALLET);
  t.is(uri.searchParams.get('amount') ?? '', a.amount_due_decimal.replace(/0+$/, '').replace(/\.$/, ''));
  t.is(uri.searchParams.get('spl-token'), 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
  t.is(uri.searchParams.get('reference'), a.reference!);
  t.is(uri.searchParams.get('message'), `invoice ${a.invoice_id}`);
  const { invoice: base } = await fundAccount(f.ctx, { machine_id: 'pay-c', units: 5, network: 'Base', asset: 'USDC' },
    undefined);
  t.is(base.reference, undefined, 'other rails match by amount only');
});

test('a transfer naming an invoice\'s reference pays it; a wrong amount names it; no reference: the amount decides',
  async (t) => {
    const f = await coreFixture(t, { rails, invoiceTtlMs: 60_000 });
    const now = f.clock.ms;
    const fund = async (m: string) =>
      (await fundAccount(f.ctx, { machine_id: m, units: 2, network: 'Solana', asset: 'USDC' }, undefined)).invoice;
    const a = await fund('ref-a'), b = await fund('ref-b');
    // b's exact amount, but naming a's reference: a's, and short of a's amount it is a's mismatch
    t.like(await matchTransfer(f.ctx, 'USDC_SOLANA', b.amount_due, now, now, ['Program1', a.reference!]),
      { queue: 'amount_mismatch', invoice: a, reference: a.reference });
    t.like(await matchTransfer(f.ctx, 'USDC_SOLANA', a.amount_due, now, now, [a.reference!]),
      { credit: a, mode: 'paid_in_time', reference: a.reference });
    t.like(await matchTransfer(f.ctx, 'USDC_SOLANA', b.amount_due, now, now, ['Program1']), { credit: b });
    // recorded: credited, the deposit names the reference; again from another transfer: a duplicate, named
    const first = await recordDeposit(f.ctx, deposit(a.amount_due, 'sig-1', now), [a.reference!]);
    t.like(first.deposit, { state: 'credited', invoice_id: a.invoice_id, reference: a.reference });
    t.is((await loadInvoice(f.ctx, a.invoice_id)).state, 'settled');
    const again = await recordDeposit(f.ctx, deposit(a.amount_due, 'sig-2', now), [a.reference!]);
    t.like(again.deposit, { state: 'unmatched', reason: 'duplicate_payment', nearest_invoice_id: a.invoice_id });
    // made before the invoice existed (its clock skew allowed): not its payment
    const early = await recordDeposit(f.ctx, deposit(b.amount_due, 'sig-3', now - 10 * 60_000), [b.reference!]);
    t.like(early.deposit, { state: 'unmatched', reason: 'before_invoice', nearest_invoice_id: b.invoice_id });
  });

test('a rail whose suffixes are all held takes the wider range; then Base is busy and Solana names a reference only',
  async (t) => {
    const f = await coreFixture(t, {
      rails, invoiceSuffixMax: 2, invoiceWideSuffixMax: 4, maxOpenInvoices: 20, invoiceTtlMs: 60_000,
    });
    const fund = (m: string, network: string) =>
      fundAccount(f.ctx, { machine_id: m, units: 1, network, asset: 'USDC' }, undefined);
    const base = [];
    for (let i = 0; i < 4; i++) base.push(BigInt((await fund(`wide-${i}`, 'Base')).invoice.amount_due) - 1_000_000n);
    t.deepEqual(base.slice(0, 2).sort(), [1n, 2n], 'the narrow range first');
    t.deepEqual(base.slice(2).sort(), [3n, 4n], 'then the wider one');
    const busy = await t.throwsAsync(fund('wide-busy', 'Base'), { instanceOf: ServiceError });
    t.is(busy!.code, 'busy');
    const sol = [];
    for (let i = 0; i < 6; i++) sol.push((await fund(`sol-${i}`, 'Solana')).invoice);
    t.deepEqual(sol.map((x) => x.amount_unique ?? true), [true, true, true, true, false, false]);
    t.deepEqual(sol.slice(4).map((x) => x.amount_due), ['1000000', '1000000'], 'the whole units, named by reference');
    const now = f.clock.ms;
    // two reference-only invoices of one amount: each transfer pays the one its reference names
    const paid = await recordDeposit(f.ctx, deposit('1000000', 'sig-ref-5', now), [sol[5]!.reference!]);
    t.like(paid.deposit, { state: 'credited', invoice_id: sol[5]!.invoice_id });
    const bare = await recordDeposit(f.ctx, deposit('1000000', 'sig-bare', now), []);
    t.is(bare.deposit.state, 'unmatched', 'without a reference, an amount no invoice holds is not credited');
  });
