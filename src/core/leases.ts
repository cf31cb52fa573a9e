// Leases: one holder of a duty at a time across the nodes of one shared store (docs/scale-out.md) — the
// expiry sweeps, a rail's chain watcher. A lease is a record in `leases` naming its holder (this process:
// its node id and an instance id, so two processes with one node key are two holders) and when it ends;
// taken with a create, renewed or taken over from a holder whose time ran out with a compare-and-set, so
// two nodes can never both take it. A holder that dies keeps it until it expires. Times are the nodes'
// clocks (ctx.now): keep them in sync to well under a lease's length. The same on a store one process
// owns (LevelDB): there the one process always takes it, at one small write per half lease.
import { randomUUID } from 'node:crypto';
import { create, delIf, isStoreConflict, replace, type Json, type Store } from '../store/store.ts';
import type { CoreContext } from './context.ts';

interface LeaseRecord extends Json { holder: string; node_id: string; expires_ms: number }

/** This process, among the processes that may share one node key (a misconfiguration leases must survive). */
const INSTANCE = randomUUID().slice(0, 8);

/** This process among the holders: its node id and the process's instance id. */
export function holderId(nodeId: string): string {
  return `${nodeId}#${INSTANCE}`;
}

/** The lease `name` for this node (ctx's store, identity and clock). */
export function leaseFor(ctx: CoreContext, name: string, ttlMs: number): Lease {
  const nodeId = ctx.identity.nodeId;
  return new Lease(ctx.store, name, { holder: holderId(nodeId), nodeId, ttlMs, now: ctx.now });
}

export class Lease {
  readonly #store: Store;
  readonly #name: string;
  readonly #holder: string;
  readonly #nodeId: string;
  readonly #ttlMs: number;
  readonly #now: () => Date;

  /** `holder`: holderId() of this process; `ttlMs`: how long a taking or renewal lasts. */
  constructor(store: Store, name: string, opts: { holder: string; nodeId: string; ttlMs: number; now: () => Date }) {
    this.#store = store;
    this.#name = name;
    this.#holder = opts.holder;
    this.#nodeId = opts.nodeId;
    this.#ttlMs = opts.ttlMs;
    this.#now = opts.now;
  }

  get name(): string { return this.#name; }

  /**
   * Whether this process holds the lease now: it takes a free or expired one, renews its own once half its
   * time is gone, and answers false while another holder's time runs. A store error propagates.
   */
  async hold(): Promise<boolean> {
    const nowMs = this.#now().getTime();
    const cur = await this.#store.get<LeaseRecord>('leases', this.#name);
    if (cur && cur.holder !== this.#holder && cur.expires_ms > nowMs) return false;
    if (cur && cur.holder === this.#holder && cur.expires_ms - nowMs > this.#ttlMs / 2) return true;
    const next: LeaseRecord = { holder: this.#holder, node_id: this.#nodeId, expires_ms: nowMs + this.#ttlMs };
    try {
      await this.#store.write([cur ? replace('leases', this.#name, next, cur) : create('leases', this.#name, next)]);
      return true;
    } catch (e) {
      if (isStoreConflict(e)) return false; // another node took or renewed it first
      throw e;
    }
  }

  /** Gives the lease up (at shutdown) if this process holds it, so another node need not wait for it to expire. */
  async release(): Promise<void> {
    const cur = await this.#store.get<LeaseRecord>('leases', this.#name);
    if (cur?.holder !== this.#holder) return;
    await this.#store.write([delIf('leases', this.#name, cur)]).catch((e: unknown) => {
      if (!isStoreConflict(e)) throw e;
    });
  }
}
