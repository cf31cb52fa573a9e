// The real svcd on PostgreSQL (SVC_STORE=postgres://…): funded through svc-admin settle-invoice, paid
// executions end to end, receipts that verify, a clean audit and backup, a restart on the same
// database, and the ledger invariant recomputed from the database after a clean stop. Nothing lands in
// the data dir's LevelDB.
import test from 'ava';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ledger } from '../../src/core/ledger.ts';
import { PgStore } from '../../src/store/pg-store.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';
import { startSvcd } from '../support/start-svcd.ts';
import { BIN, cliJson, paidExecution, runBin } from '../support/svcd.ts';
import { txRef } from '../support/references.ts';

const postgres = postgresForFile(test);

testNeeding(test, 'svcd on PostgreSQL: settle, paid executions, receipts, audit, backup, restart, ' +
  'ledger invariant', POSTGRES, async (t) => {
  const url = await (await postgres()).freshDatabase();
  const s = await startSvcd(t, { SVC_STORE: url, SVC_PULSE_PERIOD_MS: '1000' }, { args: ['core'], checkLedger: true });
  const M = 'pg-machine';
  const c = await s.edge();
  t.teardown(() => c.close());
  const inv = await c.request('FUND_ACCOUNT', { machine_id: M, units: 3, network: 'TRON', asset: 'USDT' });
  const reference = txRef('pg-tx-1', 'USDT_TRON');
  const settled = await s.svcAdmin(['--json', 'settle-invoice', inv.invoice_id as string, '--reference', reference]);
  t.is(settled.code, 0, settled.stderr);
  t.is(cliJson(settled).state, 'settled');
  const token = inv.machine_token as string;
  const funded = await c.request('BALANCE', { machine_id: M }, { token });
  const credit = BigInt(funded.available_units as string);
  t.true(credit > 0n);

  const receipts: string[] = [];
  let spent = 0n;
  for (const bits of [256, 1001]) {
    const r = await paidExecution(c, M, token, 'get-pulse', { bits });
    t.regex(r.receipt_id as string, /^rcpt_/);
    receipts.push(r.receipt_id as string);
    spent += BigInt(r.units_charged as string);
  }
  const bal = await c.request('BALANCE', { machine_id: M }, { token });
  t.deepEqual([BigInt(bal.available_units as string), bal.reserved_units], [credit - spent, '0']);
  for (const id of receipts) {
    t.true((await c.request('VERIFY_RECEIPT', { receipt_id: id, machine_id: M })).valid === true, id);
  }

  const audit = await s.svcAdmin(['--json', 'audit']);
  t.is(audit.code, 0, audit.stdout + audit.stderr);
  const report = JSON.parse(audit.stdout);
  t.true(report.clean, report.discrepancies?.join('; '));
  t.is(report.totals.receipts, 2);
  t.is(BigInt(report.totals.spent_units), spent);

  // a backup of a node on PostgreSQL: one snapshot of the database, written as a LevelDB data dir
  const tmp = mkdtempSync(join(tmpdir(), 'svc-pg-backup-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const backup = await s.svcAdmin(['--json', 'backup', join(tmp, 'b')]);
  t.is(backup.code, 0, backup.stdout + backup.stderr);
  const manifest = JSON.parse(readFileSync(join(tmp, 'b', 'backup-manifest.json'), 'utf8'));
  t.true(manifest.ledger.ok);
  t.true(manifest.audit.clean);
  t.is(manifest.journal_head.entries, 5, 'a credit, two reserves, two captures');

  t.false(existsSync(join(s.dataDir, 'ledger')), 'the data dir holds no LevelDB ledger');

  // a restart on the same database: the migrations find it current, and the records are all there
  t.is(await s.stop(), 0);
  await s.start(['core']);
  const c2 = await s.edge();
  t.teardown(() => c2.close());
  const again = await c2.request('BALANCE', { machine_id: M }, { token });
  t.is(BigInt(again.available_units as string), credit - spent);
  const rec = await c2.request('GET_RECEIPT', { receipt_id: receipts[1]!, machine_id: M }, { token });
  t.true(rec.valid === true);

  // `svcd audit` reads the store SVC_STORE names (one snapshot: it may run beside a serving node)
  const offline = await runBin(BIN.svcd, ['audit', '--json'], { SVC_DATA_DIR: s.dataDir, SVC_STORE: url });
  t.is(offline.code, 0, offline.stdout + offline.stderr);
  t.is(JSON.parse(offline.stdout).totals.receipts, 2);

  // and straight from the database, while svcd runs: the journal explains every balance
  const store = await PgStore.open(url, { poolSize: 2 });
  try {
    const check = await new Ledger(store).verify();
    t.true(check.ok, check.problems.join('; '));
    t.deepEqual([check.accounts, check.entries], [1, 5]);
  } finally {
    await store.close();
  }
});
