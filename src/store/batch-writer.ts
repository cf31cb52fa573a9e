// Writing many ops in bounded batches (an index built over a whole sublevel): each batch at most `size` ops,
// the rest with the caller's last ops (a "done" marker) in one final batch, so the marker lands only with them.
import type { Op, Store } from './contract.ts';

export interface BatchWriter {
  /** adds ops, writing a batch once `size` are waiting */
  add(...ops: Op[]): Promise<void>;
  /** writes what waits together with `last` */
  end(...last: Op[]): Promise<void>;
}

/** `opts`: how each batch is written (`sync: false` where a later synced write makes them durable). */
export function batchWriter(store: Store, size = 1000, opts?: { sync?: boolean }): BatchWriter {
  let ops: Op[] = [];
  return {
    async add(...more) {
      ops.push(...more);
      if (ops.length < size) return;
      const full = ops;
      ops = [];
      await store.write(full, opts);
    },
    async end(...last) {
      const rest = ops;
      ops = [];
      if (rest.length + last.length > 0) await store.write([...rest, ...last], opts);
    },
  };
}
