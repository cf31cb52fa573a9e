// The money audit: a ledger after real paid flows audits clean, its CSV tables add up; a
// data dir corrupted by hand (with the Store, svcd stopped) makes `svc-admin audit` and `recover-runtime`
// exit 1 naming the record, and a balance svcd refuses to start on is named by the offline `svcd audit`.
import test from 'ava';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { idPart } from '../../src/store/key-codec.ts';
import { put, Store } from '../../src/store/store.ts';
import { BIN, fundMachine, runBin } from '../support/svcd.ts';
import { startSvcd } from '../support/start-svcd.ts';
import { paidFlow, QUOTE } from './flows.ts';

/** Rows of a CSV text (no quoted fields expected here), header first. */
const rows = (text: string) => text.trimEnd().split('\r\n').map((l) => l.split(','));

test('audit: clean after paid flows, CSV adds up; hand-corrupted records are named, exit 1', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'svc-audit-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const s = await startSvcd(t);
  const [m1, m2] = ['audit-one', 'audit-two'];
  const t1 = await fundMachine(s, m1, 3);
  const t2 = await fundMachine(s, m2, 2);
  const c = await s.edge();
  t.teardown(() => c.close());
  const receipts = [await paidFlow(c, m1, t1), await paidFlow(c, m1, t1), await paidFlow(c, m2, t2)];
  // a hold still open (accepted, not executed) and an invoice still pending
  const q = await c.request('QUOTE', { ...QUOTE, machine_id: m2 });
  await c.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: m2 }, { token: t2 });
  await c.request('FUND_ACCOUNT', { machine_id: m2, units: 5, network: 'TRON', asset: 'USDT' }, { token: t2 });

  const csvDir = join(tmp, 'csv');
  const a = await s.svcAdmin(['--json', 'audit', '--csv', csvDir]);
  t.is(a.code, 0, a.stdout + a.stderr);
  const report = JSON.parse(a.stdout);
  t.true(report.clean);
  t.deepEqual(report.discrepancies, []);
  t.is(report.csv, undefined, 'the CSV texts go to files, not to the output');
  t.is(report.csv_dir, csvDir);
  t.is(report.totals.receipts, 3);
  t.is(report.totals.captures, 3);
  t.is(report.totals.executed_quotes, 3);
  t.is(report.totals.accepted_quotes, 1);
  t.is(BigInt(report.totals.held_units), BigInt(q.quote_units as number));
  const units = BigInt(q.quote_units as number);
  t.is(BigInt(report.totals.spent_units), 3n * units);

  const machines = rows(readFileSync(join(csvDir, 'machines.csv'), 'utf8'));
  t.deepEqual(machines[0]!.slice(0, 3), ['machine_id', 'available_units', 'reserved_units']);
  t.deepEqual(machines.slice(1).map((r) => r[0]).sort(), [m1, m2]);
  const periods = rows(readFileSync(join(csvDir, 'periods.csv'), 'utf8'));
  const col = (name: string) => periods[0]!.indexOf(name);
  const sum = (name: string, rail?: string) => periods.slice(1)
    .filter((r) => rail === undefined || r[col('rail')] === rail)
    .reduce((n, r) => n + BigInt(r[col(name)]!), 0n);
  t.is(sum('credited_units', 'USDT_TRON'), BigInt(report.totals.credited_units), 'credits carry their rail');
  t.is(sum('spent_units'), 3n * units);
  t.is(sum('reserved_units') - sum('released_units') - sum('spent_units'), units, 'what is held = reserved − ended');
  const invoices = rows(readFileSync(join(csvDir, 'invoices.csv'), 'utf8'));
  t.deepEqual(invoices.slice(1).map((r) => `${r[0]} ${r[1]} ${r[2]}`).sort(),
    ['pending USDT_TRON 1', 'settled USDT_TRON 2']);
  t.deepEqual(rows(readFileSync(join(csvDir, 'discrepancies.csv'), 'utf8')), [['discrepancy']]);
  const recovered = await s.svcAdmin(['--json', 'recover-runtime']);
  t.is(recovered.code, 0, recovered.stdout);
  t.true(JSON.parse(recovered.stdout).audit.clean);

  // a receipt with no capture behind it (a forged copy of a real one): svcd starts, the audit names it
  t.is(await s.stop(), 0);
  let store = await Store.open(s.dataDir);
  const real = (await store.get('receipts', receipts[0]!))!;
  const forged = 'rcpt_forged_for_the_audit';
  const body = { ...(real.receipt as Record<string, unknown>), receipt_id: forged };
  await store.write([put('receipts', forged, { ...real, receipt: body })]);
  // and a chain deposit recorded as credited to a settled invoice that was paid otherwise
  const settledInvoice = await (async () => {
    for await (const [, v] of store.entries('invoices')) if (v.state === 'settled') return v.invoice_id as string;
    return '';
  })();
  const fakeDeposit = 'dep_forged_for_the_audit';
  await store.write([put('deposits', fakeDeposit, {
    deposit_id: fakeDeposit, state: 'credited', invoice_id: settledInvoice, amount: '1000000', rail: 'USDT_TRON',
  })]);
  await store.close();
  await s.start();
  const bad = await s.svcAdmin(['audit']);
  t.is(bad.code, 1, bad.stdout);
  t.regex(bad.stdout, new RegExp(`receipt: ${forged} has no capture in the journal`));
  t.regex(bad.stdout, new RegExp(`receipt: ${forged} does not verify \\(bad_signature\\)`));
  t.regex(bad.stdout, new RegExp(`deposit: ${fakeDeposit} is credited to invoice ${settledInvoice}, which does not`));
  t.regex(bad.stdout, /clean: false/);
  const rec = await s.svcAdmin(['recover-runtime']);
  t.is(rec.code, 1, 'recover-runtime runs the same check');
  t.regex(rec.stdout, new RegExp(`${forged} has no capture`));

  // an account balance edited by hand: svcd refuses to start, the offline audit names the machine
  t.is(await s.stop(), 0);
  store = await Store.open(s.dataDir);
  const acct = (await store.get('accounts', idPart(m1)))!;
  const available = String(BigInt(acct.available as string) + 7n);
  await store.write([put('accounts', idPart(m1), { ...acct, available })]);
  await store.close();
  const refused = await s.startExpectingFailure();
  t.is(refused.code, 1);
  t.regex(refused.output, /ledger invariant broken/);
  const offline = await runBin(BIN.svcd, ['audit', '--json'], { SVC_DATA_DIR: s.dataDir });
  t.is(offline.code, 1, offline.stderr);
  const o = JSON.parse(offline.stdout);
  t.false(o.clean);
  const named = (d: string) => d.startsWith(`ledger: ${m1}: available `) && d.includes('journal sums to');
  t.true(o.discrepancies.some(named), o.discrepancies.join('\n'));
  t.true(o.discrepancies.some((d: string) => d.includes(forged)), 'the forged receipt too');
});
