// The node's per-address windows, shared by the gateway workers of `svcd start` (SVC_GATEWAY_PROCESSES
// > 0), which answer free quotes themselves (core/quote-desk.ts; docs/decisions.md "Free quotes
// answered where they arrive"). The windows live in the core, the cluster primary. A worker does not
// ask it about every request: it asks for a grant, a share of what the window has left, counted there
// at once, and admits that many requests itself. When a window has nothing left to grant, the primary
// recalls what the other workers hold unused before it refuses. So the node never admits more than the
// limit, and never refuses while a worker still holds unused requests of that window (unless that
// worker fails to answer the recall in time, or dropped its grant: both only ever admit fewer).
//
// Both sides are here: `nodeWindows` runs in a worker, `windowDesk` in the primary. The messages go over
// node:cluster IPC. A worker's asks go as a group commit: one message in flight at a time, and every ask
// made while it is out goes in the next one.
import { ServiceError } from '../errors.ts';
import { sendOrDrop, type IpcChannel } from '../ipc.ts';
import type { RateClass } from '../protocol/registry.ts';
import {
  assertAllowed, clientKey, rateDecision, type RateRules, type WindowGrant,
} from '../protocol/rate-limit.ts';

/** Asks for grants, worker → primary: `[rate class, client address]` each. */
export interface TakeMessage { type: 'svcd:take'; id: number; takes: [RateClass, string][] }
/**
 * The primary's answer to some of a message's asks, by their index in it (`granted` 0: refused,
 * `state` says how). Asks it can grant at once are answered at once, together; an ask that waits for a
 * recall is answered on its own after it, so what the others were granted reaches the worker before
 * the worker is asked to give back what it holds (IPC keeps the order of messages).
 */
export interface TakenMessage { type: 'svcd:taken'; id: number; grants: Record<number, WindowGrant> }
/** Primary → worker: give back what you hold unused of window `start` of `key`. */
export interface RecallMessage { type: 'svcd:recall'; id: number; key: string; start: number }
/** Worker → primary: the answer to a recall, `n` requests given back. */
export interface ReturnedMessage { type: 'svcd:returned'; id: number; n: number }

export type WindowMessage = TakeMessage | TakenMessage | RecallMessage | ReturnedMessage;

/** The key a grant is held under on both sides: the class and the client's address key. */
export const grantKey = (klass: RateClass, client: string): string => `${klass}|${clientKey(client)}`;

/** The IPC channel to the primary: `process` in a cluster worker. */
export interface PrimaryChannel extends IpcChannel {
  on(event: 'message', listener: (m: unknown) => void): unknown;
  off(event: 'message', listener: (m: unknown) => void): unknown;
}

export interface NodeWindows {
  /**
   * Counts one request of `klass` from `client` in the node's window for its address: resolves when
   * it is admitted; rejects with 429 rate_limited when the window refused it, 503 service_unavailable
   * when the primary did not answer in time or is gone.
   */
  take(klass: RateClass, client: string): Promise<void>;
  /** Fails every take waiting for an answer (the worker is stopping) and stops listening. */
  close(): void;
}

/** Grants a worker holds at once; past it the oldest are dropped (their unused requests are lost). */
const MAX_HELD = 10_000;

interface Held { start: number; endMs: number; left: number }
interface Waiting {
  klass: RateClass; client: string; key: string; done: boolean; resolve(): void; reject(e: unknown): void;
}

export function nodeWindows(
  channel: PrimaryChannel, rules: RateRules, timeoutMs: number, now: () => number = Date.now,
): NodeWindows {
  const held = new Map<string, Held>();
  let queued: Waiting[] | null = null;
  let scheduled = false;
  let inFlight: { id: number; waiting: Waiting[]; left: number; timer: NodeJS.Timeout } | null = null;
  let ids = 0;
  let closed = false;

  const fail = (waiting: Waiting[], message: string) => {
    for (const w of waiting) if (!w.done) w.reject(new ServiceError('service_unavailable', message));
  };
  const hold = (key: string, g: WindowGrant) => {
    const h = held.get(key);
    if (h && h.start === g.start) return void (h.left += g.granted);
    held.delete(key);
    if (held.size >= MAX_HELD) {
      const t = now();
      for (const [k, x] of held) if (x.endMs <= t || x.left === 0) held.delete(k);
      for (const k of held.keys()) {
        if (held.size < MAX_HELD) break;
        held.delete(k);
      }
    }
    held.set(key, { start: g.start, endMs: g.endMs, left: g.granted });
  };
  /** The message in flight is answered or given up: its takes leave, and the queue goes out. */
  const landed = (): Waiting[] => {
    const { waiting, timer } = inFlight!;
    clearTimeout(timer);
    inFlight = null;
    flush();
    return waiting;
  };
  const answer = (w: Waiting, g: WindowGrant | undefined) => {
    w.done = true;
    if (!g || typeof g.granted !== 'number') {
      return w.reject(new ServiceError('internal', 'the core answered a window ask without its grant'));
    }
    if (g.granted > 0) {
      hold(w.key, { ...g, granted: g.granted - 1 }); // one of them is this request's
      return w.resolve();
    }
    try {
      assertAllowed(w.klass, rateDecision(w.klass, rules[w.klass], g.state), 'per address');
      w.reject(new ServiceError('internal', 'the core granted nothing and refused nothing'));
    } catch (e) {
      w.reject(e);
    }
  };
  const onTaken = (a: Partial<TakenMessage>) => {
    // an answer to a message given up on (timed out: its asks were answered 503) is ignored
    const batch = inFlight;
    if (!batch || a.id !== batch.id || !a.grants || typeof a.grants !== 'object') return;
    for (const [i, g] of Object.entries(a.grants)) {
      const w = batch.waiting[Number(i)];
      if (!w || w.done) continue;
      answer(w, g);
      batch.left--;
    }
    if (batch.left === 0) landed();
  };
  const onRecall = (r: Partial<RecallMessage>) => {
    const h = typeof r.key === 'string' ? held.get(r.key) : undefined;
    let n = 0;
    if (h && h.start === r.start) {
      n = h.left;
      h.left = 0;
    }
    sendOrDrop(channel, { type: 'svcd:returned', id: r.id!, n }); // the primary gone: nothing to give back to
  };
  const onMessage = (m: unknown) => {
    const a = m as Partial<WindowMessage> | null;
    if (a?.type === 'svcd:taken') onTaken(a);
    else if (a?.type === 'svcd:recall' && typeof a.id === 'number') onRecall(a);
  };
  channel.on('message', onMessage);

  function flush(): void {
    scheduled = false;
    if (inFlight || !queued) return;
    const waiting = queued;
    queued = null;
    const id = ++ids;
    const timer = setTimeout(() => fail(landed(), 'the core did not answer in time; retry'), timeoutMs);
    inFlight = { id, waiting, left: waiting.length, timer };
    sendOrDrop(channel, { type: 'svcd:take', id, takes: waiting.map((w) => [w.klass, w.client]) }, (e) => {
      if (e && inFlight?.id === id) fail(landed(), 'the core is gone; retry');
    });
  }

  return {
    take(klass, client) {
      if (closed) return Promise.reject(new ServiceError('service_unavailable', 'this gateway process is stopping'));
      const key = grantKey(klass, client);
      const h = held.get(key);
      if (h && h.left > 0 && now() < h.endMs) {
        h.left--;
        return Promise.resolve();
      }
      return new Promise<void>((resolve, reject) => {
        (queued ??= []).push({ klass, client, key, done: false, resolve, reject });
        if (!inFlight && !scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    close() {
      closed = true;
      channel.off('message', onMessage);
      const waiting = [...(queued ?? []), ...(inFlight?.waiting ?? [])];
      queued = null;
      if (inFlight) clearTimeout(inFlight.timer);
      inFlight = null;
      fail(waiting, 'this gateway process is stopping');
    },
  };
}

/** The windows themselves, in the primary: the core's limiter (Core.grantWindow, Core.giveBackWindow). */
export interface WindowBook {
  grant(klass: RateClass, client: string, share: number, max: number): WindowGrant;
  giveBack(klass: RateClass, client: string, start: number, n: number): void;
}

export interface WindowDeskOptions {
  /**
   * windows whose holders are remembered (default 100,000, the limiter's own bound): past it the ended
   * ones go, then the oldest. A window forgotten early is recalled from nobody: its holders' unused
   * requests are lost, so the node admits fewer, never more
   */
  maxHolders?: number;
  /** the live workers' ids */
  workers(): number[];
  send(worker: number, m: TakenMessage | RecallMessage): void;
  /** how long a recall waits for a worker's answer before going on without its requests */
  recallTimeoutMs: number;
  /** most requests granted at once */
  maxGrant?: number;
  /** the clock the book's windows run on (ms; default Date.now) */
  now?: () => number;
}

export interface WindowDesk {
  /** A worker's message (a take or a recall's answer); anything else is ignored. */
  onMessage(worker: number, m: unknown): void;
  /** A worker is gone: what it held is lost for its window, and no recall waits for it. */
  workerGone(worker: number): void;
}

export function windowDesk(book: WindowBook, opts: WindowDeskOptions): WindowDesk {
  const maxGrant = opts.maxGrant ?? 1000;
  const maxHolders = opts.maxHolders ?? 100_000;
  // who may hold unused requests of a window: grant key → its window and the workers granted in it
  // (insertion order is window start order: a new window of a key is deleted and set again)
  const holders = new Map<string, { start: number; endMs: number; workers: Set<number> }>();
  const recalls = new Map<number, { worker: number; done(n: number): void }>();
  const recalling = new Map<string, Promise<number>>();
  let ids = 0;

  /** Asks every worker holding requests of window `start` of `key` to give them back; their sum. */
  const recall = (key: string, start: number): Promise<number> => {
    // a recall already out for this key may bring requests back: wait for it (its caller grants first),
    // then recall what was granted meanwhile
    const running = recalling.get(key);
    if (running) return running.then(() => recall(key, start));
    const h = holders.get(key);
    if (!h || h.start !== start) return Promise.resolve(0);
    const asked = [...h.workers];
    holders.delete(key);
    const p = Promise.all(asked.map((worker) => new Promise<number>((resolve) => {
      const id = ++ids;
      const timer = setTimeout(() => done(0), opts.recallTimeoutMs);
      function done(n: number) {
        clearTimeout(timer);
        recalls.delete(id);
        resolve(n);
      }
      recalls.set(id, { worker, done });
      try {
        opts.send(worker, { type: 'svcd:recall', id, key, start });
      } catch {
        done(0);
      }
    }))).then((ns) => ns.reduce((a, n) => a + n, 0)).finally(() => recalling.delete(key));
    recalling.set(key, p);
    return p;
  };

  const share = () => 1 / (2 * Math.max(1, opts.workers().length));
  /** `worker` was granted requests of `g`'s window of `key`: a recall asks it. */
  const addHolder = (worker: number, key: string, g: WindowGrant) => {
    if (g.granted === 0) return;
    let h = holders.get(key);
    if (!h || h.start !== g.start) {
      holders.delete(key);
      if (holders.size >= maxHolders) forget();
      holders.set(key, h = { start: g.start, endMs: g.endMs, workers: new Set() });
    }
    h.workers.add(worker);
  };
  /** Ended windows go; if that is not enough, the oldest, down to 90% of the bound. */
  const forget = () => {
    const t = (opts.now ?? Date.now)();
    for (const [k, h] of holders) if (h.endMs <= t) holders.delete(k);
    for (const k of holders.keys()) {
      if (holders.size < Math.floor(maxHolders * 0.9)) break;
      holders.delete(k);
    }
  };

  /** An ask the window could not grant: what the workers hold unused comes back, and is granted again. */
  const afterRecall = async (worker: number, klass: RateClass, client: string, start: number) => {
    // whatever came back, and whatever a recall that ran meanwhile brought back
    const key = grantKey(klass, client);
    const back = await recall(key, start);
    if (back > 0) book.giveBack(klass, client, start, back);
    const g = book.grant(klass, client, share(), maxGrant);
    addHolder(worker, key, g);
    return g;
  };

  const onTake = async (worker: number, m: TakeMessage) => {
    const now: Record<number, WindowGrant> = {};
    const later: [number, RateClass, string, number][] = [];
    m.takes.forEach(([klass, client], i) => {
      const g = book.grant(klass, client, share(), maxGrant);
      if (g.granted === 0) return void later.push([i, klass, client, g.start]);
      addHolder(worker, grantKey(klass, client), g);
      now[i] = g;
    });
    if (later.length < m.takes.length) opts.send(worker, { type: 'svcd:taken', id: m.id, grants: now });
    for (const [i, klass, client, start] of later) {
      const g = await afterRecall(worker, klass, client, start);
      opts.send(worker, { type: 'svcd:taken', id: m.id, grants: { [i]: g } });
    }
  };

  return {
    onMessage(worker, m) {
      const a = m as Partial<WindowMessage> | null;
      if (a?.type === 'svcd:returned') {
        const r = recalls.get(a.id!);
        if (r && r.worker === worker) r.done(typeof a.n === 'number' && a.n > 0 ? a.n : 0);
      } else if (a?.type === 'svcd:take' && typeof a.id === 'number' && Array.isArray(a.takes)) {
        void onTake(worker, a as TakeMessage).catch(() => { /* the worker is gone: its asks time out there */ });
      }
    },
    workerGone(worker) {
      for (const h of holders.values()) h.workers.delete(worker);
      for (const r of [...recalls.values()]) if (r.worker === worker) r.done(0);
    },
  };
}
