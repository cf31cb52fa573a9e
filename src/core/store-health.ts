// Whether the node's store answers now (HEALTH, and through it a gateway's /readyz and its probe of the
// node): one ping at a time and at most one a second however often HEALTH is asked, each given
// `timeoutMs` to answer. Why the last ping failed is kept for the operator (HEALTH on the admin socket),
// not answered to the public: a database's address is nobody else's business.
import type { Store } from '../store/contract.ts';

export type StoreState = { ok: true } | { ok: false; reason: string };

export class StoreHealth {
  #last: { at: number; answer: Promise<StoreState> } | null = null;

  constructor(
    private readonly store: Store,
    private readonly cacheMs = 1000,
    private readonly timeoutMs = 2000,
  ) {}

  /** The store's state, at most cacheMs old. */
  state(now = Date.now()): Promise<StoreState> {
    if (this.#last && now - this.#last.at < this.cacheMs) return this.#last.answer;
    const answer = this.#ping();
    this.#last = { at: now, answer };
    return answer;
  }

  async #ping(): Promise<StoreState> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      await Promise.race([this.store.ping(), late]);
      return { ok: true };
    } catch (e) {
      return { ok: false, reason: e instanceof Error ? e.message : String(e) };
    } finally {
      clearTimeout(timer);
    }
  }
}
