// Per-key mutual exclusion for async work: operations on one machine's account run one at a time
// (so two concurrent requests can never both spend the same units); different keys run freely.
// One svcd process owns the database, so an in-process lock is the whole story.

export class KeyedMutex {
  readonly #tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => { release = r; });
    const tail = prev.then(() => mine);
    this.#tails.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }

  get size(): number { return this.#tails.size; }
}
