// The node's per-address windows, seen from a gateway worker of `svcd start` (SVC_GATEWAY_PROCESSES > 0).
// The windows live in the core, the cluster primary (docs/decisions.md "Free quotes answered where
// they arrive"). A worker that answers a request itself, without a core call that the core would count,
// takes that request's count there over node:cluster IPC. Takes go as a group commit: one message in
// flight at a time, and every take made while it is out goes in the next one. Under load one round
// trip serves many requests, and the core does a table lookup per request instead of a whole call.
import { ServiceError } from '../errors.ts';
import type { RateClass } from '../protocol/registry.ts';
import {
  assertAllowed, rateDecision, type RateDecision, type RateRules, type WindowState,
} from '../protocol/rate-limit.ts';

/** A batch of takes, worker → primary: `[rate class, client address]` each. */
export interface TakeMessage { type: 'svcd:take'; id: number; takes: [RateClass, string][] }
/** The primary's answer: one window state per take, in order. */
export interface TakenMessage { type: 'svcd:taken'; id: number; states: WindowState[] }

/** The IPC channel to the primary: `process` in a cluster worker. */
export interface PrimaryChannel {
  send(m: TakeMessage): unknown;
  on(event: 'message', listener: (m: unknown) => void): unknown;
  off(event: 'message', listener: (m: unknown) => void): unknown;
}

export interface NodeWindows {
  /**
   * Counts one request of `klass` from `client` in the node's window for its address; resolves with
   * the decision, or rejects with 429 rate_limited when the window refused it, 503
   * service_unavailable when the primary did not answer in time or is gone.
   */
  take(klass: RateClass, client: string): Promise<RateDecision>;
  /** Fails every take waiting for an answer (the worker is stopping) and stops listening. */
  close(): void;
}

interface Waiting { klass: RateClass; resolve(d: RateDecision): void; reject(e: unknown): void }
interface Batch { takes: [RateClass, string][]; waiting: Waiting[] }

export function nodeWindows(channel: PrimaryChannel, rules: RateRules, timeoutMs: number): NodeWindows {
  // one message in flight at a time, as a group commit: takes made while it is out wait for its answer
  // and then go together (under load one message carries many; alone, a take goes at the end of its turn)
  let queued: Batch | null = null;
  let scheduled = false;
  let inFlight: { id: number; waiting: Waiting[]; timer: NodeJS.Timeout } | null = null;
  let ids = 0;
  let closed = false;

  const fail = (waiting: Waiting[], message: string) => {
    for (const w of waiting) w.reject(new ServiceError('service_unavailable', message));
  };
  /** The message in flight is answered or given up: its takes leave, and the queue goes out. */
  const landed = (): Waiting[] => {
    const { waiting, timer } = inFlight!;
    clearTimeout(timer);
    inFlight = null;
    flush();
    return waiting;
  };
  const onMessage = (m: unknown) => {
    const a = m as Partial<TakenMessage> | null;
    // an answer to a message given up on (timed out: its takes were answered 503) is ignored
    if (a?.type !== 'svcd:taken' || a.id !== inFlight?.id) return;
    landed().forEach((w, i) => {
      const state = a.states?.[i];
      if (!state) return w.reject(new ServiceError('internal', 'the core answered a window take without its state'));
      try {
        w.resolve(assertAllowed(w.klass, rateDecision(w.klass, rules[w.klass], state), 'per address'));
      } catch (e) {
        w.reject(e);
      }
    });
  };
  channel.on('message', onMessage);

  function flush(): void {
    scheduled = false;
    if (inFlight || !queued) return;
    const batch = queued;
    queued = null;
    const id = ++ids;
    const timer = setTimeout(() => fail(landed(), 'the core did not answer in time; retry'), timeoutMs);
    inFlight = { id, waiting: batch.waiting, timer };
    try {
      channel.send({ type: 'svcd:take', id, takes: batch.takes });
    } catch {
      fail(landed(), 'the core is gone; retry');
    }
  }

  return {
    take(klass, client) {
      return new Promise<RateDecision>((resolve, reject) => {
        if (closed) return reject(new ServiceError('service_unavailable', 'this gateway process is stopping'));
        queued ??= { takes: [], waiting: [] };
        queued.takes.push([klass, client]);
        queued.waiting.push({ klass, resolve, reject });
        if (!inFlight && !scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    close() {
      closed = true;
      channel.off('message', onMessage);
      const waiting = [...(queued?.waiting ?? []), ...(inFlight?.waiting ?? [])];
      queued = null;
      if (inFlight) clearTimeout(inFlight.timer);
      inFlight = null;
      fail(waiting, 'this gateway process is stopping');
    },
  };
}
