// Webhooks, as Stripe and Coinbase Commerce send them: an event (invoice.settled, invoice.expired,
// deposit.unmatched, deposit.reorged) is recorded with one delivery per configured endpoint in the same
// ledger batch as what it reports, so a crash never loses one nor invents one; the deliverer (webhook-
// deliverer.ts) POSTs each, signed, and retries with backoff for a day. Delivery is at least once: a
// receiver keys on the event id. Records: the event (`webhook_events`), each delivery's state
// (`webhook_deliveries`, event id!endpoint) and the due ones in due-time order (`webhook_queue`).
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { ServiceError } from '../errors.ts';
import { key, numPart } from '../store/key-codec.ts';
import { put, type Op } from '../store/store.ts';
import { DELIVERY_STATES, type WEBHOOK_EVENTS } from '../protocol/schemas.ts';
import { VERSIONS } from '../protocol/versions.ts';
import type { CoreContext } from './context.ts';

export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** What a receiver gets as the body. */
export interface WebhookEvent {
  id: string;
  type: WebhookEventType;
  created_at: string;
  api_version: string;
  data: Record<string, unknown>;
}

export interface Delivery {
  event_id: string;
  type: WebhookEventType;
  endpoint: string;
  state: DeliveryState;
  attempts: number;
  created_ms: number;
  /** when the next attempt is due (pending) */
  next_ms: number | null;
  last_status: number | null;
  last_error: string | null;
  delivered_at: string | null;
  /** the queue entry that schedules it (pending only) */
  queue_key: string | null;
}

/** The endpoint's part of record keys: its URL's hash (URLs may be long and hold any character). */
export const endpointId = (url: string): string => createHash('sha256').update(url).digest('hex').slice(0, 16);
export const deliveryKey = (eventId: string, url: string): string => key(eventId, endpointId(url));
export const queueKey = (dueMs: number, eventId: string, url: string): string =>
  key(numPart(dueMs), eventId, endpointId(url));

/**
 * The ops that record an event and schedule it to every configured endpoint, now: none when no endpoint is
 * configured (an event nobody would receive is not kept). Written in the batch of what it reports.
 */
export function webhookOps(ctx: CoreContext, type: WebhookEventType, data: Record<string, unknown>, at: Date): Op[] {
  const endpoints = ctx.config.webhooks?.urls ?? [];
  if (!endpoints.length) return [];
  const event: WebhookEvent = {
    id: `evt_${randomBytes(15).toString('base64url')}`, type, created_at: at.toISOString(),
    api_version: VERSIONS.api, data,
  };
  const ops: Op[] = [put('webhook_events', event.id, event)];
  for (const endpoint of endpoints) ops.push(...scheduleOps(event, endpoint, at.getTime(), 0, at.getTime()));
  return ops;
}

/** A delivery (re)scheduled at `dueMs`, after `attempts` tries, first recorded at `createdMs`. */
export function scheduleOps(
  event: Pick<WebhookEvent, 'id' | 'type'>, endpoint: string, dueMs: number, attempts: number, createdMs: number,
  last: Pick<Delivery, 'last_status' | 'last_error'> = { last_status: null, last_error: null },
): Op[] {
  const q = queueKey(dueMs, event.id, endpoint);
  const d: Delivery = {
    event_id: event.id, type: event.type, endpoint, state: 'pending', attempts, created_ms: createdMs,
    next_ms: dueMs, ...last, delivered_at: null, queue_key: q,
  };
  return [
    put('webhook_queue', q, { event_id: event.id, endpoint }),
    put('webhook_deliveries', deliveryKey(event.id, endpoint), d),
  ];
}

/**
 * The `Svc-Signature` header for a body sent at `t` (Unix seconds): `t=<t>,v1=<hex HMAC-SHA256 of "t.body">`,
 * Stripe's scheme, so a receiver checks the timestamp (replays) and the body with one secret.
 */
export function signature(secret: string, t: number, body: string): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

/** How long after an event its deliveries are tried, and the wait before attempt n + 1 (10 s doubling, at most 1 h). */
export const RETRY_FOR_MS = 24 * 3_600_000;
export function backoffMs(attempts: number): number {
  return Math.min(10_000 * 2 ** Math.max(0, attempts - 1), 3_600_000);
}

export interface WebhookFilter { state?: DeliveryState; event_id?: string; limit: number }

/** WEBHOOKS: deliveries, newest events last, filtered; with each event's type. */
export async function listDeliveries(
  ctx: CoreContext, f: WebhookFilter,
): Promise<{ deliveries: Delivery[]; more: boolean }> {
  const range = f.event_id ? { gte: key(f.event_id, ''), lt: key(f.event_id, '\uffff') } : {};
  const out: Delivery[] = [];
  for await (const [, d] of ctx.store.entries<Delivery>('webhook_deliveries', range)) {
    if (f.state && d.state !== f.state) continue;
    if (out.length === f.limit) return { deliveries: out, more: true };
    out.push(d);
  }
  return { deliveries: out, more: false };
}

/**
 * RESEND_WEBHOOK: every delivery of an event scheduled again now, attempts from zero (a receiver that was
 * down for longer than the retries, or one that lost what it got). Pending ones move up to now.
 */
export async function resendEvent(ctx: CoreContext, eventId: string): Promise<{ event_id: string; scheduled: number }> {
  const event = await ctx.store.get<WebhookEvent>('webhook_events', eventId);
  if (!event) throw new ServiceError('not_found', `no webhook event ${eventId}`);
  const nowMs = ctx.now().getTime();
  const ops: Op[] = [];
  const { deliveries } = await listDeliveries(ctx, { event_id: eventId, limit: 1000 });
  for (const d of deliveries) {
    if (d.queue_key) ops.push({ type: 'del', sub: 'webhook_queue', key: d.queue_key });
    ops.push(...scheduleOps(event, d.endpoint, nowMs, 0, nowMs));
  }
  await ctx.store.write(ops);
  return { event_id: eventId, scheduled: deliveries.length };
}
