// Late payments: a payment that arrives after its invoice expired is credited
// only by the operator, through the real `svc-admin credit-late-payment`, exactly once, journaled
// with the invoice's new state; the invoice shows it was settled late. Invoices live 2 s here.
// And an invoice that leaves `pending` frees its amount only while the amount is still its own.
import test from 'ava';
import { coreFixture } from '../support/core-fixture.ts';
import { adminExchange, frame, isErrorFrame } from '../support/raw-wire.ts';
import { Svcd, cliJson } from '../support/svcd.ts';
import { Store, del, put } from '../../src/store/store.ts';
import { Ledger } from '../../src/core/ledger.ts';
import {
  fundAccount, indexPendingExpiry, refreshInvoice, settleInvoice, type InvoiceRecord,
} from '../../src/core/invoices.ts';
import { sweepInvoices } from '../../src/core/sweeps.ts';
import { key } from '../../src/store/key-codec.ts';
import { until } from '../support/until.ts';
import { txRef } from '../support/references.ts';

/** A payment reference on the invoices' rail. */
const R = (seed: string) => txRef(seed, 'USDT_TRON');

test('credit-late-payment credits an expired invoice once (settle-invoice refuses it): settled_late', async (t) => {
  const s = await Svcd.start({ SVC_INVOICE_TTL_MS: '2000' });
  t.teardown(() => s.cleanup());
  const c = await s.edge();
  const a = await s.admin();
  type Invoice = { invoice_id: string; amount_due: string; machine_token: string };
  const fund = async (args: Record<string, unknown>) => (await c.request('FUND_ACCOUNT', args)) as Invoice;
  const inv = await fund({ machine_id: 'late-m', units: 1, network: 'TRON', asset: 'USDT' });
  const token = inv.machine_token as string;
  const unpolled = await fund({ machine_id: 'late-n', units: 2, network: 'Base', asset: 'USDC' });
  // while it is pending, the late path is refused: SETTLE_INVOICE is the way
  const lateArgs = (reference: string) => ({ invoice_id: inv.invoice_id, reference });
  const early = await t.throwsAsync(a.request('CREDIT_LATE_PAYMENT', lateArgs(R('too-early'))));
  t.is((early as any).code, 'invoice_not_expired');
  // admin only: neither the public edge nor the backend takes it
  const viaEdge = await t.throwsAsync(c.request('CREDIT_LATE_PAYMENT', lateArgs(R('x'))));
  t.is((viaEdge as any).code, 'forbidden');
  const backend = await s.backend();
  const viaBackend = await t.throwsAsync(backend.request('CREDIT_LATE_PAYMENT', lateArgs(R('x'))));
  t.is((viaBackend as any).code, 'forbidden');
  backend.close();

  // svcd's clock is the wall clock: wait for the state, never for a fixed time
  const status = await until('the invoice leaves pending', async () => {
    const now = await c.request('INVOICE_STATUS', { invoice_id: inv.invoice_id, machine_id: 'late-m' }, { token });
    return now.state !== 'pending' && now;
  }, { every: 100 });
  t.is(status.state, 'expired');

  // invoice_expired (the catalogue's test for it): a raw svc/1 error frame on the admin socket, the client's
  // error, and the CLI's JSON error all name it and the way out
  const frameLine = await adminExchange(s.ready.admin_socket,
    frame(7, 'SETTLE_INVOICE', { invoice_id: inv.invoice_id, reference: R('late-tx') }));
  t.regex(isErrorFrame(t, frameLine, 7, 'invoice_expired').message, /CREDIT_LATE_PAYMENT/);
  const viaClient = await t.throwsAsync(a.request('SETTLE_INVOICE', { invoice_id: inv.invoice_id, reference: R('x') }));
  t.deepEqual([(viaClient as any).code, (viaClient as any).status], ['invoice_expired', 409]);
  const refused = await s.svcAdmin(['--json', 'settle-invoice', inv.invoice_id, '--reference', R('late-tx')]);
  t.is(refused.code, 1);
  t.is(cliJson(refused).error.code, 'invoice_expired');
  t.regex(cliJson(refused).error.message, /CREDIT_LATE_PAYMENT/);

  const late = await s.svcAdmin(['--json', 'credit-late-payment', inv.invoice_id, '--reference', R('late-tx')]);
  t.is(late.code, 0, late.stderr);
  const credited = cliJson(late);
  t.deepEqual([credited.state, credited.settled_late, credited.settlement_reference], ['settled', true, R('late-tx')]);
  t.is(credited.credit_units, String(BigInt(inv.amount_due as string) * 100n));
  const bal = await c.request('BALANCE', { machine_id: 'late-m' }, { token });
  t.is(bal.available_units, credited.credit_units);

  // exactly once: the same reference replays, through either admin command; another is 409 naming the first
  const again = await s.svcAdmin(['--json', 'credit-late-payment', inv.invoice_id, '--reference', R('late-tx')]);
  t.deepEqual([again.code, cliJson(again).settled_at], [0, credited.settled_at]);
  t.is((await s.svcAdmin(['--json', 'settle-invoice', inv.invoice_id, '--reference', R('late-tx')])).code, 0);
  const other = await s.svcAdmin(['--json', 'credit-late-payment', inv.invoice_id, '--reference', R('another-tx')]);
  t.is(other.code, 1);
  t.is(cliJson(other).error.code, 'invoice_already_settled');
  t.regex(cliJson(other).error.message, new RegExp(`"${R('late-tx')}"`));
  t.is((await c.request('BALANCE', { machine_id: 'late-m' }, { token })).available_units, credited.credit_units);
  const shown = await c.request('INVOICE_STATUS', { invoice_id: inv.invoice_id, machine_id: 'late-m' }, { token });
  t.deepEqual([shown.state, shown.settled_late], ['settled', true]);

  // an invoice nobody looked at since it expired (still stored as pending) takes the same path
  const late2 = txRef('late-tx-2', 'USDC_BASE');
  const second = await s.svcAdmin(['--json', 'credit-late-payment', unpolled.invoice_id, '--reference', late2]);
  t.is(second.code, 0, second.stderr);
  t.deepEqual([cliJson(second).state, cliJson(second).settled_late], ['settled', true]);
  c.close(); a.close();

  t.is(await s.stop(), 0);
  const store = await Store.open(s.dataDir);
  const ledger = new Ledger(store);
  const check = await ledger.verify();
  const journal = await ledger.journal('late-m');
  await store.close();
  t.true(check.ok, check.problems.join('; '));
  t.is(journal.length, 1, 'one credit, journaled');
  t.deepEqual([journal[0]!.kind, journal[0]!.d_available, journal[0]!.ref], [
    'credit', credited.credit_units, { invoice_id: inv.invoice_id, reference: R('late-tx'), late: 'true' },
  ]);
});

test('an invoice that expires or is credited late leaves alone the amount a newer invoice now holds', async (t) => {
  const { ctx, clock, store } = await coreFixture(t, { invoiceTtlMs: 1000, maxOpenInvoices: 20 });
  const args = { machine_id: 'm-old', units: 1, network: 'TRON', asset: 'USDT' };
  const { invoice } = await fundAccount(ctx, args, undefined);
  const k = key(invoice.rail, invoice.amount_due);
  t.is((await store.get('invoice_amounts', k))?.invoice_id, invoice.invoice_id);
  // it expires, and its amount is handed to a newer invoice before anyone looks at the old one
  clock.advance(1500);
  await store.write([put('invoice_amounts', k, { invoice_id: 'inv_newer', expires_ms: clock.ms + 1000 })]);
  t.is((await refreshInvoice(ctx, invoice)).state, 'expired');
  t.is((await store.get('invoice_amounts', k))?.invoice_id, 'inv_newer', 'expiry left the newer invoice its amount');
  t.true((await settleInvoice(ctx, invoice.invoice_id, R('late-tx'), 'late')).settled_late);
  t.is((await store.get('invoice_amounts', k))?.invoice_id, 'inv_newer', 'nor did the late credit');
  t.true((await ctx.ledger.verify()).ok);
});

test('indexPendingExpiry: pending invoices from before the expiry index join it once; the sweep then expires them',
  async (t) => {
    const { ctx, clock, store } = await coreFixture(t, { invoiceTtlMs: 1000, maxOpenInvoices: 20 });
    const open = async (m: string) =>
      (await fundAccount(ctx, { machine_id: m, units: 1, network: 'TRON', asset: 'USDT' }, undefined)).invoice;
    const [a, b] = [await open('m-old-1'), await open('m-old-2')];
    // as an older node left them: pending, in no expiry index, no marker
    const entries: string[] = [];
    for await (const [k] of store.entries('invoice_expiry')) entries.push(k);
    await store.write(entries.map((k) => del('invoice_expiry', k)));
    clock.advance(1001);
    t.is(await sweepInvoices(ctx), 0, 'the sweep cannot see them');
    t.is(await indexPendingExpiry(store), 2);
    t.is(await indexPendingExpiry(store), 0, 'once per store');
    t.is(await sweepInvoices(ctx), 2);
    for (const inv of [a, b]) t.is((await store.get<InvoiceRecord>('invoices', inv.invoice_id))!.state, 'expired');
  });
