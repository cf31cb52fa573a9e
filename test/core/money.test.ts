// Money is never lost or duplicated: concurrent accepts cannot overspend, concurrent executions
// and settlements happen once, and a kill -9 in the middle of a burst of executions leaves every
// acknowledged execution with exactly one capture and one receipt (and none with two).
import test from 'ava';
import { Svcd, fundMachine } from '../support/svcd.ts';
import { Store } from '../../src/store/store.ts';
import { Ledger, type JournalEntry } from '../../src/core/ledger.ts';
import { price } from '../../src/protocol/pricing.ts';
import type { SvcClient } from '../../src/client/client.ts';
import { txRef } from '../support/references.ts';

async function ledgerOf(dataDir: string) {
  const store = await Store.open(dataDir);
  const ledger = new Ledger(store);
  const check = await ledger.verify();
  const journal: JournalEntry[] = [];
  for await (const [, v] of store.entries('journal')) journal.push(v as unknown as JournalEntry);
  const receipts: any[] = [];
  for await (const [, v] of store.entries('receipts')) receipts.push(v);
  const quotes = new Map<string, any>();
  for await (const [k, v] of store.entries('quotes')) quotes.set(k, v);
  await store.close();
  return { check, journal, receipts, quotes };
}

/** bytes for a bvm-exec quote such that a balance of `units` covers exactly 10 of them */
function tenPer(units: bigint): number {
  for (let kib = 1; kib < 100_000; kib++) {
    const q = price('bvm-exec', 65536, kib * 1024, 'standard').quote_units;
    if (units / BigInt(q) === 10n) return kib * 1024;
  }
  throw new Error('no size found');
}

test('50 concurrent accepts on a balance that covers 10: ' +
  'exactly 10 succeed, the rest are insufficient_balance', async (t) => {
  const s = await Svcd.start();
  try {
    const token = await fundMachine(s, 'race', 1);
    const clients: SvcClient[] = await Promise.all(Array.from({ length: 5 }, () => s.edge()));
    // 1 svcC plus the invoice's suffix: credited exactly the amount due
    const before = await clients[0]!.request('BALANCE', { machine_id: 'race' }, { token });
    const funded = BigInt(before.available_units as string);
    const bytes = tenPer(funded);
    const quotes = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      clients[i % 5]!.request('QUOTE', { service: 'bvm-exec', machine_id: 'race', bytes })));
    t.is(funded / BigInt(quotes[0]!.quote_units as number), 10n);
    const results = await Promise.allSettled(quotes.map((q, i) =>
      clients[i % 5]!.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: 'race' }, { token })));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    t.is(ok.length, 10);
    t.true(refused.every((r) => r.reason.code === 'insufficient_balance'),
      JSON.stringify(refused.map((r) => r.reason.code)));
    const bal = await clients[0]!.request('BALANCE', { machine_id: 'race' }, { token });
    t.is(BigInt(bal.reserved_units as string), 10n * BigInt(quotes[0]!.quote_units as number));
    t.is(BigInt(bal.available_units as string) + BigInt(bal.reserved_units as string), funded);
    clients.forEach((c) => c.close());
  } finally {
    t.is(await s.stop(), 0);
    const { check } = await ledgerOf(s.dataDir);
    t.true(check.ok, check.problems.join('; '));
    s.cleanup();
  }
});

test('the same execution sent 20 times at once captures once; concurrent settlements credit once', async (t) => {
  const s = await Svcd.start();
  try {
    const c = await s.edge();
    const a = await Promise.all([s.admin(), s.admin(), s.admin()]);
    const inv = await c.request('FUND_ACCOUNT', { machine_id: 'dup', units: 2, network: 'TRON', asset: 'USDT' });
    const token = inv.machine_token as string;
    // nine settlements at once, three payment references: one reference wins, its repeats replay, the others are 409
    const settle = (i: number) => a[i % 3]!.request('SETTLE_INVOICE', {
      invoice_id: inv.invoice_id, reference: txRef(`tx-${i % 3}`, 'USDT_TRON'),
    });
    const settles = await Promise.allSettled(Array.from({ length: 9 }, (_, i) => settle(i)));
    const won = settles.filter((r): r is PromiseFulfilledResult<Record<string, unknown>> => r.status === 'fulfilled');
    const outcome = (r: PromiseSettledResult<Record<string, unknown>>) =>
      (r.status === 'fulfilled' ? r.value.settlement_reference : (r.reason as any).code);
    t.is(won.length, 3, JSON.stringify(settles.map(outcome)));
    t.is(new Set(won.map((r) => r.value.settlement_reference)).size, 1);
    t.true(settles.every((r) => r.status === 'fulfilled' || (r.reason as any).code === 'invoice_already_settled'));
    const credited = String(BigInt(inv.amount_due as string) * 100n);
    t.is((await c.request('BALANCE', { machine_id: 'dup' }, { token })).available_units, credited);
    const q = await c.request('QUOTE', { service: 'get-pulse', machine_id: 'dup', bits: 256 });
    await c.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: 'dup' }, { token });
    const runs = await Promise.all(Array.from({ length: 20 }, () =>
      c.request('GET_PULSE', { quote_id: q.quote_id, machine_id: 'dup' }, { token })));
    t.is(new Set(runs.map((r) => r.receipt_id)).size, 1);
    t.is(new Set(runs.map((r) => r.output_hex)).size, 1);
    t.is(runs.filter((r) => !r.replayed).length, 1);
    const left = (await c.request('BALANCE', { machine_id: 'dup' }, { token })).available_units;
    t.is(left, String(BigInt(credited) - BigInt(q.quote_units as number)));
    c.close(); a.forEach((x) => x.close());
  } finally {
    await s.stop();
    const { check, journal } = await ledgerOf(s.dataDir);
    t.true(check.ok, check.problems.join('; '));
    t.is(journal.filter((e) => e.kind === 'credit').length, 1);
    t.is(journal.filter((e) => e.kind === 'capture').length, 1);
    s.cleanup();
  }
});

test('kill -9 during a burst of 200 executions: after restart the ledger holds ' +
  'and every acknowledged execution has exactly one capture and one receipt', async (t) => {
  const s = await Svcd.start({ SVC_KERNEL_THREADS: '2' });
  const acked = new Map<string, string>(); // quote_id → receipt_id
  let quoteIds: string[] = [];
  try {
    const token = await fundMachine(s, 'crash', 1);
    const clients = await Promise.all(Array.from({ length: 4 }, () => s.edge()));
    const quotes = await Promise.all(Array.from({ length: 200 }, (_, i) =>
      clients[i % 4]!.request('QUOTE', { service: 'get-pulse', machine_id: 'crash', bits: 4096 })));
    quoteIds = quotes.map((q) => q.quote_id as string);
    for (const q of quotes) {
      await clients[0]!.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: 'crash' }, { token });
    }
    let killed = false;
    const burst = quotes.map((q, i) => clients[i % 4]!
      .request('GET_PULSE', { quote_id: q.quote_id, machine_id: 'crash' }, { token })
      .then((r) => { if (!killed) acked.set(q.quote_id as string, r.receipt_id as string); })
      .catch(() => { /* in flight when the process died */ }));
    // kill while the burst is running: after some acknowledgements, before all of them
    const t0 = Date.now();
    while (acked.size < 20 && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 2));
    killed = true;
    await s.kill9();
    await Promise.all(burst);
    t.true(acked.size >= 20 && acked.size < 200, `acknowledged ${acked.size} of 200 before the kill`);
    // restart on the same data: svcd verifies the ledger before serving
    await s.start();
    const c = await s.edge();
    // the executions that were not acknowledged can be finished now, exactly once
    for (const id of quoteIds) {
      if (acked.has(id)) continue;
      const r = await c.request('GET_PULSE', { quote_id: id, machine_id: 'crash' }, { token });
      t.regex(r.receipt_id as string, /^rcpt_/);
    }
    c.close();
    clients.forEach((x) => x.close());
  } finally {
    await s.stop();
  }
  const { check, journal, receipts, quotes } = await ledgerOf(s.dataDir);
  t.true(check.ok, check.problems.join('; '));
  const captures = new Map<string, number>();
  for (const e of journal.filter((x) => x.kind === 'capture')) {
    captures.set(e.ref.quote_id!, (captures.get(e.ref.quote_id!) ?? 0) + 1);
  }
  const receiptCount = new Map<string, number>();
  for (const r of receipts) receiptCount.set(r.receipt.quote_id, (receiptCount.get(r.receipt.quote_id) ?? 0) + 1);
  for (const [qid, rid] of acked) {
    t.is(captures.get(qid), 1, `capture of acknowledged ${qid}`);
    t.is(receiptCount.get(qid), 1, `receipt of acknowledged ${qid}`);
    t.is(quotes.get(qid).receipt_id, rid, 'the stored receipt is the one the caller got');
  }
  t.true([...captures.values()].every((n) => n === 1), 'no quote captured twice');
  t.true([...receiptCount.values()].every((n) => n === 1), 'no quote with two receipts');
  t.is(captures.size, 200, 'every quote executed exactly once in the end');
  const total = journal.filter((e) => e.kind === 'capture').reduce((sum, e) => sum - BigInt(e.d_reserved), 0n);
  t.is(total, 200n * BigInt(price('get-pulse', 4096, 0, 'standard').quote_units));
  s.cleanup();
});
