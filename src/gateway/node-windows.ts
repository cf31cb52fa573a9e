// The node's per-address windows, seen from a gateway worker of `svcd start` (SVC_GATEWAY_PROCESSES > 0).
// The windows live in the core, the cluster primary (docs/decisions.md "Free quotes answered where
// they arrive"). A worker that answers a request itself, without a core call that the core would count,
// takes that request's count there over node:cluster IPC. Every take made in one turn of the event
// loop goes in one message and comes back in one answer: under load one round trip serves many
// requests, and the core does a table lookup per request instead of a whole call.
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

export function nodeWindows(channel: PrimaryChannel, rules: RateRules, timeoutMs: number): NodeWindows {
  let next: { takes: [RateClass, string][]; waiting: Waiting[] } | null = null;
  const sent = new Map<number, { waiting: Waiting[]; timer: NodeJS.Timeout }>();
  let ids = 0;
  let closed = false;

  const fail = (waiting: Waiting[], message: string) => {
    for (const w of waiting) w.reject(new ServiceError('service_unavailable', message));
  };
  const onMessage = (m: unknown) => {
    const a = m as Partial<TakenMessage> | null;
    if (a?.type !== 'svcd:taken' || typeof a.id !== 'number') return;
    const batch = sent.get(a.id);
    if (!batch) return; // timed out meanwhile: its requests were answered 503
    sent.delete(a.id);
    clearTimeout(batch.timer);
    batch.waiting.forEach((w, i) => {
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

  const flush = () => {
    const batch = next!;
    next = null;
    if (closed) return fail(batch.waiting, 'this gateway process is stopping');
    const id = ++ids;
    const timer = setTimeout(() => {
      sent.delete(id);
      fail(batch.waiting, 'the core did not answer in time; retry');
    }, timeoutMs);
    sent.set(id, { waiting: batch.waiting, timer });
    try {
      channel.send({ type: 'svcd:take', id, takes: batch.takes });
    } catch {
      sent.delete(id);
      clearTimeout(timer);
      fail(batch.waiting, 'the core is gone; retry');
    }
  };

  return {
    take(klass, client) {
      return new Promise<RateDecision>((resolve, reject) => {
        if (closed) return reject(new ServiceError('service_unavailable', 'this gateway process is stopping'));
        if (!next) {
          next = { takes: [], waiting: [] };
          setImmediate(flush);
        }
        next.takes.push([klass, client]);
        next.waiting.push({ klass, resolve, reject });
      });
    },
    close() {
      closed = true;
      channel.off('message', onMessage);
      for (const [id, batch] of sent) {
        sent.delete(id);
        clearTimeout(batch.timer);
        fail(batch.waiting, 'this gateway process is stopping');
      }
    },
  };
}
