// How the PostgreSQL store uses its connections when they are scarce or a statement is refused: a write
// that cannot get a connection in time is refused `busy` and lands nothing (it was never sent); a statement
// the server refuses (a conflict) keeps its connection; an unsynced batch is one statement that turns the
// WAL flush off for its own transaction only, so no transaction of svcd's stays open between round trips
// (a node frozen or cut off between two of them would hold its rows' locks against every other node).
import test from 'ava';
import { createConnection, createServer, type Socket } from 'node:net';
import pg from 'pg';
import { ServiceError } from '../../src/errors.ts';
import { PgStore } from '../../src/store/pg-store.ts';
import { writeStatement } from '../../src/store/pg-write.ts';
import { create, isStoreConflict, put } from '../../src/store/store.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';
import { until } from '../support/until.ts';

const postgres = postgresForFile(test);

async function client(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return c;
}

/**
 * A write of `store`'s that waits on its connection for a row `other` holds (`other` begins a transaction
 * inserting it, still open): resolves once the write is seen waiting, with the write's promise.
 */
async function heldWrite(store: PgStore, other: pg.Client): Promise<{ waiting: Promise<void> }> {
  await other.query('BEGIN');
  await other.query(`INSERT INTO svc_records (sub, key, value) VALUES ('meta', 'held'::bytea, '{"v":"other"}')`);
  const waiting = store.write([put('meta', 'held', { v: 'store' })]);
  await until('the store\'s statement waiting for the held row', async () => (await other.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'svcd' AND wait_event_type = 'Lock'
      AND datname = current_database()`,
  )).rows[0]!.n === 1);
  return { waiting };
}

/** the backend pids of the store's pooled connections */
async function svcdPids(c: pg.Client): Promise<number[]> {
  const r = await c.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE application_name = 'svcd' AND datname = current_database()`);
  return r.rows.map((x) => x.pid).sort();
}

testNeeding(test, 'every connection in use: a write waits its time, then is refused busy; it landed nothing',
  POSTGRES, async (t) => {
  const url = await (await postgres()).freshDatabase();
  const store = await PgStore.open(url, { poolSize: 1, acquireTimeoutMs: 300 });
  t.teardown(() => store.close());
  const other = await client(url);
  t.teardown(() => other.end());
  // another transaction holds the row the store's only connection waits for
  const { waiting } = await heldWrite(store, other);
  const refused = await t.throwsAsync(store.write([put('meta', 'fresh', { v: 1 })]));
  t.true(refused instanceof ServiceError && refused.code === 'busy', String(refused));
  t.regex(refused!.message, /nothing was written/);
  await other.query('COMMIT');
  await waiting;
  t.is(await store.get('meta', 'fresh'), undefined, 'the refused write landed nothing');
  t.deepEqual(await store.get('meta', 'held'), { v: 'store' });
});

testNeeding(test, 'a statement the server refuses (a key created twice) keeps its connection', POSTGRES, async (t) => {
  const url = await (await postgres()).freshDatabase();
  const store = await PgStore.open(url, { poolSize: 1 });
  t.teardown(() => store.close());
  const watcher = await client(url);
  t.teardown(() => watcher.end());
  await store.write([create('meta', 'once', { v: 1 })]);
  const before = await svcdPids(watcher);
  t.is(before.length, 1);
  const e = await t.throwsAsync(store.write([create('meta', 'once', { v: 2 })]));
  t.true(isStoreConflict(e));
  t.deepEqual(await store.get('meta', 'once'), { v: 1 });
  t.deepEqual(await svcdPids(watcher), before, 'the same connection serves on');
});

testNeeding(test, 'an unsynced batch: one statement, its WAL flush off for its own transaction only', POSTGRES,
  async (t) => {
  const url = await (await postgres()).freshDatabase();
  const store = await PgStore.open(url, { poolSize: 1 });
  t.teardown(() => store.close());
  const statements = store.stats.statements!;
  await store.write([put('meta', 'quick', { v: 1 }), create('meta', 'made', { v: 2 })], { sync: false });
  t.is(store.stats.statements! - statements, 1, 'one statement, one round trip');
  t.is(store.stats.unsyncedFlushes, 1);
  t.deepEqual(await store.get('meta', 'quick'), { v: 1 });
  // the same statement run by hand in a transaction: off inside it, the server's setting after it
  const c = await client(url);
  t.teardown(() => c.end());
  const { text, values } = writeStatement([put('meta', 'by-hand', { v: 3 })], { sync: false });
  const show = async () => (await c.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]!;
  await c.query('BEGIN');
  await c.query(text, values);
  t.is((await show()).synchronous_commit, 'off');
  await c.query('COMMIT');
  t.is((await show()).synchronous_commit, 'on');
  const synced = writeStatement([put('meta', 'by-hand', { v: 4 })]);
  t.false(synced.text.includes('synchronous_commit'), 'a synced batch leaves the server\'s setting alone');
});

/** A TCP relay to PostgreSQL whose connections the test can reset (as a network or a dying server does). */
async function relay(t: { teardown(fn: () => unknown): void }, port: number) {
  const sides = new Set<Socket>();
  let newest: Socket | null = null;
  const server = createServer((down) => {
    const up = createConnection({ host: '127.0.0.1', port });
    newest = down;
    for (const s of [down, up]) {
      sides.add(s);
      s.on('error', () => {});
      s.on('close', () => sides.delete(s));
    }
    down.pipe(up);
    up.pipe(down);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => { for (const s of sides) s.destroy(); server.close(); });
  return {
    port: (server.address() as { port: number }).port,
    /** every connection reset at once (the client side gets ECONNRESET) */
    resetAll: () => { for (const s of sides) s.resetAndDestroy(); },
    /** the connection opened last, reset */
    resetNewest: () => newest?.resetAndDestroy(),
  };
}

testNeeding(test, 'a connection reset under a running statement fails that statement, not the process; the next '
  + 'one runs on a new connection', POSTGRES, async (t) => {
  const server = await postgres();
  const url = await server.freshDatabase();
  const via = await relay(t, server.port);
  const store = await PgStore.open(url.replace(`:${server.port}/`, `:${via.port}/`), { poolSize: 1 });
  t.teardown(() => store.close());
  const other = await client(url);
  t.teardown(() => other.end());
  const { waiting } = await heldWrite(store, other);
  via.resetAll();
  const lost = await t.throwsAsync(waiting);
  t.true(lost instanceof ServiceError && lost.code === 'service_unavailable', String(lost));
  t.regex(lost!.message, /may or may not have landed/);
  await other.query('ROLLBACK');
  await store.write([put('meta', 'after', { v: 1 })]);
  t.deepEqual(await store.get('meta', 'after'), { v: 1 });
  // and a snapshot whose connection is reset: its reads fail, closing it does not throw
  const snap = await store.snapshot(); // a connection of its own, the newest
  via.resetNewest();
  const read = await t.throwsAsync(async () => { for await (const _ of store.entries('meta', { snapshot: snap })); });
  t.true(read instanceof ServiceError && read.code === 'service_unavailable', String(read));
  await snap.close();
  t.deepEqual(await store.get('meta', 'after'), { v: 1 }, 'the store serves on');
});
