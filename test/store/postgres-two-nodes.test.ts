// Two real svcd core nodes on one PostgreSQL database (each its own data dir and node key; the quote and
// result keys copied from the first, as a cluster shares them: a quote id is sealed with the quote key).
// One machine's money moved through both at once: concurrent ACCEPTs of one quote across both nodes,
// exactly one succeeds; executions on either node; the ledger invariant holds in the database.
import test from 'ava';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ledger } from '../../src/core/ledger.ts';
import { PgStore } from '../../src/store/pg-store.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';
import { stopCheckingLedger } from '../support/start-svcd.ts';
import { fundMachine, Svcd } from '../support/svcd.ts';

const postgres = postgresForFile(test);
/** what nodes of one cluster share; each keeps its own node-ed25519.pem (it signs its own receipts) */
const SHARED_KEYS = ['quote-key.bin', 'result-key.bin', 'bct-key.bin'];

testNeeding(test, 'two svcd nodes, one database: one quote accepted once across both, executions on either',
  POSTGRES, async (t) => {
  const url = await (await postgres()).freshDatabase();
  const env = { SVC_STORE: url, SVC_PULSE_PERIOD_MS: '1000' };
  const one = new Svcd(env);
  t.teardown(async () => { await one.stop(); one.cleanup(); });
  await one.start(['core']);
  const dir2 = mkdtempSync(join(tmpdir(), 'svcd-test-'));
  mkdirSync(dir2, { recursive: true, mode: 0o700 });
  for (const f of SHARED_KEYS) copyFileSync(join(one.dataDir, f), join(dir2, f));
  const two = new Svcd(env, dir2);
  t.teardown(async () => { await two.stop(); two.cleanup(); });
  await two.start(['core']);

  const M = 'two-node-machine';
  const token = await fundMachine(one, M, 2);
  const [c1, c2] = [await one.edge(), await two.edge()];
  t.teardown(() => { c1.close(); c2.close(); });
  const auth = { token };
  const balance = async () => {
    const b = await c2.request('BALANCE', { machine_id: M }, auth);
    return [BigInt(b.available_units as string), BigInt(b.reserved_units as string)];
  };
  const [credit] = await balance();

  const q = await c1.request('QUOTE', { service: 'get-pulse', machine_id: M, bits: 256 });
  const accepts = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => (i % 2 ? c2 : c1)
    .request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: M }, auth)));
  const codes = accepts.map((r) => r.status === 'fulfilled' ? 'accepted' : (r.reason as { code: string }).code);
  t.is(codes.filter((c) => c === 'accepted').length, 1, codes.join(' '));
  t.deepEqual([...new Set(codes)].sort(), ['accepted', 'quote_not_issued']);
  const units = BigInt(q.quote_units as number);
  t.deepEqual(await balance(), [credit! - units, units], 'reserved once');

  // executed on the other node than the one that issued it, and again on the first: a replay
  const done = await c2.request('GET_PULSE', { quote_id: q.quote_id, machine_id: M }, auth);
  const replay = await c1.request('GET_PULSE', { quote_id: q.quote_id, machine_id: M }, auth);
  t.is(replay.receipt_id, done.receipt_id);
  t.true(replay.replayed === true);
  // more flows at once, alternating nodes
  const flows = await Promise.allSettled(Array.from({ length: 6 }, async (_, i) => {
    const c = i % 2 ? c2 : c1;
    const quote = await c.request('QUOTE', { service: 'get-pulse', machine_id: M, bits: 64 });
    await (i % 2 ? c1 : c2).request('ACCEPT_QUOTE', { quote_id: quote.quote_id, machine_id: M }, auth);
    const r = await c.request('GET_PULSE', { quote_id: quote.quote_id, machine_id: M }, auth);
    return BigInt(r.units_charged as string);
  }));
  const failed = flows.filter((f) => f.status === 'rejected').map((f) => String((f as PromiseRejectedResult).reason));
  t.deepEqual(failed, []);
  const spent = units + flows.reduce((n, f) => n + (f as PromiseFulfilledResult<bigint>).value, 0n);
  t.deepEqual(await balance(), [credit! - spent, 0n]);

  await stopCheckingLedger(two);
  await stopCheckingLedger(one);
  const store = await PgStore.open(url, { poolSize: 1 });
  try {
    const check = await new Ledger(store).verify();
    t.true(check.ok, check.problems.join('; '));
    t.is(check.entries, 1 + 2 + 2 * 6, 'a credit, then a reserve and a capture per execution');
  } finally {
    await store.close();
  }
});
