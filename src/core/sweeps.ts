// The expiry sweeps of one round (quotes whose reservation is released, idempotency records past their
// window, and on a shared store idempotency keys whose node stopped while running them), run by svcd's
// sweeper every SVC_SWEEP_INTERVAL_MS. Several nodes on one shared store: one sweeps at a time, the holder
// of the `sweeps` lease (leases.ts); the others skip their rounds while its lease runs, and take it over
// once the holder has stopped renewing it. Each release is still a guarded ledger change, so a round that
// ran anyway (a lease lost mid-round) can refuse, never repeat, a release.
import { delIf, isStoreConflict, type Json, type Store } from '../store/store.ts';
import type { CoreContext } from './context.ts';
import { sweepIdempotency } from './idempotency.ts';
import { leaseFor, type Lease } from './leases.ts';
import { sweepExpired } from './quotes.ts';

export const SWEEP_LEASE = 'sweeps';

/** What one round did: `swept` false when another node holds the sweep lease (nothing was done). */
export interface SweepRound { swept: boolean; quotes: number; idempotency: number; running: number }

/** The sweep lease of this node on a shared store (null on a store one process owns: it always sweeps). */
export function sweepLease(ctx: CoreContext): Lease | null {
  // long enough for a slow round; a stopped holder is replaced within it
  return ctx.store.shared ? leaseFor(ctx, SWEEP_LEASE, Math.max(10_000, 3 * ctx.config.sweepIntervalMs)) : null;
}

/** One round: the sweeps, if this node holds the lease (or needs none). */
export async function sweepRound(ctx: CoreContext, lease: Lease | null): Promise<SweepRound> {
  if (lease && !(await lease.hold())) return { swept: false, quotes: 0, idempotency: 0, running: 0 };
  const nowMs = ctx.now().getTime();
  const [quotes, idempotency, running] = await Promise.all([
    sweepExpired(ctx),
    sweepIdempotency(ctx.store, nowMs),
    ctx.store.shared ? sweepRunning(ctx.store, nowMs) : 0,
  ]);
  return { swept: true, quotes, idempotency, running };
}

/**
 * At start, after the node's session lock (one process per node id): the idempotency keys an earlier
 * process of this node left marked running (killed mid-request) are deleted at once, rather than after
 * their lease, so a client's retry with the same key runs as soon as the node is back. Marks of other
 * nodes are theirs. Marks are few (one per request in flight), so one scan suffices.
 */
export function clearOwnStaleMarks(store: Store, nodeId: string, self: string): Promise<number> {
  return deleteMarks(store, (v) => (v.holder as string).startsWith(`${nodeId}#`) && v.holder !== self);
}

/** Idempotency keys marked running by a node whose lease on them ended (it stopped mid-request): deleted. */
function sweepRunning(store: Store, nowMs: number): Promise<number> {
  return deleteMarks(store, (v) => (v.expires_ms as number) <= nowMs, 1000);
}

/**
 * Deletes the idempotency marks `which` picks, each compared with the mark as read: one taken over
 * meanwhile is running again and stays.
 */
async function deleteMarks(store: Store, which: (mark: Json) => boolean, limit?: number): Promise<number> {
  let n = 0;
  for await (const [k, v] of store.entries('idempotency_running', limit ? { limit } : {})) {
    if (!which(v)) continue;
    try {
      await store.write([delIf('idempotency_running', k, v)]);
      n++;
    } catch (e) {
      if (!isStoreConflict(e)) throw e;
    }
  }
  return n;
}
