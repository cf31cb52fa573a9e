// The store contract: what the core needs from a ledger database, whatever the engine (LevelDB in one
// process, PostgreSQL shared by several). Records are JSON objects under string keys in named sublevels;
// keys order byte-wise (UTF-8), as the key codec relies on for range scans; the one way to write is an
// atomic batch. test/store/contract-suite.ts is the same suite for every implementation.
// Not here: business rules, locking between callers (the core serialises with its own locks).
import { ServiceError } from '../errors.ts';

export type Json = Record<string, unknown>;
/** A record as a caller types it: any object of JSON values (a typed record interface, or Json). */
export type StoredRecord = object;

export const SUBLEVELS = [
  'meta', 'machines', 'accounts', 'journal', 'invoices', 'invoice_amounts', 'quotes', 'quote_expiry',
  'receipts', 'executions', 'pulses', 'seeds', 'idempotency', 'idempotency_expiry', 'tlog_nodes', 'tlog_entries',
  // chain deposits (src/core/deposits.ts): every transfer seen, the unmatched queue, each watcher's cursor
  'deposits', 'unmatched_deposits', 'watcher_cursors',
  // several nodes on one shared store (docs/scale-out.md): leases (one holder of a duty at a time),
  // idempotency keys still running, and each node's published signing keys
  'leases', 'idempotency_running', 'node_keys',
  // each payment reference an invoice was settled with, and that invoice: one payment credits one invoice
  'settlement_refs',
  // each recorded chain transfer by (rail, transaction, index): a bare transaction id names its only transfer
  'deposit_txs',
  // each client address's open invoices, across machine_ids (one caller cannot hold a rail's amounts)
  'invoice_clients',
  // deposits a watcher saw reorged out after it recorded them, by (rail, deposit id): listed, never reversed
  'deposit_reorgs',
  // webhooks (src/core/webhooks.ts): each event, each delivery's state, the due deliveries by due time
  'webhook_events', 'webhook_deliveries', 'webhook_queue',
  // pending invoices by expiry, so the sweep expires them (and says so to the webhooks) without a reader
  'invoice_expiry',
  // x402 payments (src/core/x402/payments.ts): one record per authorization, and each settlement transaction's
  // payment (a watcher on the same wallet leaves those transfers alone)
  'x402_payments', 'x402_txs',
  // the Solana rails' invoices by their Solana Pay reference (src/core/solana-pay.ts)
  'invoice_refs',
  // each account as the node's start last verified it (src/core/ledger-checkpoint.ts): the next start reads
  // only the journal after it
  'ledger_marks',
] as const;
export type SublevelName = (typeof SUBLEVELS)[number];

/**
 * Sublevels whose records matter only while the process that wrote them runs (a node's marks on the
 * idempotency keys it is running): a store one process owns may keep them in that process's memory and
 * never write them to disk (LevelDB does); a shared store keeps them where every node reads them. They
 * are read, written and guarded like any other records.
 */
export const PROCESS_LIFETIME: ReadonlySet<SublevelName> = new Set(['idempotency_running']);

/**
 * One change in a batch. Later ops on the same key win, as in a LevelDB batch. Two guards, checked on the
 * last op of a key: `ifAbsent` (put only), the key must not exist before the batch; `ifUnchanged`, the
 * key must hold exactly this value before the batch (the value as get() returned it: compare-and-set, or
 * compare-and-delete). A guard that fails makes the whole batch land nothing, and write() throws a store
 * conflict (isStoreConflict). Every store checks them, so code built on them means the same on both
 * engines; where one process owns the store its callers' locks keep them from failing.
 */
export type Op =
  | { type: 'put'; sub: SublevelName; key: string; value: StoredRecord; ifAbsent?: true; ifUnchanged?: StoredRecord }
  | { type: 'del'; sub: SublevelName; key: string; ifUnchanged?: StoredRecord };

/** What the store did since it opened: tests count reads and synced writes per request with it. */
export interface StoreStats {
  /** point reads that went to the database */
  reads: number;
  /** point reads answered by the cache */
  cacheHits: number;
  /** write() calls (each one caller's atomic batch) */
  writes: number;
  /** synced batches (LevelDB: group commits, what costs an fdatasync; PostgreSQL: transactions) */
  syncedFlushes: number;
  /** unsynced batches */
  unsyncedFlushes: number;
  /** a shared store's transactions run again after a serialization failure or deadlock */
  retries?: number;
  /** a shared store's batches refused by an ifAbsent guard */
  conflicts?: number;
  /** a shared store's statements sent to its database (each a round trip: reads, writes, scan pages) */
  statements?: number;
}

/** One record to read: its sublevel and key. */
export interface Read { sub: SublevelName; key: string }

/** A consistent read view: entries() given it see one state of every sublevel. Close it when done. */
export interface StoreSnapshot {
  close(): Promise<void>;
}

/** A key range (bounds compare byte-wise, as keys do), at most `limit` records, from `snapshot`. */
export interface Range {
  gt?: string;
  gte?: string;
  lt?: string;
  lte?: string;
  limit?: number;
  snapshot?: StoreSnapshot;
}

export interface Store {
  readonly stats: StoreStats;
  /**
   * The name part that keeps one node's own records (its pulse chain, its transparency logs) apart from
   * other nodes' here: its node id where several nodes share the store; empty where one node owns it (a
   * data dir holds one node, whose records have always been written without one).
   */
  nodeScope(nodeId: string): string;
  /** One record, or undefined. The value may be frozen (a cached one): copy before changing. */
  get<T extends StoredRecord = Json>(name: SublevelName, key: string): Promise<T | undefined>;
  /**
   * Several records, in the order asked (undefined where there is none). A shared store reads them in one
   * statement: one round trip, and one state of all of them. Values may be frozen, as get()'s.
   */
  getMany(reads: readonly Read[]): Promise<(Json | undefined)[]>;
  /**
   * All ops in one atomic write: either every record lands or none does. Durable before it resolves
   * unless `sync: false`, for records whose loss in a crash is harmless.
   */
  write(ops: readonly Op[], opts?: { sync?: boolean }): Promise<void>;
  /**
   * A sublevel's records in key order within `range`. One iteration reads one consistent state; several
   * iterations read one state only when given the same snapshot.
   */
  entries<T extends StoredRecord = Json>(name: SublevelName, range?: Range): AsyncGenerator<[string, T]>;
  /** The keys of entries(name, range) alone (LevelDB reads no values for them). */
  keys(name: SublevelName, range?: Range): AsyncGenerator<string>;
  /** A read view fixed now, for several entries() calls that must agree (audit, ledger check, backup). */
  snapshot(): Promise<StoreSnapshot>;
  /**
   * Takes the lock `name` for as long as this store stays open (and its process lives): false when another
   * open store holds it. A shared store's nodes use it for what must be one process at a time (a node id);
   * a store one process owns has nobody to lock out and always answers true.
   */
  lockSession(name: string): Promise<boolean>;
  /** Resolves once the store answers a read now; rejects with why not (its database unreachable, closed). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const put = (sub: SublevelName, key: string, value: StoredRecord): Op => ({ type: 'put', sub, key, value });
export const del = (sub: SublevelName, key: string): Op => ({ type: 'del', sub, key });
/** A put whose key must be new (Op's ifAbsent): the journal's per-machine sequence is checked with it. */
export const create = (sub: SublevelName, key: string, value: StoredRecord): Op => ({
  type: 'put', sub, key, value, ifAbsent: true,
});

/** A put that lands only while the key still holds `was` (as read): compare-and-set. */
export const replace = (sub: SublevelName, key: string, value: StoredRecord, was: StoredRecord): Op => ({
  type: 'put', sub, key, value, ifUnchanged: was,
});
/** A delete that lands only while the key still holds `was` (as read). */
export const delIf = (sub: SublevelName, key: string, was: StoredRecord): Op => ({
  type: 'del', sub, key, ifUnchanged: was,
});

const KNOWN_SUBLEVELS: ReadonlySet<string> = new Set(SUBLEVELS);
const isRecord = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Refuses (TypeError, landing nothing) a batch holding anything but a put of a JSON object or a del, each
 * of a known sublevel under a string key. Without it an engine writes what it makes of the rest: LevelDB
 * deleted a key spelled `!undefined!undefined`, PostgreSQL threw from its driver.
 */
export function checkOps(ops: readonly Op[]): void {
  for (let i = 0; i < ops.length; i++) {
    const o = ops[i] as Partial<Op> | null;
    const wrong = !isRecord(o) ? 'is not an op'
      : o!.type !== 'put' && o!.type !== 'del' ? 'is neither a put nor a del'
        : !KNOWN_SUBLEVELS.has(o!.sub as string) ? 'names no sublevel'
          : typeof o!.key !== 'string' ? 'has no string key'
            : o!.type === 'put' && !isRecord((o as { value?: unknown }).value) ? 'puts no JSON object'
              : undefined;
    if (wrong) throw new TypeError(`store: op ${i} ${wrong}`);
  }
}

/**
 * A batch as each key's guard reads it (Op): per key, the op that wins (the last) and whether any op of
 * the key was a create (a create then a put is still a create); a create then a delete is refused. Both
 * engines check their guards from this.
 */
export function lastOpPerKey(ops: readonly Op[]): { op: Op; created: boolean }[] {
  const last = new Map<string, Op>();
  const created = new Set<string>();
  for (const o of ops) {
    const k = `${o.sub}\0${o.key}`;
    last.delete(k);
    last.set(k, o);
    if (o.type === 'put' && o.ifAbsent) created.add(k);
  }
  return [...last].map(([k, op]) => {
    if (op.type === 'del' && created.has(k)) {
      throw new RangeError(`a batch may not create and then delete ${op.sub} ${op.key}`);
    }
    return { op, created: created.has(k) };
  });
}

/** The refusal of a batch whose guard failed: another node wrote first; read again and retry. */
export function storeConflict(what: string): ServiceError {
  return new ServiceError('busy', `the ledger changed under this write (${what}); retry`, { store_conflict: true });
}

export function isStoreConflict(e: unknown): boolean {
  return e instanceof ServiceError && e.code === 'busy' && e.details?.store_conflict === true;
}
