// A bounded in-memory table of entries that client addresses own and that all live the same time (the
// sandbox's quotes and receipts). Full, it drops what is cheapest to lose: what expired, then, from the
// addresses holding the most, their oldest entries that are not pinned, until every address is trimmed
// to a common level (water-filling). So a flood from many addresses costs the flooders their entries,
// never a light user's, and a pinned entry (an accepted sandbox quote) lives its whole life.

export interface Owned {
  /** the client address key the entry is charged to */
  owner: string;
  expires_ms: number;
  /** gives the owner's quota slot back (called when the entry is dropped) */
  release(): void;
}

export class FairTable<T extends Owned> {
  // insertion order is creation order, and every entry lives the same time: the oldest are in front
  readonly #all = new Map<string, T>();
  readonly #max: number;
  readonly #pinned: (e: T) => boolean;
  /** when the next walk for expired entries is due (the oldest entry's expiry; at most once a second) */
  #due = 0;

  constructor(max: number, pinned: (e: T) => boolean = () => false) {
    this.#max = max;
    this.#pinned = pinned;
  }

  get size(): number { return this.#all.size; }

  /** The live entry `id`, or undefined (an expired one waiting for a walk is not returned). */
  get(id: string, now: number): T | undefined {
    const e = this.#all.get(id);
    return e && e.expires_ms > now ? e : undefined;
  }

  /** Adds an entry; call makeRoom first. */
  set(id: string, e: T): void {
    this.#all.set(id, e);
  }

  /**
   * Room for one more entry: drops what expired (a walk from the front, when due or full), and when
   * still full, the heaviest owners' oldest unpinned entries down to 90%. False when all that is left
   * is pinned and the table is full.
   */
  makeRoom(now: number): boolean {
    if (this.#all.size < this.#max && now < this.#due) return true;
    this.#dropExpired(now);
    if (this.#all.size < this.#max) return true;
    this.#trim(this.#all.size - Math.floor(this.#max * 0.9));
    return this.#all.size < this.#max;
  }

  // A walk from the front passes every slot V8 has not reclaimed since earlier deletes
  // (docs/performance.md), so it runs only when the oldest entry is due, at most once a second.
  #dropExpired(now: number): void {
    let due = now + 1000;
    for (const [k, e] of this.#all) {
      if (e.expires_ms > now) {
        due = Math.max(due, e.expires_ms);
        break;
      }
      this.#drop(k, e);
    }
    this.#due = due;
  }

  /** Drops `n` unpinned entries or more: each owner above a common level down to it, its oldest first. */
  #trim(n: number): void {
    const byOwner = new Map<string, [string, T][]>();
    for (const [k, e] of this.#all) {
      if (this.#pinned(e)) continue;
      let list = byOwner.get(e.owner);
      if (!list) byOwner.set(e.owner, list = []);
      list.push([k, e]);
    }
    const level = waterLevel([...byOwner.values()].map((l) => l.length), n);
    for (const list of byOwner.values()) {
      for (let i = 0; i < list.length - level; i++) this.#drop(list[i]![0], list[i]![1]);
    }
  }

  #drop(k: string, e: T): void {
    this.#all.delete(k);
    e.release();
  }
}

/**
 * The highest level L such that trimming every count above L down to L frees at least `n` (0 when even
 * trimming all of them frees less).
 */
export function waterLevel(counts: number[], n: number): number {
  let lo = 0;
  let hi = Math.max(0, ...counts);
  const freed = (level: number) => counts.reduce((sum, c) => sum + Math.max(0, c - level), 0);
  if (freed(0) < n) return 0;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (freed(mid) >= n) lo = mid; else hi = mid - 1;
  }
  return lo;
}
