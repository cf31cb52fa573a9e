// Two real svcd nodes (core + HTTP gateway each) on one PostgreSQL database, as a cluster runs them (each
// its own data dir and node key; the quote, result and BCT keys copied from the first): one idempotency key
// sent to both nodes at once runs once; a receipt node A signed verifies on node B through
// POST /api/v1/receipts/verify, before and after A rotates its key; one node holds the sweep lease.
// In-process tests of the same state (amounts, deposits, sweeps, leases): postgres-cluster-state.test.ts.
import test from 'ava';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SvcClient } from '../../src/client/client.ts';
import { Ledger } from '../../src/core/ledger.ts';
import { PgStore } from '../../src/store/pg-store.ts';
import { httpJson } from '../support/http-from.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';
import { stopCheckingLedger } from '../support/start-svcd.ts';
import { fundMachine, paidExecution, Svcd } from '../support/svcd.ts';

const SHARED_KEYS = ['quote-key.bin', 'result-key.bin', 'bct-key.bin'];

interface Cluster { url: string; one: Svcd; two: Svcd; c1: SvcClient; c2: SvcClient }
let started: Promise<Cluster> | null = null;

// the nodes stop (both, whatever happens to either) and their ledger is checked before the server stops
const postgres = postgresForFile(test, async () => {
  const c = await started?.catch(() => null);
  if (!c) return;
  c.c1.close(); c.c2.close();
  try {
    const [two, one] = await Promise.allSettled([stopCheckingLedger(c.two), stopCheckingLedger(c.one)]);
    for (const r of [two, one]) if (r.status === 'rejected') throw r.reason;
  } finally {
    c.one.cleanup(); c.two.cleanup();
  }
});

/** The two nodes, started by the first test that asks (one pair for the file), stopped after the last. */
function cluster(): Promise<Cluster> {
  started ??= (async () => {
    const url = await (await postgres()).freshDatabase();
    const env = { SVC_STORE: url, SVC_PULSE_PERIOD_MS: '1000' };
    const one = new Svcd(env);
    await one.start(['start']);
    const dir2 = mkdtempSync(join(tmpdir(), 'svcd-test-'));
    mkdirSync(dir2, { recursive: true, mode: 0o700 });
    for (const f of SHARED_KEYS) copyFileSync(join(one.dataDir, f), join(dir2, f));
    const two = new Svcd(env, dir2);
    await two.start(['start']);
    return { url, one, two, c1: await one.edge(), c2: await two.edge() };
  })();
  return started;
}


const codeOf = (r: PromiseSettledResult<unknown>) => (r.status === 'fulfilled'
  ? 'ok' : String((r.reason as { code?: unknown }).code ?? r.reason));

testNeeding(test.serial, 'idempotency: one key sent to two nodes at once runs once (QUOTE, then ACCEPT_QUOTE)',
  POSTGRES, async (t) => {
  const { one, c1, c2 } = await cluster();
  const M = 'idem-two-nodes';
  const token = await fundMachine(one, M, 2);
  const auth = { token };
  for (let round = 0; round < 3; round++) {
    const key = `quote-key-${round}`;
    const quotes = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => (i % 2 ? c2 : c1)
      .request('QUOTE', { service: 'get-pulse', machine_id: M, bits: 64, idempotency_key: key }, auth)));
    const ids = new Set(quotes.filter((q) => q.status === 'fulfilled')
      .map((q) => (q as PromiseFulfilledResult<Record<string, unknown>>).value.quote_id));
    t.is(ids.size, 1, `round ${round}: one quote issued under the key (${[...ids].join(' ')})`);
    t.true(quotes.every((q) => q.status === 'fulfilled' || codeOf(q) === 'idempotency_in_progress'),
      quotes.map(codeOf).join(' '));
    const [id] = [...ids];
    // settled: both nodes replay it
    for (const c of [c1, c2]) {
      const again = await c.request('QUOTE', { service: 'get-pulse', machine_id: M, bits: 64, idempotency_key: key },
        auth);
      t.is(again.quote_id, id);
      t.true(again.idempotent_replayed === true);
    }
  }
  // one ACCEPT_QUOTE key on both nodes at once: it runs once, so no run meets the quote accepted already
  const q = await c1.request('QUOTE', { service: 'get-pulse', machine_id: M, bits: 64 });
  const before = await c2.request('BALANCE', { machine_id: M }, auth);
  const accepts = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => (i % 2 ? c2 : c1)
    .request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: M, idempotency_key: 'accept-once' }, auth)));
  t.true(accepts.every((r) => r.status === 'fulfilled' || codeOf(r) === 'idempotency_in_progress'),
    accepts.map(codeOf).join(' '));
  t.true(accepts.some((r) => r.status === 'fulfilled'));
  const after = await c1.request('BALANCE', { machine_id: M }, auth);
  const reserved = BigInt(after.reserved_units as string) - BigInt(before.reserved_units as string);
  t.is(reserved, BigInt(q.quote_units as number), 'reserved once');
  // no mark of a running key is left behind
  const store = await PgStore.open((await cluster()).url, { poolSize: 1 });
  try {
    const left = [];
    for await (const k of store.keys('idempotency_running')) left.push(k);
    t.deepEqual(left, []);
  } finally {
    await store.close();
  }
});

const RECEIPTS = 'receipts: node A\'s receipt verifies on node B over HTTP, before and after A rotates its key';
testNeeding(test.serial, RECEIPTS, POSTGRES, async (t) => {
  const { one, two, c1 } = await cluster();
  const M = 'receipt-two-nodes';
  const token = await fundMachine(one, M, 2);
  const verifyOn = (s: Svcd, id: string) =>
    httpJson(`${s.ready.http!}/api/v1/receipts/verify`, 'POST', { machine_id: M, receipt_id: id });
  const hello1 = await c1.request('HELLO', {});
  const made = await paidExecution(c1, M, token, 'get-pulse', { bits: 64 });
  for (const s of [one, two]) {
    const v = await verifyOn(s, made.receipt_id as string);
    t.is(v.status, 200);
    t.true(v.body.valid, JSON.stringify(v.body));
    t.is(v.body.receipt.node_id, hello1.node_id, 'signed by node A');
    t.is(v.body.key_id, (hello1.edge_proof as { key_id: string }).key_id, 'the key of the node that signed it');
  }
  // A rotates: B verifies the old receipt by the retired key's window and the new one by the new key
  const admin = await one.admin();
  let rotated: Record<string, unknown>;
  try {
    rotated = await admin.request('ROTATE_NODE_KEY', {});
  } finally {
    admin.close();
  }
  const later = await paidExecution(c1, M, token, 'get-pulse', { bits: 64 });
  const old = await verifyOn(two, made.receipt_id as string);
  const fresh = await verifyOn(two, later.receipt_id as string);
  t.true(old.body.valid, JSON.stringify(old.body));
  t.is(old.body.key_valid_until, rotated.rotated_at, 'the retired key, with the window A published');
  t.true(fresh.body.valid, JSON.stringify(fresh.body));
  t.is(fresh.body.key_id, rotated.key_id);
  t.is(fresh.body.key_valid_from, rotated.rotated_at);
  // the audit on B checks every receipt's signature, A's by the keys A published, before and after its rotation
  const adminB = await two.admin();
  try {
    const report = await adminB.request('AUDIT', {});
    t.deepEqual(report.discrepancies, [], 'node B audits node A\'s receipts as valid');
    t.true(report.clean);
  } finally {
    adminB.close();
  }
});

testNeeding(test.serial, 'sweeps: one of the two nodes holds the sweep lease', POSTGRES, async (t) => {
  const { url, c1, c2 } = await cluster();
  const ids = [(await c1.request('HELLO', {})).node_id, (await c2.request('HELLO', {})).node_id];
  const store = await PgStore.open(url, { poolSize: 1 });
  try {
    const lease = await store.get('leases', 'sweeps');
    t.truthy(lease);
    t.true(ids.includes(lease!.node_id), JSON.stringify(lease));
    const check = await new Ledger(store).verify();
    t.true(check.ok, check.problems.join('; '));
  } finally {
    await store.close();
  }
});
