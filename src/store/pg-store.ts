// The PostgreSQL store (SVC_STORE=postgres://…): the store contract on one table shared by every node
// (schema: ./pg-migrations.ts). Each write() is one SQL statement, so one transaction at READ COMMITTED,
// durable at commit (synchronous_commit as the server says; off for sync:false batches). Its guards are
// explicit: an ifAbsent op is a plain INSERT, so a key another node created first fails the statement
// (unique violation) and the batch lands nothing — the journal's per-machine sequence is checked this way;
// an ifUnchanged op is an UPDATE or DELETE matching the value's text, and svc_guard fails the statement
// when one matched nothing (compare-and-set: leases, idempotency keys running, invoice amounts).
// Serialization failures and deadlocks (40001, 40P01) run the statement again. No cache: another node
// may write any record at any time. Not here: locks between nodes (docs/scale-out.md).
import pg from 'pg';
import {
  checkOps, lastOpPerKey, storeConflict, type Json, type Op, type StoredRecord, type Range, type Store,
  type StoreSnapshot, type StoreStats, type SublevelName,
} from './contract.ts';
import { migrate } from './pg-migrations.ts';

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

// Later ops win, so each key appears once: the three parts of the statement never touch one row twice.
// Upserts go in key order, so two batches lock their common rows in one order (no deadlock between them).
// The three parts every batch has: deletes, creates (a conflict fails the statement), upserts.
const WRITE_PARTS = `
  WITH gone AS (
    DELETE FROM svc_records r USING unnest($1::text[], $2::bytea[]) AS d(sub, key)
    WHERE r.sub = d.sub AND r.key = d.key
  ), made AS (
    INSERT INTO svc_records (sub, key, value)
    SELECT sub, key, value FROM unnest($3::text[], $4::bytea[], $5::json[]) AS c(sub, key, value)
    ORDER BY sub, key
  ), kept AS (
    INSERT INTO svc_records (sub, key, value)
    SELECT sub, key, value FROM unnest($6::text[], $7::bytea[], $8::json[]) AS p(sub, key, value)
    ORDER BY sub, key
    ON CONFLICT (sub, key) DO UPDATE SET value = EXCLUDED.value
  )`;
const WRITE_SQL = `${WRITE_PARTS} SELECT 1`;
// A batch with ifUnchanged ops: the same three parts, and its compare-and-set updates and compare-and-delete
// deletes, each matching a row only while it holds the text compared (json keeps the text as written);
// svc_guard undoes the statement when any of them matched nothing. Batches without such ops never use it.
const GUARDED_WRITE_SQL = `${WRITE_PARTS}, swapped AS (
    UPDATE svc_records r SET value = s.value
    FROM unnest($9::text[], $10::bytea[], $11::json[], $12::text[]) AS s(sub, key, value, was)
    WHERE r.sub = s.sub AND r.key = s.key AND r.value::text = s.was
    RETURNING 1
  ), dropped AS (
    DELETE FROM svc_records r USING unnest($13::text[], $14::bytea[], $15::text[]) AS d(sub, key, was)
    WHERE r.sub = d.sub AND r.key = d.key AND r.value::text = d.was
    RETURNING 1
  ) SELECT svc_guard((SELECT count(*) FROM swapped) + (SELECT count(*) FROM dropped), $16)`;
const GET_SQL = 'SELECT value FROM svc_records WHERE sub = $1 AND key = $2';

interface Statement { name: string; text: string }
const utf8 = (s: string) => Buffer.from(s, 'utf8');
const pgCode = (e: unknown) => (e as { code?: unknown }).code;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A REPEATABLE READ, READ ONLY transaction on a connection of its own: every query in it sees one state. */
class PgSnapshot implements StoreSnapshot {
  readonly client: pg.PoolClient;
  #closed = false;

  constructor(client: pg.PoolClient) {
    this.client = client;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.client.query('COMMIT');
      this.client.release();
    } catch (e) {
      this.client.release(e as Error); // a broken connection is not put back in the pool
    }
  }
}

/**
 * The statement's parameters for one batch (with `guarded`, the guarded statement's); throws (landing
 * nothing) on a value JSON cannot encode.
 */
function writeParams(ops: readonly Op[]): { values: unknown[]; guarded: boolean } {
  const gone: [string[], Buffer[]] = [[], []];
  const made: [string[], Buffer[], string[]] = [[], [], []];
  const kept: [string[], Buffer[], string[]] = [[], [], []];
  const swapped: [string[], Buffer[], string[], string[]] = [[], [], [], []];
  const dropped: [string[], Buffer[], string[]] = [[], [], []];
  for (const { op: o, created } of lastOpPerKey(ops)) {
    if (o.type === 'del') {
      if (o.ifUnchanged) {
        dropped[0].push(o.sub); dropped[1].push(utf8(o.key)); dropped[2].push(JSON.stringify(o.ifUnchanged));
      } else {
        gone[0].push(o.sub); gone[1].push(utf8(o.key));
      }
      continue;
    }
    if (!created && o.ifUnchanged) {
      swapped[0].push(o.sub); swapped[1].push(utf8(o.key)); swapped[2].push(JSON.stringify(o.value));
      swapped[3].push(JSON.stringify(o.ifUnchanged));
      continue;
    }
    const to = created ? made : kept; // a create then a put of one key: still a create
    to[0].push(o.sub); to[1].push(utf8(o.key)); to[2].push(JSON.stringify(o.value));
  }
  const wanted = swapped[0].length + dropped[0].length;
  if (!wanted) return { values: [...gone, ...made, ...kept], guarded: false };
  return { values: [...gone, ...made, ...kept, ...swapped, ...dropped, wanted], guarded: true };
}

export class PgStore implements Store {
  readonly stats: StoreStats = {
    reads: 0, cacheHits: 0, writes: 0, syncedFlushes: 0, unsyncedFlushes: 0, retries: 0, conflicts: 0,
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

  /** Connects (pools of `poolSize` and of 4 for snapshots) and brings the schema to the newest migration. */
  static async open(url: string, opts: { poolSize?: number } = {}): Promise<PgStore> {
    const pool = new pg.Pool({ connectionString: url, max: opts.poolSize ?? 10, application_name: 'svcd' });
    const snapshots = new pg.Pool({ connectionString: url, max: SNAPSHOTS, application_name: 'svcd snapshot' });
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
    const r = await this.#pool.query<{ value: T }>({ name: 'svc_get', text: GET_SQL, values: [name, utf8(key)] });
    return r.rows[0]?.value;
  }

  write(ops: readonly Op[], opts: { sync?: boolean } = {}): Promise<void> {
    if (!ops.length) return Promise.resolve();
    this.stats.writes++;
    let params: { values: unknown[]; guarded: boolean };
    try {
      checkOps(ops);
      params = writeParams(ops);
    } catch (e) {
      return Promise.reject(e);
    }
    const sync = opts.sync !== false;
    const statement = params.guarded
      ? { name: 'svc_write_guarded', text: GUARDED_WRITE_SQL }
      : { name: 'svc_write', text: WRITE_SQL };
    const p = this.#writeRetrying(statement, params.values, sync);
    this.#inFlight.add(p);
    return p.finally(() => this.#inFlight.delete(p));
  }

  async #writeRetrying(statement: Statement, values: unknown[], sync: boolean): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        if (sync) await this.#pool.query({ ...statement, values });
        else await this.#unsynced(statement, values);
        if (sync) this.stats.syncedFlushes++;
        else this.stats.unsyncedFlushes++;
        return;
      } catch (e) {
        const code = pgCode(e);
        if (code === UNIQUE_VIOLATION) {
          this.stats.conflicts!++;
          throw storeConflict('a record this batch creates exists already');
        }
        if (code === GUARD_FAILED) {
          this.stats.conflicts!++;
          throw storeConflict('a record this batch compares changed');
        }
        if (!RETRYABLE.has(code as string) || attempt >= MAX_ATTEMPTS) throw e;
        this.stats.retries!++;
        // apart, so the writers that collided do not collide again in step
        await pause(Math.random() * 5 * attempt);
      }
    }
  }

  /** sync:false: the same statement in a transaction that does not wait for its WAL flush. */
  async #unsynced(statement: Statement, values: unknown[]): Promise<void> {
    const c = await this.#pool.connect();
    let broken: Error | undefined;
    try {
      await c.query('BEGIN; SET LOCAL synchronous_commit TO off');
      try {
        await c.query({ ...statement, values });
        await c.query('COMMIT');
      } catch (e) {
        await c.query('ROLLBACK').catch((r: Error) => { broken = r; });
        throw e;
      }
    } catch (e) {
      // the server refused (a conflict, a deadlock): the connection is fine; anything else closes it
      if (!(e instanceof pg.DatabaseError)) broken ??= e as Error;
      throw e;
    } finally {
      c.release(broken);
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
    return q.query<{ key: Buffer; value: T }>(text, values).then((r) => r.rows);
  }

  async snapshot(): Promise<StoreSnapshot> {
    const c = await this.#snapshots.connect();
    try {
      // the snapshot is taken at the first statement of the transaction, not at BEGIN: take it now
      await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; SELECT 1');
    } catch (e) {
      c.release(e as Error);
      throw e;
    }
    return new PgSnapshot(c);
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
    await this.#pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    while (this.#inFlight.size) await Promise.allSettled([...this.#inFlight]);
    await Promise.all([this.#pool.end(), this.#snapshots.end(), ...this.#sessions.map((c) => c.end())]);
  }
}
