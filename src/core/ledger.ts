// The ledger: per-machine `available` and `reserved` units (integers, BigInt) and the journal
// that explains every change. A change is never written alone: ledger.change() returns the
// account and journal records as batch ops for the caller to write together with the state that
// caused it (invoice settled, quote accepted/expired/executed) in one synced batch (DESIGN.md §4).
// Invariant, checked on start and after tests: for every account, available = Σ d_available and
// reserved = Σ d_reserved over its journal, and both are >= 0.
// The machine lock is per process, so on a shared store (several nodes, docs/scale-out.md) the journal's
// per-machine sequence is the optimistic check across nodes: withMachine notes the account's seq before
// the operation reads anything, a change must follow that seq (or one this operation wrote), and the
// journal entry is created, never overwritten. Another node's write in between fails the change or the
// batch (a store conflict), and the whole operation runs again, reading everything afresh. The same runs
// where one process owns the store; there nothing writes in between, and the check always passes.
import { ServiceError } from '../errors.ts';
import { idFromPart, idPart, key, numPart } from '../store/key-codec.ts';
import {
  create, isStoreConflict, put, storeConflict, type Json, type Op, type Read, type Store, type StoreSnapshot,
} from '../store/store.ts';
import { KeyedMutex } from './keyed-mutex.ts';
import { checkOrder, type Held } from './lock-order.ts';
import { ReadAhead, readsFrom, recordKey, type Reads } from './read-ahead.ts';


export interface Account { available: bigint; reserved: bigint; seq: number }
export type JournalKind = 'credit' | 'reserve' | 'release' | 'capture';

export interface JournalEntry {
  seq: number; at: string; kind: JournalKind;
  d_available: string; d_reserved: string;
  available_after: string; reserved_after: string;
  ref: Record<string, string>;
}

export interface LedgerCheck { ok: boolean; accounts: number; entries: number; problems: string[] }

/** A machine's record read ahead of its lock (Ledger.readAhead); keep() once its caller is authenticated. */
export interface AheadRead { machine: Json | undefined; keep(): void }

const EMPTY: Account = { available: 0n, reserved: 0n, seq: 0 };
const toAccount = (v: Json | undefined): Account => (v
  ? { available: BigInt(v.available as string), reserved: BigInt(v.reserved as string), seq: v.seq as number }
  : { ...EMPTY });
/** Runs of one operation on a shared store before its store conflict reaches the caller (busy: retry). */
const CONFLICT_RUNS = 5;

export class Ledger {
  readonly #store: Store;
  readonly #locks = new KeyedMutex();
  /** the seq each locked machine's operation builds on */
  readonly #expected = new Map<string, number>();
  readonly #ahead = new ReadAhead();

  constructor(store: Store) {
    this.#store = store;
  }

  /**
   * The machine's record, with its account and `more` read in the same statement, before its lock: its
   * next operation starts from them once kept (read-ahead.ts). Keep them only for an authenticated caller.
   */
  async readAhead(machineId: string, more: readonly Read[]): Promise<AheadRead> {
    const m = idPart(machineId);
    const reads: Read[] = [{ sub: 'machines', key: m }, { sub: 'accounts', key: m }, ...more];
    const at = this.#ahead.now();
    const values = await this.#store.getMany(reads);
    const keep = () => {
      const records = new Map(reads.slice(1).map((r, i) => [recordKey(r.sub, r.key), values[i + 1]]));
      this.#ahead.keep(machineId, at, records);
    };
    return { machine: values[0], keep };
  }

  /**
   * Runs fn with the machine's account locked: the only way to read-then-change an account. The account is
   * read first (its seq is what the change must follow) and handed to fn, which need not read it again
   * before its first write, with `reads` for its other reads (what was read ahead of the lock first); the
   * operation runs again on a store conflict (another node wrote meanwhile), reading everything afresh.
   * `outer`: the lock this one is taken under (lock-order.ts: only a deposit's).
   */
  async withMachine<T>(
    machineId: string, fn: (held: Held, account: Account, reads: Reads) => Promise<T>, outer: Held | null = null,
  ): Promise<T> {
    checkOrder('machine', outer);
    const expected = this.#expected;
    const held: Held = { kind: 'machine', outer };
    for (let run = 1; ; run++) {
      try {
        return await this.#locks.run(`m:${machineId}`, async () => {
          const ahead = this.#ahead.take(machineId);
          const key = recordKey('accounts', idPart(machineId));
          const account = ahead?.has(key) ? toAccount(ahead.get(key)) : await this.account(machineId);
          expected.set(machineId, account.seq);
          try {
            return await fn(held, account, ahead ? readsFrom(this.#store, ahead) : this.#store);
          } finally {
            expected.delete(machineId);
            this.#ahead.ended(machineId);
          }
        });
      } catch (e) {
        if (!isStoreConflict(e) || run >= CONFLICT_RUNS) throw e;
      }
    }
  }

  async account(machineId: string): Promise<Account> {
    return toAccount(await this.#store.get('accounts', idPart(machineId)));
  }

  /**
   * Builds the ops for one journaled change. Refuses any change that would make a balance
   * negative (a bug upstream, never a caller error: the callers check first).
   */
  change(
    machineId: string, acct: Account, kind: JournalKind, dAvailable: bigint, dReserved: bigint,
    ref: Record<string, string>, at: Date,
  ): { ops: Op[]; next: Account } {
    const next: Account = {
      available: acct.available + dAvailable,
      reserved: acct.reserved + dReserved,
      seq: acct.seq + 1,
    };
    // first: a change built on an account another node has moved on is stale, not negative
    this.#follows(machineId, acct);
    if (next.available < 0n || next.reserved < 0n) {
      throw new ServiceError('internal', `ledger change would go negative (${kind} on ${machineId})`);
    }
    const entry: JournalEntry = {
      seq: next.seq, at: at.toISOString(), kind,
      d_available: dAvailable.toString(), d_reserved: dReserved.toString(),
      available_after: next.available.toString(), reserved_after: next.reserved.toString(), ref,
    };
    const m = idPart(machineId);
    return {
      next,
      ops: [
        put('accounts', m, { available: next.available.toString(), reserved: next.reserved.toString(), seq: next.seq }),
        // created, never overwritten: on a shared store a second writer of this seq fails (docs/scale-out.md)
        create('journal', key(m, numPart(next.seq)), entry),
      ],
    };
  }

  /**
   * The account a change builds on must be the one seen when the operation began (or one it wrote since).
   * A newer one means another node wrote meanwhile, and what the operation read before
   * (a quote's state, an invoice's) may be stale: refuse, so that withMachine runs it again.
   */
  #follows(machineId: string, acct: Account): void {
    const seen = this.#expected.get(machineId);
    if (seen === undefined) return; // not under withMachine: the journal create still guards the write
    if (acct.seq !== seen) throw storeConflict(`${machineId}'s journal moved from ${seen} to ${acct.seq}`);
    this.#expected.set(machineId, acct.seq + 1);
  }

  async journal(machineId: string): Promise<JournalEntry[]> {
    const m = idPart(machineId);
    const out: JournalEntry[] = [];
    const range = { gte: key(m, ''), lt: key(m, '\uffff') };
    for await (const [, v] of this.#store.entries<JournalEntry>('journal', range)) out.push(v);
    return out;
  }

  /**
   * Recomputes every account from its journal, as of `snapshot` or else of one taken now: the journal
   * and the accounts must be read from one state while writes go on (other nodes write, on a shared store).
   */
  async verify(snapshot?: StoreSnapshot): Promise<LedgerCheck> {
    if (snapshot) return this.#verifyAt(snapshot);
    const own = await this.#store.snapshot();
    try {
      return await this.#verifyAt(own);
    } finally {
      await own.close();
    }
  }

  async #verifyAt(snapshot: StoreSnapshot): Promise<LedgerCheck> {
    const at = { snapshot };
    const problems: string[] = [];
    let accounts = 0, entries = 0;
    const sums = new Map<string, { a: bigint; r: bigint; lastSeq: number }>();
    for await (const [k, e] of this.#store.entries<JournalEntry>('journal', at)) {
      const [m] = k.split('!');
      const s = sums.get(m!) ?? { a: 0n, r: 0n, lastSeq: 0 };
      s.a += BigInt(e.d_available);
      s.r += BigInt(e.d_reserved);
      if (e.seq !== s.lastSeq + 1) problems.push(`${idFromPart(m!)}: journal seq ${e.seq} follows ${s.lastSeq}`);
      s.lastSeq = e.seq;
      sums.set(m!, s);
      entries++;
    }
    for await (const [m, v] of this.#store.entries('accounts', at)) {
      accounts++;
      const id = idFromPart(m);
      const s = sums.get(m) ?? { a: 0n, r: 0n, lastSeq: 0 };
      const avail = BigInt(v.available as string), res = BigInt(v.reserved as string);
      if (avail !== s.a) problems.push(`${id}: available ${avail} but journal sums to ${s.a}`);
      if (res !== s.r) problems.push(`${id}: reserved ${res} but journal sums to ${s.r}`);
      if (avail < 0n || res < 0n) problems.push(`${id}: negative balance`);
      if ((v.seq as number) !== s.lastSeq) {
        problems.push(`${id}: account seq ${v.seq as number} but journal ends at ${s.lastSeq}`);
      }
      sums.delete(m);
    }
    for (const m of sums.keys()) problems.push(`${idFromPart(m)}: journal entries without an account`);
    return { ok: problems.length === 0, accounts, entries, problems };
  }
}
