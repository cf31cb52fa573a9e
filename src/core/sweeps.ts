// The expiry sweeps of one round (quotes whose reservation is released, invoices past their expiry,
// idempotency records past their window, and on a shared store idempotency keys whose node stopped while
// running them), run by svcd's sweeper every SVC_SWEEP_INTERVAL_MS. Several nodes on one shared store: one
// sweeps at a time, the holder of the `sweeps` lease (leases.ts); the others skip their rounds while its
// lease runs, and take it over once the holder has stopped renewing it. Each release is still a guarded
// ledger change, so a round that ran anyway (a lease lost mid-round) can refuse, never repeat, a release.
import { key, numPart } from '../store/key-codec.ts';
import { del, delIf, isStoreConflict, type Json, type Store } from '../store/store.ts';
import type { CoreContext } from './context.ts';
import { sweepIdempotency } from './idempotency.ts';
import { refreshInvoice, type InvoiceRecord } from './invoices.ts';
import { leaseFor, type Lease } from './leases.ts';
import { sweepExpired } from './quotes.ts';

export const SWEEP_LEASE = 'sweeps';

/** What one round did: `swept` false when another node holds the sweep lease (nothing was done). */
export interface SweepRound { swept: boolean; quotes: number; idempotency: number; running: number; invoices: number }

/** The sweep lease of this node (a store one process owns: that process always holds it). */
export function sweepLease(ctx: CoreContext): Lease {
  // long enough for a slow round; a stopped holder is replaced within it
  return leaseFor(ctx, SWEEP_LEASE, Math.max(10_000, 3 * ctx.config.sweepIntervalMs));
}

/** One round: the sweeps, if this node holds the lease. */
export async function sweepRound(ctx: CoreContext, lease: Lease): Promise<SweepRound> {
  if (!(await lease.hold())) return { swept: false, quotes: 0, idempotency: 0, running: 0, invoices: 0 };
  const nowMs = ctx.now().getTime();
  const [quotes, idempotency, running, invoices] = await Promise.all([
    sweepExpired(ctx),
    sweepIdempotency(ctx.store, nowMs),
    sweepRunning(ctx.store, nowMs),
    sweepInvoices(ctx),
  ]);
  return { swept: true, quotes, idempotency, running, invoices };
}

/**
 * Expires the pending invoices whose time has passed, oldest first (at most `limit`): the sweep's part, so
 * an invoice expires (and its webhook goes out) whether anyone reads it or not. Entries of invoices settled
 * meanwhile, or created before the index existed and expired on a read, are dropped. Returns how many expired.
 */
export async function sweepInvoices(ctx: CoreContext, limit = 100): Promise<number> {
  const range = { lt: key(numPart(ctx.now().getTime() + 1), ''), limit };
  const due: [string, string][] = [];
  for await (const [k, v] of ctx.store.entries('invoice_expiry', range)) due.push([k, v.invoice_id as string]);
  let expired = 0;
  for (const [k, id] of due) {
    const inv = await ctx.store.get<InvoiceRecord>('invoices', id);
    if (inv?.state === 'pending') {
      if ((await refreshInvoice(ctx, inv)).state === 'expired') expired++;
    } else {
      await ctx.store.write([del('invoice_expiry', k)]);
    }
  }
  return expired;
}

/**
 * At start, after the node's session lock (one process per node id): the idempotency keys an earlier
 * process of this node left marked running (killed mid-request) and the leases it held are deleted at
 * once, rather than after they expire, so a client's retry with the same key runs, and the sweeps and
 * watchers start, as soon as the node is back. Other nodes' are theirs. Both are few, so one scan each.
 */
export async function clearOwnStaleHolds(store: Store, nodeId: string, self: string): Promise<number> {
  const stale = (v: Json) => (v.holder as string).startsWith(`${nodeId}#`) && v.holder !== self;
  return await deleteMarks(store, 'idempotency_running', stale) + await deleteMarks(store, 'leases', stale);
}

/** Idempotency keys marked running by a node whose lease on them ended (it stopped mid-request): deleted. */
function sweepRunning(store: Store, nowMs: number): Promise<number> {
  return deleteMarks(store, 'idempotency_running', (v) => (v.expires_ms as number) <= nowMs, 1000);
}

/**
 * Deletes the marks (or leases) `which` picks, each compared with the record as read: one taken over
 * meanwhile is held again and stays.
 */
async function deleteMarks(
  store: Store, sub: 'idempotency_running' | 'leases', which: (mark: Json) => boolean, limit?: number,
): Promise<number> {
  let n = 0;
  for await (const [k, v] of store.entries(sub, limit ? { limit } : {})) {
    if (!which(v)) continue;
    try {
      await store.write([delIf(sub, k, v)]);
      n++;
    } catch (e) {
      if (!isStoreConflict(e)) throw e;
    }
  }
  return n;
}
