// A bounded map that forgets the least recently used entry first, in O(1) per operation whatever its
// size. The store's read cache used a Map's insertion order for this (delete and set again on every hit,
// `keys().next()` for the oldest): V8 leaves a deleted entry's slot in the table until it rehashes, so
// finding the oldest walked over every entry deleted since, and the cache's own upkeep grew to 80 µs
// per paid flow once it was full (docs/performance.md). Here the order is a linked list
// through the entries; the Map is only written when a key comes or goes.

interface Node<K, V> {
  key: K;
  value: V;
  /** toward the least recently used end */
  older: Node<K, V> | null;
  /** toward the most recently used end */
  newer: Node<K, V> | null;
}

export class Lru<K, V> {
  readonly #nodes = new Map<K, Node<K, V>>();
  readonly #capacity: number;
  /** least recently used */
  #oldest: Node<K, V> | null = null;
  /** most recently used */
  #newest: Node<K, V> | null = null;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity ${capacity}: a whole number ≥ 1`);
    this.#capacity = capacity;
  }

  get size(): number {
    return this.#nodes.size;
  }

  /** The value, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const n = this.#nodes.get(key);
    if (!n) return undefined;
    this.#toNewest(n);
    return n.value;
  }

  /** The value, leaving the order alone. */
  peek(key: K): V | undefined {
    return this.#nodes.get(key)?.value;
  }

  /** Sets the value, now the most recently used; past the capacity the least recently used goes. */
  set(key: K, value: V): void {
    const n = this.#nodes.get(key);
    if (n) {
      n.value = value;
      this.#toNewest(n);
      return;
    }
    const added: Node<K, V> = { key, value, older: this.#newest, newer: null };
    if (this.#newest) this.#newest.newer = added;
    else this.#oldest = added;
    this.#newest = added;
    this.#nodes.set(key, added);
    if (this.#nodes.size > this.#capacity) this.delete(this.#oldest!.key);
  }

  delete(key: K): boolean {
    const n = this.#nodes.get(key);
    if (!n) return false;
    this.#unlink(n);
    this.#nodes.delete(key);
    return true;
  }

  /** Keys from the least to the most recently used. */
  *keys(): IterableIterator<K> {
    for (let n = this.#oldest; n; n = n.newer) yield n.key;
  }

  #unlink(n: Node<K, V>): void {
    if (n.older) n.older.newer = n.newer;
    else this.#oldest = n.newer;
    if (n.newer) n.newer.older = n.older;
    else this.#newest = n.older;
    n.older = null;
    n.newer = null;
  }

  #toNewest(n: Node<K, V>): void {
    if (n === this.#newest) return;
    this.#unlink(n);
    n.older = this.#newest;
    this.#newest!.newer = n;
    this.#newest = n;
  }
}
