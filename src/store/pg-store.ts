// The PostgreSQL store (SVC_STORE=postgres://…): the store contract on one table shared by every node
// (schema: ./pg-migrations.ts). Each write() is one SQL statement (./pg-write.ts), so one transaction at
// READ COMMITTED, durable at commit (synchronous_commit as the server says; off for sync:false batches,
// set within that statement): no transaction of ours is ever open between two round trips. Its guards are
// explicit: an ifAbsent op is a plain INSERT, so a key another node created first fails the statement
// (unique violation) and the batch lands nothing — the journal's per-machine sequence is checked this way;
// an ifUnchanged op is an UPDATE or DELETE matching the value's text, and svc_guard fails the statement
// when one matched nothing (compare-and-set: leases, idempotency keys running, invoice amounts).
// Serialization failures and deadlocks (40001, 40P01) run the statement again. No cache: another node
// may write any record at any time. Not here: locks between nodes (docs/scale-out.md).
import pg from 'pg';
import { ServiceError } from '../errors.ts';
import {
  checkOps, storeConflict, type Json, type Op, type Read, type StoredRecord, type Range, type Store,
  type StoreSnapshot, type StoreStats, type SublevelName,
} from './contract.ts';
import { hold, type Held } from './pg-held.ts';
import { migrate } from './pg-migrations.ts';
import { writeStatement, type WriteStatement } from './pg-write.ts';
import {
  ledgerBatch, ledgerConflicts, ledgerFlush, ledgerReads, ledgerRetries, observe, since,
} from '../metrics/metrics.ts';

/** Rows per query of a range scan (keyset pagination: a page never holds a cursor open). */
const PAGE = 500;
const MAX_ATTEMPTS = 8;
/** connections for snapshots (audit, ledger check, backup, long scans), apart from the main pool */
const SNAPSHOTS = 4;
const RETRYABLE = new Set(['40001', '40P01']);
const UNIQUE_VIOLATION = '23505';
/** raised by svc_guard (migration 2): an ifUnchanged op found another value than the one it compares */
const GUARD_FAILED = 'SV001';
/** lockSession()'s advisory locks: (this, hashtext(name)), apart from the migration lock's single bigint */
const SESSION_LOCKS = 0x73766331; // "svc1"

export const GET_SQL = 'SELECT value FROM svc_records WHERE sub = $1 AND key = $2';
// several records in one statement, each looked up by its key: a subquery per asked (sub, key), never a join,
// whose plan (cached with the statement) could be a hash join over the whole table if chosen while it was small
export const GET_MANY_SQL = `SELECT (SELECT r.value FROM svc_records r WHERE r.sub = w.sub AND r.key = w.key) AS value
  FROM unnest($1::text[], $2::bytea[]) WITH ORDINALITY AS w(sub, key, i) ORDER BY w.i`;

const utf8 = (s: string) => Buffer.from(s, 'utf8');
const pgCode = (e: unknown) => (e as { code?: unknown }).code;

/** The server refused a statement and the session goes on: not a connection exception (08…) nor its end (57P…). */
const refusedOnly = (e: unknown): boolean => e instanceof pg.DatabaseError && !/^(08|57P)/.test(String(e.code));

/**
 * The database could not be reached or went away under a statement: a connection error (no SQLSTATE), a
 * connection exception (08…) or an operator intervention (57P…: shut down, restarting). The caller gets
 * `service_unavailable` (never `internal`: nothing is wrong with the request or with svc); a write's message
 * says it may have landed, since a commit can succeed on a connection that breaks before its answer.
 */
export function unreachable(e: unknown, writing: boolean): unknown {
  if (refusedOnly(e) || e instanceof ServiceError) return e;
  const what = writing
    ? 'the ledger database went away under a write, which may or may not have landed: read the state, or '
      + 'retry with the same idempotency key or quote_id'
    : 'the ledger database cannot be reached; retry';
  return new ServiceError('service_unavailable', what, undefined, { cause: e });
}
/** pg-pool's error when no connection came free within connectionTimeoutMillis */
const POOL_WAIT_TIMEOUT = 'timeout exceeded when trying to connect';

/**
 * No connection to run a statement on: every one was in use for the whole wait (`busy`: the node is
 * saturated), or a new one could not be opened (`service_unavailable`). Either way nothing was sent, so
 * nothing landed: the caller may simply send the request again.
 */
export function notConnected(e: unknown): ServiceError {
  if (e instanceof ServiceError) return e;
  if (e instanceof Error && e.message === POOL_WAIT_TIMEOUT) {
    const msg = 'every ledger database connection of this node stayed in use; nothing was written: retry';
    return new ServiceError('busy', msg, undefined, { cause: e });
  }
  const msg = 'the ledger database cannot be reached; nothing was written: retry';
  return new ServiceError('service_unavailable', msg, undefined, { cause: e });
}

/**
 * Runs `work` on a connection of `pool` and gives it back: kept after a statement the server refused (a
 * conflict, a failed guard: the session is fine), closed after anything else (it may be broken). A
 * failure to get one is notConnected's; `work`'s own errors come through as they are.
 */
async function onConnection<R>(pool: pg.Pool, work: (c: pg.PoolClient) => Promise<R>): Promise<R> {
  const c = await pool.connect().catch((e: unknown) => { throw notConnected(e); });
  const held = hold(c);
  try {
    return await work(c);
  } catch (e) {
    if (!refusedOnly(e)) held.fail(e as Error);
    throw e;
  } finally {
    held.release();
  }
}
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BATCH = [ledgerBatch.at('false'), ledgerBatch.at('true')] as const;
const FLUSH = [ledgerFlush.at('false'), ledgerFlush.at('true')] as const;
const READ = ledgerReads.at();
const RETRIED = ledgerRetries.at();
const CREATED = ledgerConflicts.at('created');
const COMPARED = ledgerConflicts.at('compared');

/** A REPEATABLE READ, READ ONLY transaction on a connection of its own: every query in it sees one state. */
class PgSnapshot implements StoreSnapshot {
  readonly client: pg.PoolClient;
  readonly #held: Held;
  #closed = false;

  /** `client`: checked out for the snapshot's transaction, held until close() */
  constructor(client: pg.PoolClient) {
    this.client = client;
    this.#held = hold(client);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.client.query('COMMIT');
    } catch (e) {
      this.#held.fail(e as Error); // a broken connection is not put back in the pool
    }
    this.#held.release();
  }
}

export class PgStore implements Store {
  readonly stats: StoreStats = {
    reads: 0, cacheHits: 0, writes: 0, syncedFlushes: 0, unsyncedFlushes: 0, retries: 0, conflicts: 0, statements: 0,
  };
  readonly #pool: pg.Pool;
  /**
   * Snapshots hold a connection while their reader works, and a reader may read and write meanwhile
   * (a sweep reads each record a scan names): apart from the pool reads and writes use, so snapshots
   * can never take every connection that reader is waiting for.
   */
  readonly #snapshots: pg.Pool;
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #url: string;
  /** connections holding a lockSession() lock each */
  readonly #sessions: pg.Client[] = [];

  private constructor(pool: pg.Pool, snapshots: pg.Pool, url: string) {
    this.#pool = pool;
    this.#snapshots = snapshots;
    this.#url = url;
  }

  /**
   * Connects (pools of `poolSize` and of 4 for snapshots) and brings the schema to the newest migration.
   * `acquireTimeoutMs` (default 5 s): how long a statement waits for a connection, free or new.
   */
  static async open(url: string, opts: { poolSize?: number; acquireTimeoutMs?: number } = {}): Promise<PgStore> {
    // a database that does not answer a connect is unreachable after 5 s (pg's default waits for ever), and
    // TCP keepalives find a connection whose peer vanished (a cut link sends no reset) in about 10 s plus probes
    const connectionTimeoutMillis = opts.acquireTimeoutMs ?? 5000;
    const reach = { connectionTimeoutMillis, keepAlive: true, keepAliveInitialDelayMillis: 10_000 };
    const pool = new pg.Pool({ connectionString: url, max: opts.poolSize ?? 10, application_name: 'svcd', ...reach });
    const snapshots = new pg.Pool({
      connectionString: url, max: SNAPSHOTS, application_name: 'svcd snapshot', ...reach,
    });
    // an idle connection that dies is dropped by the pool; the next query opens another and fails if
    // the server is really gone, so there is nothing to do here but keep the process alive
    pool.on('error', () => {});
    snapshots.on('error', () => {});
    try {
      await migrate(pool);
    } catch (e) {
      await Promise.all([pool.end(), snapshots.end()]);
      throw e;
    }
    return new PgStore(pool, snapshots, url);
  }

  async get<T extends StoredRecord = Json>(name: SublevelName, key: string): Promise<T | undefined> {
    this.stats.reads++;
    const r = await this.#read<{ value: T }>(this.#pool, { name: 'svc_get', text: GET_SQL, values: [name, utf8(key)] });
    return r[0]?.value;
  }

  async getMany(reads: readonly Read[]): Promise<(Json | undefined)[]> {
    if (!reads.length) return [];
    this.stats.reads += reads.length;
    const values = [reads.map((r) => r.sub), reads.map((r) => utf8(r.key))];
    const rows = await this.#read<{ value: Json | null }>(this.#pool, {
      name: 'svc_get_many', text: GET_MANY_SQL, values,
    });
    return rows.map((r) => r.value ?? undefined);
  }

  /** One read statement (on a connection of the pool, or a snapshot's), counted and timed. */
  async #read<R extends pg.QueryResultRow>(q: pg.Pool | pg.ClientBase, query: pg.QueryConfig): Promise<R[]> {
    this.stats.statements!++;
    const t0 = performance.now();
    let r: pg.QueryResult<R>;
    try {
      r = q instanceof pg.Pool ? await onConnection(q, (c) => c.query<R>(query)) : await q.query<R>(query);
    } catch (e) {
      throw unreachable(e, false);
    }
    observe(READ, since(t0));
    return r.rows;
  }

  write(ops: readonly Op[], opts: { sync?: boolean } = {}): Promise<void> {
    if (!ops.length) return Promise.resolve();
    this.stats.writes++;
    const sync = opts.sync !== false;
    let statement: WriteStatement;
    try {
      checkOps(ops);
      statement = writeStatement(ops, { sync });
    } catch (e) {
      return Promise.reject(e);
    }
    const t0 = performance.now();
    const p = this.#writeRetrying(statement, sync).then(() => observe(BATCH[+sync]!, since(t0)));
    this.#inFlight.add(p);
    return p.finally(() => this.#inFlight.delete(p));
  }

  async #writeRetrying(statement: WriteStatement, sync: boolean): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const t0 = performance.now();
      try {
        this.stats.statements!++;
        await onConnection(this.#pool, (c) => c.query(statement));
        observe(FLUSH[+sync]!, since(t0));
        if (sync) this.stats.syncedFlushes++;
        else this.stats.unsyncedFlushes++;
        return;
      } catch (e) {
        const code = pgCode(e);
        if (code === UNIQUE_VIOLATION) {
          this.stats.conflicts!++;
          CREATED.v++;
          throw storeConflict('a record this batch creates exists already');
        }
        if (code === GUARD_FAILED) {
          this.stats.conflicts!++;
          COMPARED.v++;
          throw storeConflict('a record this batch compares changed');
        }
        if (!RETRYABLE.has(code as string) || attempt >= MAX_ATTEMPTS) throw unreachable(e, true);
        this.stats.retries!++;
        RETRIED.v++;
        // apart, so the writers that collided do not collide again in step
        await pause(Math.random() * 5 * attempt);
      }
    }
  }

  /**
   * A sublevel in key order, page by page. Without a snapshot a scan that fits one page is one statement
   * (one state); a longer one runs again from the start in a snapshot of its own, so it too reads one state.
   */
  async *entries<T extends StoredRecord = Json>(name: SublevelName, range: Range = {}): AsyncGenerator<[string, T]> {
    if (range.snapshot) {
      if (!(range.snapshot instanceof PgSnapshot)) throw new TypeError('not a snapshot of this PostgreSQL store');
      yield* this.#scan<T>(range.snapshot.client, name, range);
      return;
    }
    const want = range.limit ?? Infinity;
    const first = await this.#page<T>(this.#pool, name, range, undefined, Math.min(want, PAGE + 1));
    if (first.length <= PAGE) {
      yield* first;
      return;
    }
    const snap = await this.snapshot() as PgSnapshot;
    try {
      yield* this.#scan<T>(snap.client, name, range);
    } finally {
      await snap.close();
    }
  }

  /** The keys of entries(): the values come along (one table; a count is cheap next to a page's round trip). */
  async *keys(name: SublevelName, range: Range = {}): AsyncGenerator<string> {
    for await (const [k] of this.entries(name, range)) yield k;
  }

  async *#scan<T extends StoredRecord>(
    q: pg.ClientBase, name: SublevelName, range: Range,
  ): AsyncGenerator<[string, T]> {
    let left = range.limit ?? Infinity;
    let after: Buffer | undefined;
    while (left > 0) {
      const size = Math.min(left, PAGE);
      const rows = await this.#pageRaw<T>(q, name, range, after, size);
      for (const r of rows) yield [r.key.toString('utf8'), r.value];
      if (rows.length < size) return;
      left -= size;
      after = rows.at(-1)!.key;
    }
  }

  async #page<T extends StoredRecord>(
    q: pg.Pool | pg.ClientBase, name: SublevelName, range: Range, after: Buffer | undefined, limit: number,
  ): Promise<[string, T][]> {
    const rows = await this.#pageRaw<T>(q, name, range, after, limit);
    return rows.map((r) => [r.key.toString('utf8'), r.value]);
  }

  /** One page: the range's bounds, and past `after` (the last key of the previous page). */
  #pageRaw<T extends StoredRecord>(
    q: pg.Pool | pg.ClientBase, name: SublevelName, range: Range, after: Buffer | undefined, limit: number,
  ): Promise<{ key: Buffer; value: T }[]> {
    const where = ['sub = $1'];
    const values: unknown[] = [name];
    const bound = (op: string, v: string | Buffer | undefined) => {
      if (v === undefined) return;
      values.push(typeof v === 'string' ? utf8(v) : v);
      where.push(`key ${op} $${values.length}`);
    };
    bound('>', range.gt);
    bound('>=', range.gte);
    bound('<', range.lt);
    bound('<=', range.lte);
    bound('>', after);
    values.push(limit);
    const text = `SELECT key, value FROM svc_records WHERE ${where.join(' AND ')} ORDER BY key LIMIT $${values.length}`;
    return this.#read<{ key: Buffer; value: T }>(q, { text, values });
  }

  async snapshot(): Promise<StoreSnapshot> {
    const c = await this.#snapshots.connect().catch((e: unknown) => { throw notConnected(e); });
    const snap = new PgSnapshot(c);
    try {
      // the snapshot is taken at the first statement of the transaction, not at BEGIN: take it now
      await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; SELECT 1');
    } catch (e) {
      await snap.close();
      throw unreachable(e, false);
    }
    return snap;
  }

  /** Nodes share the database: each node's own records are named by its node id. */
  nodeScope(nodeId: string): string {
    return nodeId;
  }

  /**
   * A session advisory lock on a connection of its own, outside the pools, held until close(): the server
   * releases it when that connection ends, so a process killed outright does not keep it. Lost if that
   * connection breaks while the store is open (the guards in the data still hold then).
   */
  async lockSession(name: string): Promise<boolean> {
    const c = new pg.Client({ connectionString: this.#url, application_name: 'svcd session lock' });
    c.on('error', () => {}); // a broken lock connection: the lock is gone, nothing else to do
    await c.connect();
    try {
      const r = await c.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock($1::integer, hashtext($2)) AS ok', [SESSION_LOCKS, name]);
      if (r.rows[0]?.ok) {
        this.#sessions.push(c);
        return true;
      }
    } catch (e) {
      await c.end().catch(() => {});
      throw e;
    }
    await c.end();
    return false;
  }

  /** One `SELECT 1` on the pool the ledger's reads and writes use. */
  async ping(): Promise<void> {
    await onConnection(this.#pool, (c) => c.query('SELECT 1'));
  }

  async close(): Promise<void> {
    while (this.#inFlight.size) await Promise.allSettled([...this.#inFlight]);
    await Promise.all([this.#pool.end(), this.#snapshots.end(), ...this.#sessions.map((c) => c.end())]);
  }
}
