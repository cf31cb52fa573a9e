// The LevelDB store (the default): one database in the data dir with one sublevel per record kind, and
// the one way to write — an atomic batch. Holds no business rules. Implements src/store/contract.ts.
//
// Durability (DESIGN.md §11): everything this service acknowledges must survive kill -9, so a write
// is synced unless its caller says the records may be lost (an issued quote's idempotency record).
// Group commit: batches that arrive while a synced flush is on the disk wait and then go down
// together as one synced LevelDB batch; each caller resolves only once its own ops are durable. A
// failed group landed nothing; its callers are then written one by one, so only a caller whose own
// batch fails is refused (a full disk refuses them all). Each caller's ops stay in
// one batch, so each stays atomic; callers serialise among themselves with locks (per machine, per
// rail), so one flush never holds two writes that depend on each other. Op's guards (ifAbsent,
// ifUnchanged) are checked as on PostgreSQL, in the order batches go to LevelDB: against what batches
// sent and not yet landed wrote, else the cache, else one synchronous read (about 1 µs); a batch whose
// guard fails is refused alone as a store conflict and the rest of its group goes down. A guarded op
// costs that lookup; every op costs a map entry while its batch is on its way.
//
// Records of the process-lifetime sublevels (contract.ts: the idempotency keys being run) live in this
// process's memory only, read, written and guarded like the others: a batch of them alone touches no
// disk, and in a batch with others they land when it lands.
//
// A bounded read cache for the hot records (machines, accounts, quotes) is written through: a
// flush updates it when the batch is durable, before any of its callers resume, so a read never
// sees a value older than the last acknowledged write. A read that missed and went to the disk
// fills the cache only if no write touched the key meanwhile (the placeholder it left is gone).
// Cached values are frozen: a caller that mutated one would corrupt every later read.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';
import { ledgerBatch, ledgerConflicts, ledgerFlush, ledgerGroup, observe, since } from '../metrics/metrics.ts';
import { ServiceError } from '../errors.ts';
import { Lru } from './lru.ts';
import {
  checkOps, lastOpPerKey, PROCESS_LIFETIME, storeConflict, SUBLEVELS, type Json, type Op, type StoredRecord, type Range,
  type Read, type Store, type StoreSnapshot, type StoreStats, type SublevelName,
} from './contract.ts';

export type LevelSnapshot = ReturnType<Level<string, Json>['snapshot']>;
type Sub = ReturnType<Level<string, Json>['sublevel']> & { get(key: string): Promise<Json | undefined> };

/** The records read on every authenticated request and every money step. */
const CACHED: ReadonlySet<SublevelName> = new Set(['machines', 'accounts', 'quotes']);
const DEFAULT_CACHE_ENTRIES = 50_000;
/**
 * LevelDB's memtable (and its log) before it is written out as a level-0 table: 32 MB, where the default
 * is 4 MB. Ledger keys (receipt ids, machines' journals) land all over the key space, so every small
 * level-0 table overlaps all of level 1 and each compaction rewrote it: over 120,000 paid flows LevelDB's
 * background thread took 251 µs of CPU per flow with 4 MB, 62 µs with 32 MB, 45 µs with 64 MB
 * (docs/decisions.md "LevelDB's write buffer"). It costs up to two buffers of memory once the ledger is
 * that busy, and a restart after a crash replays at most one buffer of log.
 */
const WRITE_BUFFER_BYTES = 32 * 1024 * 1024;

/** `t0`: when write() was called (performance.now()), for svc_ledger_batch_seconds. */
interface Pending { ops: readonly Op[]; resolve: () => void; reject: (e: unknown) => void; t0: number }
// metric cells, found once (src/metrics): the hot path only adds to them
const BATCH = [ledgerBatch.at('false'), ledgerBatch.at('true')] as const;
const FLUSH = [ledgerFlush.at('false'), ledgerFlush.at('true')] as const;
const GROUP = ledgerGroup.at();
const CREATED = ledgerConflicts.at('created');
const COMPARED = ledgerConflicts.at('compared');
/**
 * A cache slot: a value (undefined = known absent); the JSON text a flush wrote, parsed when first read
 * (many written records, an executed quote for one, are not read again before they are overwritten or
 * pushed out); or a read still on its way from the disk.
 */
type Slot = { value: Json | undefined } | { text: string } | { loading: true };

const UTF8 = { keyEncoding: 'utf8', valueEncoding: 'utf8' } as never;
/** A record's key in the root database: abstract-level's sublevel layout, `!name!key`. */
const prefixed = (name: SublevelName, key: string) => `!${name}!${key}`;
const MEMORY_PREFIXES = [...PROCESS_LIFETIME].map((n) => prefixed(n, ''));
const inMemory = (key: string) => MEMORY_PREFIXES.some((p) => key.startsWith(p));
const rawOp = (o: Op): RawOp => {
  const key = prefixed(o.sub, o.key);
  return o.type === 'put' ? { type: 'put', key, value: JSON.stringify(o.value) } : { type: 'del', key };
};

/** A batch op as classic-level's native batch takes it: utf8 strings, the key already prefixed. */
interface RawOp { type: 'put' | 'del'; key: string; value?: string }

/** What one key of a batch must find before the batch: nothing (a create), or this text. */
interface Guard { sub: SublevelName; key: string; absent: boolean; was?: string; what: string }

/**
 * The guards of one batch, as PostgreSQL checks them (pg-store.ts writeParams): per key, a create
 * anywhere in the batch makes it a create whatever follows; else the last op's ifUnchanged compares.
 */
function guardsOf(ops: readonly Op[]): Guard[] {
  if (!ops.some((o) => o.ifUnchanged || (o.type === 'put' && o.ifAbsent))) return [];
  const guards: Guard[] = [];
  for (const { op: { sub, key, ifUnchanged }, created } of lastOpPerKey(ops)) {
    const what = `${sub} ${key}`;
    if (created) guards.push({ sub, key, absent: true, what: `${what} exists` });
    else if (ifUnchanged) {
      guards.push({ sub, key, absent: false, was: JSON.stringify(ifUnchanged), what: `${what} changed` });
    }
  }
  return guards;
}
/**
 * abstract-level's method for implementors (classic-level's is the native batch): the public batch()
 * checks and re-encodes each op into a copy first, which cost 3.5x the native call on this box (6 ops:
 * 110 µs of the event loop against 32 µs). The ops here need none of it (no hooks, no write events, no
 * sublevel prefixing, strings in utf8), so the flush calls it directly while the database is open.
 */
interface Implementor { _batch(ops: RawOp[], options: { sync: boolean }): Promise<void> }

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

export class LevelStore implements Store {
  readonly db: Level<string, Json>;
  readonly #subs: Map<SublevelName, Sub>;
  readonly #cache: Lru<string, Slot>;
  #queue: Pending[] = [];
  #flushing = false;
  /** Keys written by batches sent to LevelDB and not landed yet: their text (undefined: deleted), and by whom. */
  readonly #inFlight = new Map<string, { text: string | undefined; by: object }>();
  /** The process-lifetime sublevels' records: prefixed key → JSON text. */
  readonly #memory = new Map<string, string>();
  /** The disk refused a write (see #diskFailed): no write goes down after it until the store is opened again. */
  #failed: ServiceError | null = null;
  readonly stats: StoreStats = {
    reads: 0, cacheHits: 0, writes: 0, syncedFlushes: 0, unsyncedFlushes: 0, conflicts: 0,
  };

  private constructor(db: Level<string, Json>, cacheEntries: number) {
    this.db = db;
    this.#cache = new Lru(cacheEntries);
    const sub = (n: SublevelName) => db.sublevel<string, Json>(n, { valueEncoding: 'json' }) as unknown as Sub;
    this.#subs = new Map(SUBLEVELS.map((n) => [n, sub(n)]));
  }

  static async open(dataDir: string, opts: { cacheEntries?: number } = {}): Promise<LevelStore> {
    const dir = join(dataDir, 'ledger');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const db = new Level<string, Json>(dir, { valueEncoding: 'json', writeBufferSize: WRITE_BUFFER_BYTES });
    try {
      await db.open();
    } catch (e) {
      // LevelDB's LOCK file: one process per ledger
      if ((e as { cause?: { code?: string } }).cause?.code !== 'LEVEL_LOCKED') throw e;
      const msg = `the ledger in ${dir} is held by another process: is svcd already running on this data dir?`;
      throw new Error(msg, { cause: e });
    }
    return new LevelStore(db, opts.cacheEntries ?? DEFAULT_CACHE_ENTRIES);
  }

  sub(name: SublevelName): Sub {
    return this.#subs.get(name)!;
  }

  /** One record, or undefined. Values of cached kinds are frozen: copy before changing. */
  async get<T extends StoredRecord = Json>(name: SublevelName, key: string): Promise<T | undefined> {
    if (PROCESS_LIFETIME.has(name)) {
      const text = this.#memory.get(prefixed(name, key));
      return text === undefined ? undefined : JSON.parse(text) as T;
    }
    if (!CACHED.has(name)) {
      this.stats.reads++;
      return this.#read<T>(name, key);
    }
    const ck = `${name}\0${key}`;
    const slot = this.#cache.get(ck); // (now the most recently used)
    if (slot && !('loading' in slot)) {
      this.stats.cacheHits++;
      if ('value' in slot) return slot.value as T | undefined;
      const value = deepFreeze(JSON.parse(slot.text) as Json);
      this.#cache.set(ck, { value });
      return value as T;
    }
    const mine: Slot = { loading: true };
    if (!slot) this.#cache.set(ck, mine);
    this.stats.reads++;
    const value = deepFreeze(await this.#read<Json>(name, key));
    // a write that landed meanwhile replaced the placeholder: its value is newer than this read. A
    // miss is not kept: anyone can name ids that do not exist, and must not push real records out
    if (this.#cache.peek(ck) === mine) {
      if (value === undefined) this.#cache.delete(ck);
      else this.#cache.set(ck, { value });
    }
    return value as T | undefined;
  }

  /** Each record as get() reads it (its reads are synchronous or cached: one at a time costs nothing more). */
  getMany(reads: readonly Read[]): Promise<(Json | undefined)[]> {
    return Promise.all(reads.map((r) => this.get(r.sub, r.key)));
  }

  /**
   * One record straight from the root database under its sublevel's key prefix (`!name!key`, the
   * layout abstract-level's sublevels use, so both read and write the same bytes): no sublevel or
   * encoding layer per call, one JSON.parse.
   */
  async #read<T extends StoredRecord>(name: SublevelName, key: string): Promise<T | undefined> {
    const k = prefixed(name, key);
    // open, the synchronous native read: LevelDB answers from its memtable, block cache, bloom filters
    // or the OS page cache in about 1 µs, where the async get spends 10–13 µs of this thread queueing a
    // worker and resolving its promise (docs/decisions.md, "Point reads are synchronous")
    const text = this.db.status === 'open' ? this.#textSync(k) : await this.db.get(k, UTF8) as string | undefined;
    return text === undefined ? undefined : JSON.parse(text) as T;
  }

  /** A record's JSON text straight from the open database (utf8 in, utf8 out), or undefined. */
  #textSync(k: string): string | undefined {
    return this.db.getSync(k, UTF8) as unknown as string | undefined;
  }

  /**
   * All ops in one atomic write: either every record lands or none does. Synced (durable before
   * it resolves) unless `sync: false`, for records whose loss in a crash is harmless.
   */
  write(ops: readonly Op[], opts: { sync?: boolean } = {}): Promise<void> {
    if (!ops.length) return Promise.resolve();
    try {
      checkOps(ops);
    } catch (e) {
      return Promise.reject(e);
    }
    if (ops.every((o) => PROCESS_LIFETIME.has(o.sub))) return this.#writeMemory(ops);
    this.stats.writes++;
    const t0 = performance.now();
    if (opts.sync === false) return this.#flush([{ ops, resolve: () => {}, reject: () => {}, t0 }], false);
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ ops, resolve, reject, t0 });
      if (!this.#flushing) void this.#drain();
    });
  }

  /** Flushes the queue until it is empty: whatever queued during one flush goes down in the next. */
  async #drain(): Promise<void> {
    this.#flushing = true;
    try {
      while (this.#queue.length) {
        const group = this.#queue;
        this.#queue = [];
        try {
          await this.#flush(group, true);
        } catch {
          // nothing of the group landed: one caller's bad batch must not fail the others with it,
          // so each goes down alone, and only what fails alone is refused
          if (group.length > 1) {
            for (const p of group) await this.#flush([p], true).catch(() => { /* p was rejected */ });
          }
        }
      }
    } finally {
      this.#flushing = false;
    }
  }

  async #flush(group: Pending[], sync: boolean): Promise<void> {
    if (this.#failed) { // the disk refused a write: nothing goes down after it (#diskFailed)
      for (const p of group) p.reject(this.#failed);
      throw this.#failed;
    }
    // encoded once, here: the sublevel prefix and JSON text of each record go to the root database as
    // utf8, so abstract-level does no per-op sublevel or json encoding; the cache takes the same text
    let encoded: { p: Pending; all: RawOp[]; guards: Guard[] }[];
    try {
      encoded = group.map((p) => ({ p, all: p.ops.map(rawOp), guards: guardsOf(p.ops) }));
    } catch (e) {
      // a record JSON cannot encode fails its batch here as the disk would: nothing of the group lands
      if (group.length === 1) group[0]!.reject(e);
      throw e;
    }
    // in order: a batch's guards see what the batches before it in the group write
    const token = {};
    const landing = encoded.filter((b) => {
      let failed: Guard | undefined;
      try {
        failed = b.guards.find((g) => this.#fails(g));
      } catch (e) {
        // a guard that cannot be read (the store is closing) refuses its batch as the write itself would
        b.p.reject(e);
        if (group.length === 1) throw e;
        return false;
      }
      if (failed) return this.#refuse(b.p, failed, group.length === 1);
      for (const o of b.all) this.#inFlight.set(o.key, { text: o.value, by: token });
      return true;
    });
    if (!landing.length) return;
    const all = landing.flatMap((b) => b.all);
    const batch = all.filter((o) => !inMemory(o.key));
    const t0 = performance.now();
    try {
      const raw = this.db as unknown as Partial<Implementor>;
      if (this.db.status === 'open' && typeof raw._batch === 'function') await raw._batch(batch, { sync });
      else await this.db.batch(batch as never, { sync, keyEncoding: 'utf8', valueEncoding: 'utf8' } as never);
    } catch (e) {
      const failed = this.#diskFailed(e);
      if (group.length === 1) group[0]!.reject(failed);
      throw failed;
    } finally {
      for (const o of all) if (this.#inFlight.get(o.key)?.by === token) this.#inFlight.delete(o.key);
    }
    observe(FLUSH[+sync]!, since(t0));
    if (sync) {
      this.stats.syncedFlushes++;
      observe(GROUP, landing.length);
    } else this.stats.unsyncedFlushes++;
    for (const b of landing) b.p.ops.forEach((o, i) => this.#written(o, b.all[i]!.value));
    const done = BATCH[+sync]!;
    for (const { p } of landing) {
      observe(done, since(p.t0));
      p.resolve();
    }
  }

  /**
   * LevelDB refused a batch that was sent (a full disk, an I/O error): the group may or may not be on disk
   * (a failed sync leaves it there or not), and LevelDB's log may now end in a torn record. LevelDB goes on
   * appending after one, and its recovery at the next open drops everything after it: writes acknowledged
   * from here on would be lost at the next start. So none goes down: every write is refused until svcd is
   * started again (the open's recovery then drops the torn tail, which no caller was told had landed), and
   * ping() says why, so HEALTH turns the node away from its load balancer. Reads go on.
   */
  #diskFailed(e: unknown): unknown {
    if (this.db.status !== 'open') return e; // closing: the close's own error, not the disk's
    // the callers see that it failed; the cause (a path in the data dir) goes to the log and HEALTH only
    this.#failed ??= new ServiceError('service_unavailable', 'this node\'s ledger disk refused a write: it takes '
      + 'no writes until svcd is started again, once the disk is fixed', undefined, { cause: e });
    const msg = 'this node\'s ledger disk refused this write: it may or may not have landed, and the node takes no '
      + 'writes until it is started again (read the state, or retry with the same idempotency key or quote_id later)';
    return new ServiceError('service_unavailable', msg, undefined, { cause: e });
  }

  /**
   * Refuses a batch whose guard failed: a store conflict, counted; thrown too when it was the flush's only
   * batch (an unsynced write's caller awaits the flush itself). Returns false (it does not land).
   */
  #refuse(p: Pending, failed: Guard, alone: boolean): false {
    const e = this.#conflict(failed);
    p.reject(e);
    if (alone) throw e;
    return false;
  }

  /** A failed guard's store conflict, counted. */
  #conflict(failed: Guard): Error {
    this.stats.conflicts = (this.stats.conflicts ?? 0) + 1;
    (failed.absent ? CREATED : COMPARED).v++;
    return storeConflict(failed.what);
  }

  #fails(g: Guard): boolean {
    const text = this.#currentText(g.sub, g.key);
    return g.absent ? text !== undefined : text !== g.was;
  }

  /** A key's text as the batches sent so far leave it: in flight, else cached, else read from LevelDB. */
  #currentText(sub: SublevelName, key: string): string | undefined {
    const k = prefixed(sub, key);
    const pending = this.#inFlight.get(k);
    if (pending) return pending.text;
    if (PROCESS_LIFETIME.has(sub)) return this.#memory.get(k);
    const slot = CACHED.has(sub) ? this.#cache.peek(`${sub}\0${key}`) : undefined;
    if (slot && 'text' in slot) return slot.text;
    if (slot && 'value' in slot) return slot.value === undefined ? undefined : JSON.stringify(slot.value);
    return this.#textSync(k);
  }

  /**
   * Write-through: the cache holds what is now durable — the text written, from which a read parses a
   * frozen copy (the caller keeps its own object, free to change), so a hit and a miss read the same.
   */
  #written(o: Op, text: string | undefined): void {
    if (PROCESS_LIFETIME.has(o.sub)) {
      const k = prefixed(o.sub, o.key);
      if (text === undefined) this.#memory.delete(k);
      else this.#memory.set(k, text);
      return;
    }
    if (!CACHED.has(o.sub)) return;
    this.#cache.set(`${o.sub}\0${o.key}`, text === undefined ? { value: undefined } : { text });
  }

  /**
   * Iterates a sublevel in key order (optionally a range), from `range.snapshot` when given: reads of
   * several sublevels from one snapshot see one state, whatever is written meanwhile.
   */
  async *entries<T extends StoredRecord = Json>(name: SublevelName, range: Range = {}): AsyncGenerator<[string, T]> {
    if (PROCESS_LIFETIME.has(name)) {
      for (const [k, text] of this.#memoryRange(name, range)) yield [k, JSON.parse(text) as T];
      return;
    }
    const it = this.sub(name).iterator(range as Omit<Range, 'snapshot'> & { snapshot?: LevelSnapshot });
    for await (const [k, v] of it) yield [k, v as T];
  }

  async *keys(name: SublevelName, range: Range = {}): AsyncGenerator<string> {
    if (PROCESS_LIFETIME.has(name)) {
      for (const [k] of this.#memoryRange(name, range)) yield k;
      return;
    }
    yield* this.sub(name).keys(range as Omit<Range, 'snapshot'> & { snapshot?: LevelSnapshot });
  }

  /** A batch of process-lifetime records alone: guarded, then applied in memory at once. */
  #writeMemory(ops: readonly Op[]): Promise<void> {
    try {
      const failed = guardsOf(ops).find((g) => this.#fails(g));
      if (failed) throw this.#conflict(failed);
      for (const o of ops) this.#written(o, o.type === 'put' ? JSON.stringify(o.value) : undefined);
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** A process-lifetime sublevel's records within `range`, in key order (byte-wise UTF-8, as LevelDB's). */
  #memoryRange(name: SublevelName, range: Range): [string, string][] {
    const prefix = prefixed(name, '');
    const utf8 = (s: string) => Buffer.from(s, 'utf8');
    const cmp = (a: string, b: string) => Buffer.compare(utf8(a), utf8(b));
    const inRange = (k: string) => (range.gt === undefined || cmp(k, range.gt) > 0)
      && (range.gte === undefined || cmp(k, range.gte) >= 0) && (range.lt === undefined || cmp(k, range.lt) < 0)
      && (range.lte === undefined || cmp(k, range.lte) <= 0);
    const rows = [...this.#memory].filter(([k]) => k.startsWith(prefix))
      .map(([k, text]): [string, string] => [k.slice(prefix.length), text])
      .filter(([k]) => inRange(k)).sort(([a], [b]) => cmp(a, b));
    return range.limit === undefined ? rows : rows.slice(0, range.limit);
  }

  /** LevelDB's implicit snapshot, taken now (synchronously): iterators given it read that state. */
  snapshot(): Promise<StoreSnapshot> {
    return Promise.resolve(this.db.snapshot());
  }

  /** One node owns a data dir: its records need no node part. */
  nodeScope(_nodeId: string): string {
    return '';
  }

  /** One process owns the database (LevelDB's LOCK file): nobody else to lock out. */
  lockSession(_name: string): Promise<boolean> {
    return Promise.resolve(true);
  }

  /** LevelDB lives in this process: it answers while it is open. */
  async ping(): Promise<void> {
    if (this.db.status !== 'open') throw new Error(`the LevelDB ledger is ${this.db.status}`);
    if (this.#failed) {
      const why = this.#failed.cause instanceof Error ? this.#failed.cause.message : String(this.#failed.cause);
      throw new Error(`the ledger disk refused a write (${why}): no writes until svcd is started again`);
    }
  }

  async close(): Promise<void> {
    while (this.#flushing || this.#queue.length) await new Promise((r) => setImmediate(r));
    await this.db.close();
  }
}
