// The chain-agnostic matching and crediting core (src/core/deposits.ts) on a real store with a
// hand-moved clock: one transfer credits at most once however many watchers report it at once, the
// policy per case, claims race to exactly one credit, and the admin path still works beside it.
import test from 'ava';
import { claimDeposit, depositId, listUnmatched, recordDeposit, type Deposit } from '../../src/core/deposits.ts';
import { fundAccount, settleInvoice } from '../../src/core/invoices.ts';
import { coreFixture } from '../support/core-fixture.ts';
import { txId, txRef } from '../support/references.ts';

/** A transfer of `amount` in the transaction made from `seed`. */
const deposit = (amount: string, seed = 'AA', logIndex = 0): Deposit => ({
  rail: 'USDC_BASE', tx_id: txId(seed), log_index: logIndex, amount, from: '0xpayer', to: '0xrail', block_number: 10,
  block_hash: '0xbb', confirmations: 4,
});
const open = (ctx: Parameters<typeof fundAccount>[0], machine: string, units: number, token?: string) =>
  fundAccount(ctx, { machine_id: machine, units, network: 'Base', asset: 'USDC' }, token);
const codeOf = async (p: Promise<unknown>) => {
  try { await p; return 'ok'; } catch (e) { return String((e as { code?: unknown }).code); }
};

test('deposits: one transfer reported by many watchers at once credits exactly once', async (t) => {
  const { ctx } = await coreFixture(t);
  const { invoice } = await open(ctx, 'dep-m', 5);
  const results = await Promise.all(Array.from({ length: 8 }, () => recordDeposit(ctx, deposit(invoice.amount_due))));
  t.is(results.filter((r) => r.fresh).length, 1);
  t.true(results.every((r) => r.deposit.state === 'credited' && r.deposit.invoice_id === invoice.invoice_id));
  const acct = await ctx.ledger.account('dep-m');
  t.is(acct.available, BigInt(invoice.credit_units));
  const credits = (await ctx.ledger.journal('dep-m')).filter((e) => e.kind === 'credit');
  t.is(credits.length, 1);
  t.like(credits[0]!.ref, { invoice_id: invoice.invoice_id, deposit_id: depositId('USDC_BASE', txId('AA'), 0) });
  t.deepEqual((await ctx.ledger.verify()).problems, []);
});

test('deposits: the id is the transfer (rail, tx id any case, log index)', (t) => {
  t.is(depositId('USDC_BASE', '0xAbC', 1), depositId('USDC_BASE', '0xabc', 1));
  t.not(depositId('USDC_BASE', '0xabc', 1), depositId('USDC_BASE', '0xabc', 2));
  t.not(depositId('USDC_BASE', '0xabc', 1), depositId('USDT_TRON', '0xabc', 1));
});

test('deposits: policy — exact → settled; off by one, late, unknown → queued naming the invoice', async (t) => {
  const { ctx, clock } = await coreFixture(t);
  const { invoice: a, machine_token: tok } = await open(ctx, 'pol-m', 3);
  const { invoice: b } = await open(ctx, 'pol-m', 9, tok);
  const off = await recordDeposit(ctx, deposit((BigInt(a.amount_due) + 1n).toString(), '01'));
  t.like(off.deposit, { state: 'unmatched', reason: 'amount_mismatch', nearest_invoice_id: a.invoice_id });
  clock.advance(ctx.config.invoiceTtlMs);
  const late = await recordDeposit(ctx, deposit(b.amount_due, '02'));
  t.like(late.deposit, { state: 'unmatched', reason: 'invoice_expired', nearest_invoice_id: b.invoice_id });
  clock.advance(1);
  const stray = await recordDeposit(ctx, deposit('123', '03'));
  t.like(stray.deposit, { state: 'unmatched', reason: 'no_open_invoice' });
  t.is(stray.deposit.nearest_invoice_id, undefined);
  t.is((await ctx.ledger.account('pol-m')).available, 0n, 'nothing credited on sight');
  const { deposits, more } = await listUnmatched(ctx);
  t.false(more);
  t.deepEqual(deposits.map((d) => d.tx_id), ['01', '02', '03'].map((x) => txId(x)), 'oldest first');
});

test('deposits: concurrent claims of one deposit credit once; a credited deposit cannot be claimed', async (t) => {
  const { ctx } = await coreFixture(t);
  const { invoice: a, machine_token: tok } = await open(ctx, 'cl-m', 4);
  const { invoice: b } = await open(ctx, 'cl-m', 6, tok);
  const { deposit: d } = await recordDeposit(ctx, deposit('4000001', '10'));
  t.is(d.state, 'unmatched');
  const codes = await Promise.all([a, b, a].map((inv) => codeOf(claimDeposit(ctx, d.deposit_id, inv.invoice_id))));
  t.deepEqual(codes, ['ok', 'deposit_already_credited', 'deposit_already_credited']);
  t.is((await ctx.ledger.account('cl-m')).available, 4_000_001n * 100n, 'the amount paid, once');
  // the claims queue on the deposit in call order: the first (to a) won; b is still open
  const { deposit: exact } = await recordDeposit(ctx, deposit(b.amount_due, '11'));
  t.like(exact, { state: 'credited', invoice_id: b.invoice_id });
  t.is(await codeOf(claimDeposit(ctx, exact.deposit_id, a.invoice_id)), 'deposit_already_credited');
  t.deepEqual((await ctx.ledger.verify()).problems, []);
});

test('deposits: admin settlement beside the watcher — a hand-settled invoice is never credited again', async (t) => {
  const { ctx } = await coreFixture(t);
  const { invoice } = await open(ctx, 'adm-m', 2);
  await settleInvoice(ctx, invoice.invoice_id, txRef('operator-ref'));
  const { deposit: d } = await recordDeposit(ctx, deposit(invoice.amount_due, '20'));
  t.is(d.state, 'unmatched', 'the payment is kept for the operator, not credited twice');
  t.is((await ctx.ledger.account('adm-m')).available, BigInt(invoice.credit_units));
  t.is(await codeOf(claimDeposit(ctx, d.deposit_id, invoice.invoice_id)), 'invoice_already_settled');
});
