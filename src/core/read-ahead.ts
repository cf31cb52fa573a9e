// Records read before a machine's lock is taken, for the locked operation to use instead of reading them
// again. The gate reads the caller's machine record before any lock (authenticate before anything is keyed
// on the caller), and on PostgreSQL every read is a round trip: the account and the quote the call names
// come in the same statement, and the operation under the lock starts from them (ledger.ts withMachine).
// They are as good as a read under the lock when no operation on that machine ended in this process since
// they were read (it may have written them). What another node writes meanwhile is what the ledger's
// optimistic check catches for every read (a batch built on a stale account is refused and the operation
// runs again, reading afresh), as it does when the same reads are made under the lock.
import type { Json, Store, SublevelName } from '../store/store.ts';

/** The reads a locked operation makes: those read ahead first, the store for the rest. */
export type Reads = Pick<Store, 'get'>;

/** Machines whose last operation's end is remembered; past this the oldest are forgotten (conservatively). */
const REMEMBERED = 65_536;
/** Read-aheads kept for operations not started yet (a refused call leaves one); past this the oldest go. */
const KEPT = 4_096;

export const recordKey = (sub: SublevelName, key: string): string => `${sub}\0${key}`;

interface Kept { at: number; records: Map<string, Json | undefined> }

export class ReadAhead {
  /** advances once per operation ended */
  #clock = 0;
  /** machine id → the clock when an operation on it last ended here, oldest first */
  readonly #ended = new Map<string, number>();
  /** the latest clock of a machine forgotten from #ended: any machine not in it may have ended then */
  #forgottenUpTo = 0;
  readonly #kept = new Map<string, Kept>();

  /** The clock now: a read begun now is valid for a machine until an operation on it ends. */
  now(): number {
    return this.#clock;
  }

  /** Keeps what was read for `machineId` from `at` (records by recordKey), for its next operation. */
  keep(machineId: string, at: number, records: Map<string, Json | undefined>): void {
    this.#kept.delete(machineId);
    this.#kept.set(machineId, { at, records });
    if (this.#kept.size > KEPT) this.#kept.delete(this.#kept.keys().next().value!);
  }

  /** What was kept for the machine, if no operation on it ended since it was read; forgotten either way. */
  take(machineId: string): Map<string, Json | undefined> | undefined {
    const kept = this.#kept.get(machineId);
    if (!kept) return undefined;
    this.#kept.delete(machineId);
    const last = this.#ended.get(machineId) ?? this.#forgottenUpTo;
    return last <= kept.at ? kept.records : undefined;
  }

  /** An operation on the machine ended (whatever it wrote is written, or never will be). */
  ended(machineId: string): void {
    const t = ++this.#clock;
    this.#ended.delete(machineId);
    this.#ended.set(machineId, t);
    if (this.#ended.size <= REMEMBERED) return;
    const [oldest, at] = this.#ended.entries().next().value!;
    this.#ended.delete(oldest);
    this.#forgottenUpTo = at;
  }
}

/** `records` first, then the store: a locked operation's reads. */
export function readsFrom(store: Store, records: Map<string, Json | undefined>): Reads {
  return {
    get: <T extends object = Json>(sub: SublevelName, key: string): Promise<T | undefined> => {
      const k = recordKey(sub, key);
      return records.has(k) ? Promise.resolve(records.get(k) as T | undefined) : store.get<T>(sub, key);
    },
  };
}
