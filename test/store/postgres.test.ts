// What only the PostgreSQL store does (the contract itself is test/store/contract-suite.ts): versioned,
// idempotent migrations under an advisory lock (guards are the contract suite's, on both engines); a deadlock
// run again; and two stores on one database (two nodes) writing one machine's journal, where the
// per-machine sequence lets one commit and sends the other back to read afresh.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { verifyTlogProof } from '../../src/client/verify.ts';
import { Ledger } from '../../src/core/ledger.ts';
import { NodeIdentity } from '../../src/core/node-identity.ts';
import { PulseChain } from '../../src/core/pulse-chain.ts';
import { TransparencyLog } from '../../src/core/tlog.ts';
import { Kernels } from '../../src/kernels/index.ts';
import { MIGRATIONS } from '../../src/store/pg-migrations.ts';
import { PgStore } from '../../src/store/pg-store.ts';
import { isStoreConflict, put, storeConflict } from '../../src/store/store.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile, twoStores } from '../support/postgres.ts';
import { until } from '../support/until.ts';

const postgres = postgresForFile(test);

async function sql<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try { return (await c.query<T>(text, values)).rows; } finally { await c.end(); }
}

testNeeding(test, 'migrations: applied once, by nodes opening together, and again on every open as a no-op',
  POSTGRES, async (t) => {
  const url = await (await postgres()).freshDatabase();
  const stores = await Promise.all([1, 2, 3].map(() => PgStore.open(url, { poolSize: 2 })));
  await Promise.all(stores.map((s) => s.close()));
  const again = await PgStore.open(url, { poolSize: 2 });
  await again.close();
  const rows = await sql<{ version: number; name: string }>(url, 'SELECT version, name FROM svc_migrations ORDER BY 1');
  t.deepEqual(rows.map((r) => [r.version, r.name]), MIGRATIONS.map((m) => [m.version, m.name]));
  const cols = await sql<{ column_name: string; data_type: string }>(url,
    `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'svc_records' ORDER BY 1`);
  t.deepEqual(cols.map((c) => `${c.column_name} ${c.data_type}`), ['key bytea', 'sub text', 'value json']);
});

testNeeding(test, 'migrations: a database newer than this code, or with another migration under a number, is refused',
  POSTGRES, async (t) => {
  const server = await postgres();
  const newer = await server.freshDatabase();
  await (await PgStore.open(newer, { poolSize: 1 })).close();
  await sql(newer, `INSERT INTO svc_migrations (version, name) VALUES (99, 'from-the-future')`);
  await t.throwsAsync(PgStore.open(newer, { poolSize: 1 }), {
    message: /migration 99 \(from-the-future\), newer than/,
  });
  const renamed = await server.freshDatabase();
  await (await PgStore.open(renamed, { poolSize: 1 })).close();
  await sql(renamed, `UPDATE svc_migrations SET name = 'something-else' WHERE version = 1`);
  await t.throwsAsync(PgStore.open(renamed, { poolSize: 1 }), { message: /migration 1 is "something-else"/ });
});

testNeeding(test, 'a deadlock with another transaction is run again, and the batch lands once', POSTGRES, async (t) => {
  const url = await (await postgres()).freshDatabase();
  const store = await PgStore.open(url, { poolSize: 2 });
  t.teardown(() => store.close());
  await store.write([put('meta', 'a', { v: 0 }), put('meta', 'b', { v: 0 })]);
  const other = new pg.Client({ connectionString: url });
  await other.connect();
  t.teardown(() => other.end());
  await other.query('BEGIN');
  await other.query(`UPDATE svc_records SET value = '{"v":"other"}' WHERE sub = 'meta' AND key = 'b'::bytea`);
  // the store locks a, then waits for b; the other transaction then waits for a: a cycle
  const write = store.write([put('meta', 'a', { v: 1 }), put('meta', 'b', { v: 1 })]);
  await until('the store waiting for the row the other transaction holds', async () => (await sql<{ n: number }>(url,
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%svc_records%'`,
  ))[0]!.n === 1);
  const blocked = other.query(`UPDATE svc_records SET value = '{"v":"other"}' WHERE sub = 'meta' AND key = 'a'::bytea`);
  // the server breaks the cycle by failing the transaction that waited first (the store's) after
  // deadlock_timeout; the store runs its batch again, which waits until the other commits
  await blocked;
  await other.query('COMMIT');
  await write;
  t.is(store.stats.retries, 1);
  t.deepEqual([await store.get('meta', 'a'), await store.get('meta', 'b')], [{ v: 1 }, { v: 1 }]);
});

testNeeding(test, 'two nodes, one machine: the journal sequence lets one write commit, the other reads again',
  POSTGRES, async (t) => {
  const url = await (await postgres()).freshDatabase();
  const [a, b] = await twoStores(t, url);
  const [la, lb] = [new Ledger(a), new Ledger(b)];
  const M = 'shared-machine';
  const at = new Date();
  // both nodes read the same account, and each builds the change that follows it
  const [seenA, seenB] = [await la.account(M), await lb.account(M)];
  const fromA = la.change(M, seenA, 'credit', 100n, 0n, { rail: 'A' }, at);
  const fromB = lb.change(M, seenB, 'credit', 7n, 0n, { rail: 'B' }, at);
  await a.write(fromA.ops);
  const lost = await t.throwsAsync(b.write(fromB.ops));
  t.true(isStoreConflict(lost), 'the second writer of journal seq 1 is refused, not merged');
  t.deepEqual(await lb.account(M), { available: 100n, reserved: 0n, seq: 1 }, 'B reads A\'s write: no cache');
  // B reads afresh and writes the next seq
  await b.write(lb.change(M, await lb.account(M), 'credit', 7n, 0n, { rail: 'B' }, at).ops);
  const check = await la.verify();
  t.true(check.ok, check.problems.join('; '));
  t.deepEqual(await la.account(M), { available: 107n, reserved: 0n, seq: 2 });
  t.deepEqual((await la.journal(M)).map((e) => [e.seq, e.ref.rail]), [[1, 'A'], [2, 'B']]);
});

testNeeding(test, 'two nodes, one machine: an operation that read a state another node then changed runs again',
  POSTGRES, async (t) => {
  const url = await (await postgres()).freshDatabase();
  const [a, b] = await twoStores(t, url);
  const [la, lb] = [new Ledger(a), new Ledger(b)];
  const M = 'stale-reader';
  const at = new Date();
  await a.write(la.change(M, await la.account(M), 'credit', 100n, 0n, { rail: 'A' }, at).ops);
  await a.write([put('quotes', 'q', { state: 'issued' })]);
  /** ACCEPT_QUOTE's shape: read the quote, then the account, then write both */
  const accept = (l: Ledger, s: PgStore, between?: () => Promise<unknown>) => l.withMachine(M, async () => {
    const q = await s.get('quotes', 'q');
    await between?.();
    if (q?.state !== 'issued') return 'not issued';
    const { ops } = l.change(M, await l.account(M), 'reserve', -60n, 60n, { quote_id: 'q' }, at);
    await s.write([put('quotes', 'q', { state: 'accepted' }), ...ops]);
    return 'accepted';
  });
  let runs = 0;
  // node A reads the quote issued; node B accepts it before A reads the account
  const fromA = await accept(la, a, async () => {
    if (++runs === 1) t.is(await accept(lb, b), 'accepted');
  });
  t.is(runs, 2, 'A ran again once B had moved the journal on');
  t.is(fromA, 'not issued', 'and then saw the quote B accepted');
  t.deepEqual(await la.account(M), { available: 40n, reserved: 60n, seq: 2 }, 'reserved once');
  t.true((await la.verify()).ok);
});

testNeeding(test, 'two nodes, one machine: a conflicting operation runs 5 times at most, another error once; '
  + 'an operation may change twice; other machines do not wait', POSTGRES, async (t) => {
  const url = await (await postgres()).freshDatabase();
  const [a, b] = await twoStores(t, url);
  const [la, lb] = [new Ledger(a), new Ledger(b)];
  const M = 'retried';
  const at = new Date();
  let runs = 0;
  const busy = await t.throwsAsync(la.withMachine(M, async () => { runs++; throw storeConflict('always'); }));
  t.true(isStoreConflict(busy));
  t.is(runs, 5, 'five runs, then the conflict reaches the caller');
  runs = 0;
  await t.throwsAsync(la.withMachine(M, async () => { runs++; throw new Error('not a conflict'); }),
    { message: 'not a conflict' });
  t.is(runs, 1, 'any other error at once');
  // two changes in one operation: the second follows the first
  t.is(await la.withMachine(M, async () => {
    const first = la.change(M, await la.account(M), 'credit', 100n, 0n, { rail: 'A' }, at);
    const second = la.change(M, first.next, 'reserve', -40n, 40n, { quote_id: 'q' }, at);
    await a.write([...first.ops, ...second.ops]);
    return 'done';
  }), 'done');
  t.deepEqual(await la.account(M), { available: 60n, reserved: 40n, seq: 2 });
  // after the operation, a change outside withMachine builds on what it reads, whatever the other node did
  await b.write(lb.change(M, await lb.account(M), 'credit', 1n, 0n, { rail: 'B' }, at).ops);
  await a.write(la.change(M, await la.account(M), 'credit', 1n, 0n, { rail: 'A' }, at).ops);
  t.deepEqual(await la.account(M), { available: 62n, reserved: 40n, seq: 4 });
  // one node's lock is per machine: another machine runs while this one is held
  let release!: () => void;
  let entered!: () => void;
  const inside = new Promise<void>((r) => { entered = r; });
  const held = la.withMachine(M, () => new Promise<string>((r) => { release = () => r('held'); entered(); }));
  await inside; // a shared store reads the account before the operation runs: wait until it holds the lock
  t.is(await la.withMachine('other-machine', async () => 'other'), 'other');
  release();
  t.is(await held, 'held');
  t.true((await la.verify()).ok);
});

testNeeding(test, 'two nodes, one machine funded for exactly 10 holds: 30 concurrent reserves, exactly 10 succeed',
  POSTGRES, async (t) => {
  const url = await (await postgres()).freshDatabase();
  const [a, b] = await Promise.all([PgStore.open(url, { poolSize: 3 }), PgStore.open(url, { poolSize: 3 })]);
  t.teardown(async () => { await a.close(); await b.close(); });
  const nodes = [{ s: a, l: new Ledger(a) }, { s: b, l: new Ledger(b) }];
  const M = 'contended';
  const at = new Date();
  await a.write(nodes[0]!.l.change(M, await nodes[0]!.l.account(M), 'credit', 100n, 0n, { rail: 'A' }, at).ops);
  const reserve = (i: number) => {
    const { s, l } = nodes[i % 2]!;
    return l.withMachine(M, async () => {
      const acct = await l.account(M);
      if (acct.available < 10n) return false;
      await s.write(l.change(M, acct, 'reserve', -10n, 10n, { quote_id: `q${i}` }, at).ops);
      return true;
    });
  };
  const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => reserve(i)));
  const rejected = results.filter((r) => r.status === 'rejected')
    .map((r) => String((r as PromiseRejectedResult).reason));
  t.deepEqual(rejected, [], 'every conflict was run again within its runs');
  t.is(results.filter((r) => r.status === 'fulfilled' && r.value).length, 10);
  t.deepEqual(await nodes[1]!.l.account(M), { available: 0n, reserved: 100n, seq: 11 });
  const check = await nodes[0]!.l.verify();
  t.true(check.ok, check.problems.join('; '));
  t.log(`store conflicts: ${a.stats.conflicts! + b.stats.conflicts!}`);
});

testNeeding(test, 'a long scan (a snapshot of its own) whose reader reads and writes per record, on a pool of one',
  POSTGRES, async (t) => {
  const url = await (await postgres()).freshDatabase();
  const store = await PgStore.open(url, { poolSize: 1 });
  t.teardown(() => store.close());
  const due = (i: number) => put('idempotency_expiry', String(i).padStart(4, '0'), { i });
  await store.write(Array.from({ length: 600 }, (_, i) => due(i)));
  let seen = 0;
  // as sweepIdempotency does: a scan past one page, a point read and a write for what it names
  for await (const [k] of store.entries('idempotency_expiry')) {
    if ((await store.get('idempotency_expiry', k)) !== undefined) seen++;
    if (seen % 100 === 0) await store.write([put('meta', `swept-${seen}`, { seen })]);
  }
  t.is(seen, 600, 'the scan\'s snapshot connection is not the one its reads wait for');
  t.deepEqual(await store.get('meta', 'swept-600'), { seen: 600 });
});

/** A node's identity in a temp dir of its own (removed at the test's end). */
function identity(t: { teardown(fn: () => void): void }): NodeIdentity {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-node-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return NodeIdentity.loadOrCreate(dir);
}

testNeeding(test, 'two nodes on one database keep a pulse chain and transparency logs each, apart', POSTGRES,
  async (t) => {
  const url = await (await postgres()).freshDatabase();
  const [a, b] = await Promise.all([PgStore.open(url, { poolSize: 2 }), PgStore.open(url, { poolSize: 2 })]);
  const chains = [new PulseChain(a, identity(t), 3_600_000), new PulseChain(b, identity(t), 3_600_000)];
  t.teardown(async () => { for (const c of chains) await c.stop(); await a.close(); await b.close(); });
  for (const c of chains) await c.start();
  for (const c of chains) await c.emit();
  const [ca, cb] = chains as [PulseChain, PulseChain];
  t.not(ca.chainId, cb.chainId);
  for (const c of chains) {
    const [p0, p1] = [await c.get(0), await c.get(1)];
    t.is(p0?.pulse.chain_id, c.chainId);
    t.is(p1?.pulse.prev_output, p0?.output_hash, 'each chain links to its own previous pulse');
    t.is(c.current().index, 1);
  }
  t.is(await ca.get(2), undefined);
  const k = Kernels.create();
  const ids = [identity(t), identity(t)];
  const logs = [new TransparencyLog(a, k, ids[0]!, 'timestamps', 'svc/a/timestamps'),
    new TransparencyLog(b, k, ids[1]!, 'timestamps', 'svc/b/timestamps')];
  for (let i = 0; i < 3; i++) await logs[0]!.append((n) => Buffer.from(`a${n}`));
  const fromB = await logs[1]!.append((n) => Buffer.from(`b${n}`));
  t.is(fromB.index, 0, 'the other node\'s log starts at 0: one log each');
  t.is(await logs[0]!.size(), 3);
  const v = await verifyTlogProof(fromB.tlogProof, Buffer.from('b0'), ids[1]!.public.public_key, 'svc/b/timestamps');
  t.true(v.ok);
});

testNeeding(test, 'one node key in two processes: the chain is never forked, the process behind stops', POSTGRES,
  async (t) => {
  const url = await (await postgres()).freshDatabase();
  const [a, b] = await Promise.all([PgStore.open(url, { poolSize: 2 }), PgStore.open(url, { poolSize: 2 })]);
  const id = identity(t);
  const [old, next] = [new PulseChain(a, id, 3_600_000), new PulseChain(b, id, 3_600_000)];
  t.teardown(async () => { await old.stop(); await next.stop(); await a.close(); await b.close(); });
  await old.start(); // pulse 0
  await next.start(); // as a restart does: reads the chain, publishes pulse 1
  t.is(next.current().index, 1);
  const e = await t.throwsAsync(old.emit()); // the old process, still running, is behind: its pulse 1 is refused
  t.is((e as { code?: string }).code, 'service_unavailable');
  t.throws(() => old.current(), { message: /another process extends this node's pulse chain/ });
  await next.emit();
  const pulses = [await next.get(0), await next.get(1), await next.get(2)];
  t.deepEqual(pulses.map((p) => p?.pulse.chain_id), [old.chainId, old.chainId, old.chainId], 'one chain');
  t.is(pulses[1]?.pulse.prev_output, pulses[0]?.output_hash);
  t.is(pulses[2]?.pulse.prev_output, pulses[1]?.output_hash);
  // and a transparency log appended by both: each index once, the one behind reads the size again
  const k = Kernels.create();
  const log = (s: PgStore) => new TransparencyLog(s, k, id, 'events', 'svc/x/events');
  const [l1, l2] = [log(a), log(b)];
  await l1.append((n) => Buffer.from(`one ${n}`));
  await l2.append((n) => Buffer.from(`two ${n}`)); // reads size 1 from the database
  await l1.append((n) => Buffer.from(`one ${n}`)).then(() => t.fail('index 1 was taken'), (err: unknown) => {
    t.true(isStoreConflict(err));
  });
  const again = await l1.append((n) => Buffer.from(`one ${n}`));
  t.is(again.index, 2, 'after the conflict it appends after the other\'s entry');
});
