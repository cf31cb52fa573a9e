// How many live things (sandbox entries in the core) one client address holds at once: free state
// a caller can make the service keep until it expires is bounded per caller. Counted in memory per
// process (a restart forgets the counts).
import { ServiceError } from '../errors.ts';

export class LiveQuota {
  readonly #max: number;
  readonly #maxClients: number;
  // client key → expiry times (ms) of its live entries
  readonly #live = new Map<string, number[]>();

  readonly #what: string;

  constructor(max: number, what: string, maxClients = 100_000) {
    this.#max = max;
    this.#what = what;
    this.#maxClients = maxClients;
  }

  /**
   * Takes a slot for an entry living until `expiresMs`; throws 429 rate_limited (with retry_after_s)
   * when the client holds `max` live entries. Returns a function that gives the slot back (the entry
   * was not made after all, or was evicted).
   */
  take(client: string, expiresMs: number, nowMs: number): () => void {
    let list = this.#live.get(client);
    if (list && list.length >= this.#max) dropExpired(list, nowMs);
    if (list && list.length >= this.#max) {
      const retry = Math.max(1, Math.ceil((Math.min(...list) - nowMs) / 1000));
      const msg = `this address holds ${this.#max} ${this.#what}; retry after ${retry} s`;
      throw new ServiceError('rate_limited', msg, {
        rate_class: 'public_low', retry_after_s: retry, quota: `${this.#what} per address`, limit: this.#max,
      });
    }
    if (!list) {
      if (this.#live.size >= this.#maxClients) this.sweep(nowMs);
      list = [];
      this.#live.set(client, list);
    }
    list.push(expiresMs);
    const held = list;
    return () => {
      const i = held.lastIndexOf(expiresMs);
      if (i >= 0) held.splice(i, 1);
    };
  }

  /** Forgets expired entries and clients with none left; if still over the client bound, the oldest go. */
  sweep(nowMs: number): void {
    for (const [k, list] of this.#live) {
      dropExpired(list, nowMs);
      if (!list.length) this.#live.delete(k);
    }
    for (const k of this.#live.keys()) {
      if (this.#live.size < this.#maxClients) break;
      this.#live.delete(k);
    }
  }
}

// In place: the release functions handed out hold the array itself, so it must stay the same array
// (a copy would turn a later release, e.g. a sandbox eviction, into a no-op that keeps the slot taken).
function dropExpired(list: number[], nowMs: number): void {
  let n = 0;
  for (const e of list) if (e > nowMs) list[n++] = e;
  list.length = n;
}
