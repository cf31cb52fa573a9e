// The node's in-process locks and the one order they are taken in. A function run under a lock is
// handed a Held (what it holds, and what it was taken under); a lock taken inside it names that Held as
// its outer lock, and a lock taken under one of the same or a later kind is refused at once: a bug in the
// caller, never a wait that could deadlock. The order, outermost first:
//
//   payment    one x402 authorization (x402/desk.ts): its settlement and the execution it pays
//   deposit    one chain transfer's record (deposits.ts): the watcher's credit, CLAIM, DISMISS
//   machine    one machine's account (ledger.ts withMachine): every read-then-change of its money
//   client     one client address's open invoices (invoice-clients.ts), for FUND_ACCOUNT
//   rail       one rail's amount index (invoices.ts), for FUND_ACCOUNT's unique amount
//   reference  one payment reference (invoices.ts), for a settlement
//
// On a shared store these locks are per node; the guarded writes under them keep nodes apart
// (docs/scale-out.md).
import { KeyedMutex } from './keyed-mutex.ts';

export const LOCK_ORDER = ['payment', 'deposit', 'machine', 'client', 'rail', 'reference'] as const;
export type LockKind = (typeof LOCK_ORDER)[number];

/** Proof of the locks held: the innermost one's kind, and the one it was taken under (null: none). */
export interface Held { readonly kind: LockKind; readonly outer: Held | null }

/** Throws when a `kind` lock would be taken under `outer` against the order. */
export function checkOrder(kind: LockKind, outer: Held | null): void {
  if (outer === null || LOCK_ORDER.indexOf(outer.kind) < LOCK_ORDER.indexOf(kind)) return;
  const order = LOCK_ORDER.join(' → ');
  throw new Error(`lock order: a ${kind} lock taken under a ${outer.kind} lock (the order is ${order})`);
}

/** Runs `fn` holding `key`'s lock of the table `kind` kept for `owner`, taken under `outer`. */
export type LockTable = <T>(
  owner: object, key: string, outer: Held | null, fn: (held: Held) => Promise<T>,
) => Promise<T>;

/** A table of `kind` locks per owner (a store: tests open many in one process), made on first use. */
export function lockTable(kind: LockKind): LockTable {
  const tables = new WeakMap<object, KeyedMutex>();
  return (owner, key, outer, fn) => {
    checkOrder(kind, outer);
    let locks = tables.get(owner);
    if (!locks) tables.set(owner, (locks = new KeyedMutex()));
    return locks.run(key, () => fn({ kind, outer }));
  };
}
