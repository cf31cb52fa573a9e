// Settlement around the happy path, on LevelDB and on PostgreSQL, in process with a clock the test moves
// (src/core/deposit-match.ts, deposits.ts, invoices.ts): a late payment pays the invoice it was made for
// and never a newer holder of its amount; one payment credits one invoice in every spelling of its
// reference; the unmatched queue says what happened (a second payment, a hand-settled invoice, a transfer
// older than the invoice, a near or unknown amount) and names another machine's invoice only when the
// amount is within the tolerance; a dismissed deposit can never be claimed.
import test, { type ExecutionContext } from 'ava';
import { audit } from '../../src/core/audit.ts';
import { DEFAULT_AMOUNT_HOLD_MS, type Config } from '../../src/core/config.ts';
import { CLOCK_SKEW_MS } from '../../src/core/deposit-match.ts';
import {
  claimDeposit, dismissDeposit, listUnmatched, recordDeposit, type Deposit,
} from '../../src/core/deposits.ts';
import {
  fundAccount, loadInvoice, settleInvoice, type InvoiceRecord,
} from '../../src/core/invoices.ts';
import { ServiceError } from '../../src/errors.ts';
import { coreFixture, type Fixture } from '../support/core-fixture.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';
import { txId, txRef } from '../support/references.ts';

const postgres = postgresForFile(test);
const HOUR = 3_600_000;
const MIN = 60_000;

type Open = (over?: Partial<Config>) => Promise<Fixture>;
/** Registers `title` once per store engine: LevelDB always, PostgreSQL when its binaries are here. */
function onBothStores(title: string, impl: (t: ExecutionContext, open: Open) => Promise<void>) {
  test(`${title} (LevelDB)`, (t) => impl(t, (over = {}) => coreFixture(t, over)));
  testNeeding(test, `${title} (PostgreSQL)`, POSTGRES, async (t) => {
    const url = await (await postgres()).freshDatabase();
    await impl(t, (over = {}) => coreFixture(t, over, { postgres: url }));
  });
}

/** Every 1-unit invoice on a rail gets the same amount (one suffix), as a crowded rail would. */
const CROWDED: Partial<Config> = { invoiceSuffixMax: 1, invoiceTtlMs: HOUR, maxOpenInvoices: 10 };

const fund = async (f: Fixture, machine: string, units = 1, rail = { network: 'Base', asset: 'USDC' }) =>
  (await fundAccount(f.ctx, { machine_id: machine, units, ...rail }, undefined)).invoice;

/** A transfer on Base of `amount`, in the transaction made from `seed`, made (its block's time) at `atMs`. */
const transfer = (amount: string, seed: string, atMs: number | null, logIndex = 0): Deposit => ({
  rail: 'USDC_BASE', tx_id: txId(seed), log_index: logIndex, amount, from: '0xpayer', to: 'addr-USDC_BASE',
  block_number: 10, block_hash: `0x${'bb'.repeat(32)}`, confirmations: 4,
  ...(atMs === null ? {} : { block_time: new Date(atMs).toISOString() }),
});

const code = async (p: Promise<unknown>) => {
  try { await p; return 'ok'; } catch (e) { return e instanceof ServiceError ? e.code : String(e); }
};
const balance = async (f: Fixture, m: string) => (await f.ctx.ledger.account(m)).available;
const auditClean = async (t: ExecutionContext, f: Fixture) => t.deepEqual((await audit(f.store)).discrepancies, []);

onBothStores('a payment made in time but final after expiry pays its invoice; the amount is not handed out '
  + 'meanwhile', async (t, open) => {
  const f = await open(CROWDED);
  const victim = await fund(f, 'victim');
  const paidAt = victim.expires_ms - 6 * MIN;
  // a minute after the victim's invoice expired, another payer asks for an invoice of the same size
  f.clock.set(victim.expires_ms + MIN);
  t.is(await code(fund(f, 'stranger')), 'busy', 'the amount is still the victim\'s: no invoice gets it');
  const { deposit } = await recordDeposit(f.ctx, transfer(victim.amount_due, 'late-final', paidAt));
  t.like(deposit, { state: 'credited', invoice_id: victim.invoice_id });
  const inv = await loadInvoice(f.ctx, victim.invoice_id);
  t.like(inv, { state: 'settled', paid_at: new Date(paidAt).toISOString() });
  t.is(inv.settled_late, undefined, 'paid before its expiry: on time');
  t.is(await balance(f, 'victim'), BigInt(victim.credit_units));
  await auditClean(t, f);
});

onBothStores('a transfer recorded after its amount passed to a newer invoice pays the invoice it was made for; '
  + 'one older than both is queued before_invoice', async (t, open) => {
  const f = await open(CROWDED);
  const old = await fund(f, 'old-payer');
  f.clock.set(old.expires_ms + DEFAULT_AMOUNT_HOLD_MS); // the hold is over: the amount may be handed out again
  const fresh = await fund(f, 'new-payer');
  t.is(fresh.amount_due, old.amount_due);
  const createdNew = Date.parse(fresh.created_at);
  // made before the old invoice existed: neither invoice's
  const older = await recordDeposit(f.ctx, transfer(old.amount_due, 'before-both', Date.parse(old.created_at) - HOUR));
  t.like(older.deposit, { state: 'unmatched', reason: 'before_invoice' });
  t.is(older.deposit.nearest_invoice_id, undefined, 'no stranger\'s invoice is named');
  // made after the old one expired, before the new one: a late payment of the old one, queued naming it
  const late = await recordDeposit(f.ctx, transfer(old.amount_due, 'after-old', old.expires_ms + 10 * MIN));
  t.like(late.deposit, { state: 'unmatched', reason: 'invoice_expired', nearest_invoice_id: old.invoice_id });
  // made while the old one was open, seen only now (a watcher that was down for hours): the old one's
  const inTime = await recordDeposit(f.ctx, transfer(old.amount_due, 'in-time', old.expires_ms - MIN));
  t.like(inTime.deposit, { state: 'credited', invoice_id: old.invoice_id });
  t.is(await balance(f, 'new-payer'), 0n, 'the newer holder got nothing from payments it did not make');
  // within the clock skew of its creation, and after: the new one's
  const own = await recordDeposit(f.ctx, transfer(fresh.amount_due, 'own', createdNew - CLOCK_SKEW_MS + 1000));
  t.like(own.deposit, { state: 'credited', invoice_id: fresh.invoice_id });
  t.deepEqual([await balance(f, 'old-payer'), await balance(f, 'new-payer')],
    [BigInt(old.credit_units), BigInt(fresh.credit_units)]);
  await auditClean(t, f);
});

onBothStores('the queue says what happened: a second payment, a hand-settled invoice, a near amount, an '
  + 'unknown one', async (t, open) => {
  const f = await open({ invoiceTtlMs: HOUR, maxOpenInvoices: 10 });
  const now = () => f.clock.ms;
  const paid = await fund(f, 'm-paid', 2);
  const first = await recordDeposit(f.ctx, transfer(paid.amount_due, 'pay-1', now()));
  t.is(first.deposit.state, 'credited');
  const second = await recordDeposit(f.ctx, transfer(paid.amount_due, 'pay-2', now()));
  t.like(second.deposit, { state: 'unmatched', reason: 'duplicate_payment', nearest_invoice_id: paid.invoice_id });
  const byHand = await fund(f, 'm-hand', 3);
  await settleInvoice(f.ctx, byHand.invoice_id, txRef('hand-ref'));
  const after = await recordDeposit(f.ctx, transfer(byHand.amount_due, 'hand-chain', now()));
  t.like(after.deposit, { reason: 'invoice_already_settled', nearest_invoice_id: byHand.invoice_id });
  // another machine's open invoice is named only for an amount within 5% of its own
  const other = await fund(f, 'm-other', 7);
  const near = await recordDeposit(f.ctx, transfer(String(BigInt(other.amount_due) - 1000n), 'near', now()));
  t.like(near.deposit, { reason: 'amount_mismatch', nearest_invoice_id: other.invoice_id, candidates: 1 });
  const far = await recordDeposit(f.ctx, transfer('5500000', 'far', now()));
  t.like(far.deposit, { state: 'unmatched', reason: 'unknown_amount' });
  t.is(far.deposit.nearest_invoice_id, undefined, 'an amount near no invoice names none');
  t.deepEqual([await balance(f, 'm-paid'), await balance(f, 'm-other')], [BigInt(paid.credit_units), 0n]);
  // nothing open on the rail at the transfer's time
  f.clock.set(other.expires_ms + 1);
  const none = await recordDeposit(f.ctx, transfer('9000001', 'none', now()));
  t.like(none.deposit, { reason: 'no_open_invoice' });
  await auditClean(t, f);
});

onBothStores('one payment credits one invoice in every spelling of its reference', async (t, open) => {
  const f = await open({ invoiceTtlMs: HOUR, maxOpenInvoices: 10 });
  const paid = await fund(f, 'sp-paid');
  const tx = txId('spelled');
  const { deposit } = await recordDeposit(f.ctx, transfer(paid.amount_due, 'spelled', f.clock.ms));
  t.is(deposit.state, 'credited');
  const others: InvoiceRecord[] = [];
  for (let i = 0; i < 6; i++) others.push(await fund(f, `sp-other-${i}`));
  const spellings = [`${tx}:0`, `0X${tx.slice(2).toUpperCase()}:0`, tx, `${tx}:00`, `${tx}:0x0`, `${tx.slice(2)}:0`];
  const outcomes = [];
  for (const [i, s] of spellings.entries()) outcomes.push(await code(settleInvoice(f.ctx, others[i]!.invoice_id, s)));
  t.deepEqual(outcomes, spellings.map(() => 'deposit_already_credited'), spellings.join('\n'));
  // a transaction with two recorded transfers: bare is ambiguous, each transfer is its own reference
  const two = await fund(f, 'sp-two');
  for (const i of [1, 2]) await recordDeposit(f.ctx, transfer(String(4_000_000 + i), 'double', f.clock.ms, i));
  const e = await t.throwsAsync(settleInvoice(f.ctx, two.invoice_id, txId('double')), { instanceOf: ServiceError });
  t.like(e, { code: 'invalid_request', details: { field: 'reference', indexes: [1, 2] } });
  t.is(await code(settleInvoice(f.ctx, two.invoice_id, txId('never-seen'))), 'invalid_request', 'unknown bare hash');
  t.is(await code(settleInvoice(f.ctx, two.invoice_id, 'bank wire 77')), 'invalid_request', 'not a transfer');
  t.is((await settleInvoice(f.ctx, two.invoice_id, `${txId('double')}:1`)).state, 'settled');
  const credited = await Promise.all(['sp-paid', ...others.map((o) => o.machine_id)].map((m) => balance(f, m)));
  t.deepEqual(credited.map((x) => x > 0n), [true, false, false, false, false, false, false]);
  await auditClean(t, f);
});

onBothStores('a dismissed deposit leaves the queue for good: never claimed, never dismissed twice',
  async (t, open) => {
    const f = await open({ invoiceTtlMs: HOUR, maxOpenInvoices: 10 });
    const inv = await fund(f, 'dm-m', 2);
    const { deposit } = await recordDeposit(f.ctx, transfer('1234567', 'stray', f.clock.ms));
    t.is(deposit.state, 'unmatched');
    const done = await dismissDeposit(f.ctx, deposit.deposit_id, {
      outcome: 'refunded', note: 'sent back to the payer', refund_reference: txRef('refund'),
    });
    t.like(done, { state: 'dismissed', dismissal: { outcome: 'refunded', note: 'sent back to the payer' } });
    t.is(await code(claimDeposit(f.ctx, deposit.deposit_id, inv.invoice_id)), 'deposit_dismissed');
    t.is(await code(dismissDeposit(f.ctx, deposit.deposit_id, { outcome: 'written_off', note: 'x' })),
      'deposit_dismissed');
    t.deepEqual((await listUnmatched(f.ctx)).deposits, []);
    t.is(await balance(f, 'dm-m'), 0n);
    await auditClean(t, f);
  });

onBothStores('60 client addresses flooding invoices under fresh machine_ids leave fresh payers able to fund',
  async (t, open) => {
    // a rail and size with 2,000 amounts; each address may hold 20 open invoices, whatever the machine_id
    const f = await open({ invoiceSuffixMax: 2000, maxOpenInvoicesPerAddress: 20, maxOpenInvoices: 20 });
    const flood = async (address: string, round = 0) => {
      let held = 0;
      for (let i = 0; ; i++) {
        const args = { machine_id: `flood-${round}-${address}-${i}`, units: 1, network: 'Base', asset: 'USDC' };
        const outcome = await code(fundAccount(f.ctx, args, undefined, undefined, address));
        if (outcome !== 'ok') return { held, outcome };
        held++;
      }
    };
    const flooders = await Promise.all(Array.from({ length: 60 }, (_, k) => flood(`10.0.${k >> 8}.${k & 255}`)));
    t.deepEqual([...new Set(flooders.map((x) => `${x.held} then ${x.outcome}`))], ['20 then too_many_open_invoices']);
    const more = { machine_id: 'flood-more', units: 1, network: 'Base', asset: 'USDC' };
    const e = await t.throwsAsync(fundAccount(f.ctx, more, undefined, undefined, '10.0.0.1'),
      { instanceOf: ServiceError });
    t.like(e, { code: 'too_many_open_invoices', details: { open_invoices: 20, per: 'client_address' } });
    t.regex(e!.message,
      /^this client address has 20 open invoices \(the most allowed, whatever the machine_id\): pay one/);
    const fresh = [];
    for (let i = 0; i < 20; i++) {
      const args = { machine_id: `fresh-${i}`, units: 1, network: 'Base', asset: 'USDC' };
      fresh.push(await code(fundAccount(f.ctx, args, undefined, undefined, `192.0.2.${i + 1}`)));
    }
    t.is(fresh.filter((x) => x === 'ok').length, 20, fresh.join(', '));
    // an expired invoice leaves its address's count (its amount stays held through the hold)
    f.clock.advance(f.ctx.config.invoiceTtlMs);
    t.like(await flood('10.0.0.0', 1), { held: 20, outcome: 'too_many_open_invoices' });
  });

onBothStores('60 addresses holding more invoices than a Solana rail has amounts: fresh payers fund by reference',
  async (t, open) => {
    // 100 amounts, 1,200 invoices held: the rail's amounts run out, its invoices go on with a reference alone
    const f = await open({ invoiceSuffixMax: 100, maxOpenInvoicesPerAddress: 20, maxOpenInvoices: 20 });
    const fund = (machine: string, address: string) => code(fundAccount(f.ctx,
      { machine_id: machine, units: 1, network: 'Solana', asset: 'USDC' }, undefined, undefined, address));
    const held = await Promise.all(Array.from({ length: 60 }, async (_, k) => {
      let n = 0;
      while (await fund(`sol-flood-${k}-${n}`, `10.1.${k >> 8}.${k & 255}`) === 'ok') n++;
      return n;
    }));
    t.deepEqual([...new Set(held)], [20], 'each address held its cap: none was refused for want of an amount');
    const fresh = [];
    for (let i = 0; i < 20; i++) fresh.push(await fund(`sol-fresh-${i}`, `192.0.2.${i + 1}`));
    t.is(fresh.filter((x) => x === 'ok').length, 20, fresh.join(', '));
  });
