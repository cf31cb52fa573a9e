// Sends the webhook deliveries that are due (webhooks.ts): a POST of the event's JSON, signed, with a 10 s
// timeout; a 2xx is delivered, anything else is tried again after a backoff until a day has passed, then
// failed (RESEND_WEBHOOK schedules it again). Each outcome is written compared with the queue entry read,
// so two nodes that both picked a delivery record one outcome; the receiver may still see it twice (at
// least once, as every webhook sender). On a shared store one node delivers at a time (the `webhooks` lease).
import { delIf, isStoreConflict, put, type Op } from '../store/store.ts';
import type { CoreContext } from './context.ts';
import { leaseFor, type Lease } from './leases.ts';
import {
  RETRY_FOR_MS, backoffMs, deliveryKey, scheduleOps, signature, type Delivery, type WebhookEvent,
} from './webhooks.ts';
import { key, numPart } from '../store/key-codec.ts';
import { webhookDeliveries } from '../metrics/metrics.ts';

const OUTCOMES = {
  delivered: webhookDeliveries.at('delivered'), retried: webhookDeliveries.at('retried'),
  failed: webhookDeliveries.at('failed'),
};
/** Deliveries sent at once in one pass. */
const BATCH = 16;
const TIMEOUT_MS = 10_000;
/** What of a failed answer is kept to show the operator. */
const ERROR_CHARS = 200;

export interface PassResult { delivered: number; retried: number; failed: number }

export function webhookLease(ctx: CoreContext): Lease {
  return leaseFor(ctx, 'webhooks', 30_000);
}

/** One attempt: the answer's status, or why there was none. */
async function post(url: string, secret: string, event: WebhookEvent, nowMs: number) {
  const body = JSON.stringify(event);
  try {
    const res = await fetch(url, {
      method: 'POST', body, redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS),
      headers: {
        'content-type': 'application/json', 'user-agent': 'svc-webhooks/1', 'svc-event-id': event.id,
        'svc-event-type': event.type, 'svc-signature': signature(secret, Math.floor(nowMs / 1000), body),
      },
    });
    const text = res.ok ? '' : (await res.text().catch(() => '')).slice(0, ERROR_CHARS);
    await res.body?.cancel().catch(() => {});
    return { ok: res.ok, status: res.status, error: res.ok ? null : `HTTP ${res.status}${text ? `: ${text}` : ''}` };
  } catch (e) {
    const timedOut = e instanceof Error && e.name === 'TimeoutError';
    const why = timedOut ? `no answer in ${TIMEOUT_MS} ms` : e instanceof Error ? e.message : String(e);
    return { ok: false, status: null, error: why.slice(0, ERROR_CHARS) };
  }
}

/** The ops that record one attempt's outcome (the queue entry `q`, as read, goes either way). */
function outcomeOps(
  d: Delivery, event: WebhookEvent, q: { k: string; v: Record<string, unknown> }, r: Awaited<ReturnType<typeof post>>,
  nowMs: number,
): { ops: Op[]; kind: keyof PassResult } {
  const attempts = d.attempts + 1;
  const done = delIf('webhook_queue', q.k, q.v);
  if (r.ok) {
    const rec: Delivery = {
      ...d, state: 'delivered', attempts, next_ms: null, last_status: r.status, last_error: null,
      delivered_at: new Date(nowMs).toISOString(), queue_key: null,
    };
    return { ops: [done, put('webhook_deliveries', deliveryKey(d.event_id, d.endpoint), rec)], kind: 'delivered' };
  }
  const last = { last_status: r.status, last_error: r.error };
  const next = nowMs + backoffMs(attempts);
  if (next >= d.created_ms + RETRY_FOR_MS) {
    const rec: Delivery = { ...d, state: 'failed', attempts, next_ms: null, ...last, queue_key: null };
    return { ops: [done, put('webhook_deliveries', deliveryKey(d.event_id, d.endpoint), rec)], kind: 'failed' };
  }
  return { ops: [done, ...scheduleOps(event, d.endpoint, next, attempts, d.created_ms, last)], kind: 'retried' };
}

/** One pass: the due deliveries (at most BATCH), each tried once. Nothing is due: nothing is read but the queue. */
export async function deliverDue(ctx: CoreContext): Promise<PassResult> {
  const secret = ctx.config.webhooks?.secret;
  const result: PassResult = { delivered: 0, retried: 0, failed: 0 };
  if (!secret) return result;
  const nowMs = ctx.now().getTime();
  const due: { k: string; v: Record<string, unknown> }[] = [];
  for await (const [k, v] of ctx.store.entries('webhook_queue', { lt: key(numPart(nowMs + 1), ''), limit: BATCH })) {
    due.push({ k, v });
  }
  await Promise.all(due.map(async (q) => {
    const { event_id: eventId, endpoint } = q.v as { event_id: string; endpoint: string };
    const [event, d] = await Promise.all([
      ctx.store.get<WebhookEvent>('webhook_events', eventId),
      ctx.store.get<Delivery>('webhook_deliveries', deliveryKey(eventId, endpoint)),
    ]);
    if (!event || !d || d.queue_key !== q.k) {
      await ctx.store.write([delIf('webhook_queue', q.k, q.v)]).catch(() => {}); // a stale entry
      return;
    }
    const out = outcomeOps(d, event, q, await post(endpoint, secret, event, nowMs), nowMs);
    try {
      await ctx.store.write(out.ops);
      result[out.kind]++;
      OUTCOMES[out.kind].v++;
    } catch (e) {
      if (!isStoreConflict(e)) throw e; // another node recorded this attempt first
    }
  }));
  return result;
}

/** The deliverer's loop: a pass every `everyMs` while this node holds the lease, at once again after a full one. */
export class WebhookDeliverer {
  #timer: NodeJS.Timeout | null = null;
  #pass: Promise<unknown> = Promise.resolve();
  #stopped = false;
  readonly #lease: Lease;

  private constructor(readonly ctx: CoreContext, readonly everyMs: number) {
    this.#lease = webhookLease(ctx);
  }

  /** Starts delivering when webhooks are configured (null otherwise). */
  static start(ctx: CoreContext, everyMs = 1000): WebhookDeliverer | null {
    if (!ctx.config.webhooks) return null;
    const d = new WebhookDeliverer(ctx, everyMs);
    d.#schedule(0);
    return d;
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      const next = (full: boolean) => this.#schedule(full ? 0 : this.everyMs);
      this.#pass = this.#once().then(next, () => next(false));
    }, ms);
    this.#timer.unref();
  }

  async #once(): Promise<boolean> {
    if (!(await this.#lease.hold())) return false;
    const r = await deliverDue(this.ctx);
    return r.delivered + r.retried + r.failed >= BATCH;
  }

  /** Stops after the pass in progress (its outcomes written); another node takes over at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#pass.catch(() => {});
    await this.#lease.release().catch(() => {});
  }
}
