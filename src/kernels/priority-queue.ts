// A piscina task queue with three FIFO lanes (DESIGN.md §5: `low` queues behind the others,
// `high` — priced as "priority" — goes first). Each task names its lane through piscina's queue
// options symbol; tasks without one are `normal`.
import { queueOptionsSymbol, type PiscinaTask as Task, type TaskQueue } from 'piscina';

export type Lane = 'high' | 'normal' | 'low';
const ORDER: readonly Lane[] = ['high', 'normal', 'low'];

export class PriorityTaskQueue implements TaskQueue {
  readonly #lanes: Record<Lane, Task[]> = { high: [], normal: [], low: [] };

  get size(): number {
    return this.#lanes.high.length + this.#lanes.normal.length + this.#lanes.low.length;
  }

  #lane(task: Task): Lane {
    const p = (task[queueOptionsSymbol as typeof queueOptionsSymbol] as { priority?: unknown } | null)?.priority;
    return p === 'high' || p === 'low' ? p : 'normal';
  }

  push(task: Task): void {
    this.#lanes[this.#lane(task)].push(task);
  }

  shift(): Task | null {
    for (const l of ORDER) {
      const t = this.#lanes[l].shift();
      if (t) return t;
    }
    return null;
  }

  remove(task: Task): void {
    const lane = this.#lanes[this.#lane(task)];
    const i = lane.indexOf(task);
    if (i >= 0) lane.splice(i, 1);
  }
}
