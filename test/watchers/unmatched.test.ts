// The unmatched deposits queue end to end: wrong amounts, a late payment and an unknown payer's
// transfer land in it (never lost, the nearest invoice named), and the operator credits each by hand
// once, with the real svc-admin over the admin socket.
import test from 'ava';
import {
  CONFIRMATIONS, admin, balance, codeOf, invoiceStatus, openInvoice, scannedThrough, startChain, startSvcd, waitFor,
  watcherEnv, type Invoice,
} from './harness.ts';

const UNIT = 10n ** 6n;

test('unmatched: under- and over-payments and an unknown payer queue; svc-admin claim credits each once', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, { ...watcherEnv(chain, chain.anvil.url), SVC_METRICS_PORT: '0' });
  const under = await openInvoice(s, 'um-under', 10);
  const over = await openInvoice(s, 'um-over', 20);
  const a = chain.anvil, to = chain.railAddress;
  await a.transfer(1, to, BigInt(under.amount_due) - 1n);
  await a.transfer(2, to, BigInt(over.amount_due) + 500_000n);
  const stranger = await a.transfer(3, to, 77n * UNIT + 7n);
  await a.mine(CONFIRMATIONS);
  await scannedThrough(s, stranger.block);

  const { deposits, more } = await admin(s, 'UNMATCHED', {});
  t.false(more);
  t.is(deposits.length, 3);
  const gauge = async () => Number(/^svc_unmatched_deposits (\d+)$/m
    .exec(await (await fetch(`http://${s.ready.metrics!}/metrics`)).text())?.[1]);
  t.is(await gauge(), 3, 'the queue in the metrics');
  const byAmount = (n: bigint) => deposits.find((d: { amount: string }) => d.amount === n.toString());
  t.like(byAmount(BigInt(under.amount_due) - 1n), { reason: 'amount_mismatch', nearest_invoice_id: under.invoice_id,
    state: 'unmatched', rail: 'USDC_BASE' });
  t.like(byAmount(BigInt(over.amount_due) + 500_000n), {
    reason: 'amount_mismatch', nearest_invoice_id: over.invoice_id,
  });
  // no invoice asks for an amount within 5% of it: none is named
  t.like(byAmount(77n * UNIT + 7n), { reason: 'unknown_amount', from: a.account(3).address.toLowerCase() });
  t.is(byAmount(77n * UNIT + 7n).nearest_invoice_id, undefined);
  for (const inv of [under, over]) t.is((await invoiceStatus(s, inv, inv.machine_token!)).state, 'pending');

  // the real CLI: list, claim the underpayment to its invoice (credits what arrived), claim again: refused
  const listed = await s.svcAdmin(['--json', 'unmatched']);
  t.is(listed.code, 0, listed.stderr);
  t.is(JSON.parse(listed.stdout).deposits.length, 3);
  const dep = byAmount(BigInt(under.amount_due) - 1n);
  const claimed = await s.svcAdmin(['--json', 'claim', dep.deposit_id, under.invoice_id]);
  t.is(claimed.code, 0, claimed.stderr);
  t.like(JSON.parse(claimed.stdout), { deposit: { state: 'claimed', invoice_id: under.invoice_id },
    invoice: { state: 'settled', deposit_id: dep.deposit_id } });
  t.is(await balance(s, under.machine_id, under.machine_token!), (BigInt(under.amount_due) - 1n) * 100n);
  const again = await s.svcAdmin(['claim', dep.deposit_id, under.invoice_id]);
  t.is(again.code, 1);
  t.regex(again.stdout + again.stderr, /deposit_already_credited/);
  t.is(await codeOf(admin(s, 'CLAIM', { deposit_id: dep.deposit_id, invoice_id: over.invoice_id })),
    'deposit_already_credited');
  t.is(await balance(s, under.machine_id, under.machine_token!), (BigInt(under.amount_due) - 1n) * 100n, 'once');

  // the stranger's transfer cannot go to a settled invoice; the overpayment credits what arrived
  const lost = byAmount(77n * UNIT + 7n);
  t.is(await codeOf(admin(s, 'CLAIM', { deposit_id: lost.deposit_id, invoice_id: under.invoice_id })),
    'invoice_already_settled');
  t.is(await codeOf(admin(s, 'CLAIM', { deposit_id: 'dep_nope', invoice_id: over.invoice_id })), 'not_found');
  const ov = byAmount(BigInt(over.amount_due) + 500_000n);
  await admin(s, 'CLAIM', { deposit_id: ov.deposit_id, invoice_id: over.invoice_id });
  t.is(await balance(s, over.machine_id, over.machine_token!), (BigInt(over.amount_due) + 500_000n) * 100n);
  const left = (await admin(s, 'UNMATCHED', {})).deposits;
  t.deepEqual(left.map((d: { deposit_id: string }) => d.deposit_id), [lost.deposit_id], 'never lost');
  // scrapes read the ledger's counts at most every 15 s (core-metrics.ts): the new count comes within that
  await waitFor('the gauge to count the queue left', async () => ((await gauge()) === 1 ? true : undefined));

  // the operator's view: a table, filtered; the stranger refunded and dismissed, never to be claimed
  const table = await s.svcAdmin(['unmatched', '--reason', 'unknown_amount']);
  t.is(table.code, 0, table.stderr);
  t.regex(table.stdout, /^DEPOSIT +STATE +REASON +RAIL +AMOUNT +PAID AT +INVOICE +TRANSFER$/m);
  t.regex(table.stdout, new RegExp(`^${lost.deposit_id} +unmatched +unknown_amount +USDC_BASE +77\\.000007 `, 'm'));
  t.regex(table.stdout, /^1 deposit\(s\)$/m);
  t.deepEqual(JSON.parse((await s.svcAdmin(['--json', 'unmatched', '--reason', 'duplicate_payment'])).stdout),
    { deposits: [], more: false });
  const refund = `0x${'ef'.repeat(32)}:0`;
  const dismissed = await s.svcAdmin(['--json', 'dismiss', lost.deposit_id, '--outcome', 'refunded',
    '--note', 'not ours: sent back to the payer', '--refund-reference', refund]);
  t.is(dismissed.code, 0, dismissed.stderr);
  t.like(JSON.parse(dismissed.stdout).deposit, { state: 'dismissed', dismissal: { outcome: 'refunded' } });
  const late = await s.svcAdmin(['--json', 'claim', lost.deposit_id, over.invoice_id]);
  t.is(late.code, 1);
  t.is(JSON.parse(late.stderr).error.code, 'deposit_dismissed');
  t.deepEqual((await admin(s, 'UNMATCHED', {})).deposits, [], 'the queue is empty');
  const gone = await s.svcAdmin(['--json', 'unmatched', '--state', 'dismissed']);
  t.deepEqual(JSON.parse(gone.stdout).deposits.map((d: { deposit_id: string }) => d.deposit_id), [lost.deposit_id]);

  // the money audit accepts claims that credit what arrived (not the invoice's credit_units)
  const audited = await s.svcAdmin(['--json', 'audit']);
  t.is(audited.code, 0, audited.stdout);
  t.deepEqual(JSON.parse(audited.stdout).discrepancies, []);
  t.like(JSON.parse(audited.stdout).dismissed[0], {
    deposit_id: lost.deposit_id, amount: String(77n * UNIT + 7n), outcome: 'refunded', refund_reference: refund,
  });

  const check = await s.stopAndCheckLedger();
  t.deepEqual([check.exitCode, check.ok, check.problems], [0, true, []]);
});

test('unmatched: a payment after its invoice expired queues as late and is claimed once (settled_late)', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, watcherEnv(chain, chain.anvil.url, { SVC_INVOICE_TTL_MS: '1500' }));
  const inv: Invoice = await openInvoice(s, 'um-late', 8);
  // wait until the node's own clock is past the expiry (HELLO tells its time), without touching the invoice,
  // by more than a second: block times are whole seconds, and a transfer in the expiry's second was in time
  await waitFor('the invoice to expire', async () => {
    const c = await s.edge();
    try {
      const h = await c.request('HELLO', {});
      return Date.parse(h.time as string) > Date.parse((inv as unknown as { expires_at: string }).expires_at) + 1100
        ? true : undefined;
    } finally { c.close(); }
  });
  const paid = await chain.anvil.transfer(1, chain.railAddress, BigInt(inv.amount_due));
  await chain.anvil.mine(CONFIRMATIONS);
  await scannedThrough(s, paid.block);
  const listed = await s.svcAdmin(['--json', 'unmatched', '--rail', 'USDC_BASE', '--reason', 'invoice_expired']);
  const [dep] = JSON.parse(listed.stdout).deposits;
  t.like(dep, { reason: 'invoice_expired', nearest_invoice_id: inv.invoice_id, amount: inv.amount_due,
    tx_id: paid.hash.toLowerCase() });
  t.deepEqual((await admin(s, 'UNMATCHED', { rail: 'USDT_TRON' })).deposits, [], 'another rail: none');
  t.is(await balance(s, inv.machine_id, inv.machine_token!), 0n);
  const r = await admin(s, 'CLAIM', { deposit_id: dep.deposit_id, invoice_id: inv.invoice_id });
  t.like(r.invoice, { state: 'settled', settled_late: true, deposit_id: dep.deposit_id });
  t.is(await codeOf(admin(s, 'CLAIM', { deposit_id: dep.deposit_id, invoice_id: inv.invoice_id })),
    'deposit_already_credited');
  t.is(await balance(s, inv.machine_id, inv.machine_token!), BigInt(inv.credit_units));
  t.deepEqual((await admin(s, 'UNMATCHED', {})).deposits, []);
  const check = await s.stopAndCheckLedger();
  t.deepEqual([check.exitCode, check.ok, check.problems], [0, true, []]);
});
