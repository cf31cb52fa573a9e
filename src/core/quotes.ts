// Quotes (DESIGN.md §5): issued → accepted → executed, or expired. QUOTE prices and stores (the
// request shape per service is the schema's; here only what a schema cannot say); ACCEPT_QUOTE
// moves quote_units from available to reserved in the same batch as the state change, and any
// other state is 409; expiry of an accepted quote releases the reservation (sweeper, and lazily).
import { ServiceError } from '../errors.ts';
import { pulseOutputBytes, serviceByName, type ServiceName } from '../protocol/services.ts';
import { key, numPart } from '../store/key-codec.ts';
import { del, put, type Op } from '../store/store.ts';
import type { CoreContext } from './context.ts';
import { newId } from './ids.ts';
import { sha256Hex } from '../protocol/canonical.ts';
import { PRICE_VERSION, QUOTE_TERMS_VERSION, price, priorityClass, type Price } from '../protocol/pricing.ts';

export type QuoteState = 'issued' | 'accepted' | 'executed' | 'expired';

export interface QuoteRecord {
  quote_id: string;
  service: ServiceName;
  command: string;
  machine_id: string;
  state: QuoteState;
  bits: number;
  bytes: number;
  max_output: number;
  priority: 'low' | 'normal' | 'high';
  price: Price;
  quote_units: number;
  price_version: string;
  quote_terms_version: number;
  input_field: 'plain_hex' | 'packet_hex' | null;
  input_digest: string | null;
  created_at: string;
  expires_at: string;
  expires_ms: number;
  accepted_at?: string;
  executed_at?: string;
  expired_at?: string;
  receipt_id?: string;
}

export function quoteView(q: QuoteRecord): Record<string, unknown> {
  const { expires_ms: _e, ...rest } = q;
  return rest;
}

export const expiryKey = (q: QuoteRecord) => key(numPart(q.expires_ms), q.quote_id);

export async function loadQuote(ctx: CoreContext, quoteId: string): Promise<QuoteRecord> {
  const q = (await ctx.store.get('quotes', quoteId)) as unknown as QuoteRecord | undefined;
  if (!q) throw new ServiceError('not_found', `no quote ${quoteId}`);
  return q;
}

export async function createQuote(ctx: CoreContext, a: Record<string, unknown>): Promise<QuoteRecord> {
  const svc = serviceByName(a.service as string)!;
  const now = ctx.now();
  // the schema guarantees: bytes given, or defaulted, or (MAKE_BCT/VERIFY_BCT) the input itself
  const field = svc.quoteInput;
  const h = field ? (a[field] as string | undefined) : undefined;
  let bytes = (a.bytes as number | undefined) ?? 0;
  let digest: string | null = null;
  if (field && h !== undefined) {
    const buf = Buffer.from(h, 'hex');
    if (a.bytes !== undefined && a.bytes !== buf.length) {
      const msg = `bytes (${a.bytes as number}) does not match ${field} (${buf.length} bytes)`;
      throw new ServiceError('invalid_request', msg, { field: 'bytes' });
    }
    const max = svc.bytes?.max ?? 0;
    if (buf.length > max) {
      const msg = `${field} is ${buf.length} bytes; ${svc.service} takes at most ${max}`;
      throw new ServiceError('invalid_request', msg, { field });
    }
    digest = sha256Hex(buf);
    bytes = buf.length;
  }
  const bits = a.bits as number;
  const maxOutput = a.max_output as number;
  // GET_PULSE returns exactly ceil(bits/8) bytes: a smaller max_output cannot be honoured, and a
  // cut output would no longer recompute from the pulse seed, so the quote is refused instead
  if (svc.command === 'GET_PULSE' && pulseOutputBytes(bits) > maxOutput) {
    const msg = `bits ${bits} produce ${pulseOutputBytes(bits)} bytes of output, above max_output ${maxOutput}`;
    throw new ServiceError('invalid_request', msg, { field: 'max_output' });
  }
  const priority = (a.priority as QuoteRecord['priority'] | undefined) ?? 'normal';
  const p = price(svc.service, bits, bytes, priorityClass(priority));
  const ttl = a.quote_ttl_ms as number;
  const expiresMs = now.getTime() + ttl;
  const q: QuoteRecord = {
    quote_id: newId('q'), service: svc.service, command: svc.command, machine_id: a.machine_id as string, state: 'issued',
    bits, bytes, max_output: maxOutput, priority, price: p, quote_units: p.quote_units,
    price_version: PRICE_VERSION, quote_terms_version: QUOTE_TERMS_VERSION,
    input_field: digest ? field : null, input_digest: digest,
    created_at: now.toISOString(), expires_at: new Date(expiresMs).toISOString(), expires_ms: expiresMs,
  };
  await ctx.store.write([put('quotes', q.quote_id, q as unknown as Record<string, unknown>)]);
  return q;
}

/** Ops that expire a quote, releasing its reservation when it was accepted. Caller holds the machine lock. */
export async function expireOps(ctx: CoreContext, q: QuoteRecord): Promise<Op[]> {
  const now = ctx.now();
  const next: QuoteRecord = { ...q, state: 'expired', expired_at: now.toISOString() };
  const ops: Op[] = [put('quotes', q.quote_id, next as unknown as Record<string, unknown>)];
  if (q.state === 'accepted') {
    const acct = await ctx.ledger.account(q.machine_id);
    const units = BigInt(q.quote_units);
    ops.push(...ctx.ledger.change(q.machine_id, acct, 'release', units, -units, { quote_id: q.quote_id }, now).ops);
    ops.push(del('quote_expiry', expiryKey(q)));
  }
  return ops;
}

export function isExpired(ctx: CoreContext, q: QuoteRecord): boolean {
  return q.state === 'expired' || ((q.state === 'issued' || q.state === 'accepted') && ctx.now().getTime() >= q.expires_ms);
}

export async function acceptQuote(ctx: CoreContext, quoteId: string, machineId: string): Promise<QuoteRecord> {
  return ctx.ledger.withMachine(machineId, async () => {
    const q = await loadQuote(ctx, quoteId);
    if (q.machine_id !== machineId) throw new ServiceError('quote_wrong_machine', 'the quote was issued to another machine_id');
    if (isExpired(ctx, q)) {
      if (q.state !== 'expired') await ctx.store.write(await expireOps(ctx, q));
      throw new ServiceError('quote_expired', `quote expired at ${q.expires_at}`, { state: 'expired' });
    }
    // accepting again is a state conflict (SPEC "States", rule 2); a retry that must be safe
    // carries an idempotency_key, whose replay returns the first reply
    if (q.state !== 'issued') {
      throw new ServiceError('quote_not_issued', `quote is ${q.state}, not issued`, { state: q.state });
    }
    const acct = await ctx.ledger.account(machineId);
    const units = BigInt(q.quote_units);
    if (acct.available < units) {
      throw new ServiceError('insufficient_balance', `available ${acct.available} units, quote needs ${units}`, { available_units: acct.available.toString(), quote_units: units.toString() });
    }
    const now = ctx.now();
    const next: QuoteRecord = { ...q, state: 'accepted', accepted_at: now.toISOString() };
    const { ops } = ctx.ledger.change(machineId, acct, 'reserve', -units, units, { quote_id: q.quote_id }, now);
    await ctx.store.write([
      put('quotes', q.quote_id, next as unknown as Record<string, unknown>),
      put('quote_expiry', expiryKey(next), { quote_id: q.quote_id, machine_id: machineId }),
      ...ops,
    ]);
    return next;
  });
}

/** Releases every accepted quote whose expiry has passed; returns how many. */
export async function sweepExpired(ctx: CoreContext): Promise<number> {
  const due: { quote_id: string; machine_id: string }[] = [];
  for await (const [, v] of ctx.store.entries('quote_expiry', { lt: key(numPart(ctx.now().getTime()), '\uffff') })) {
    due.push(v as { quote_id: string; machine_id: string });
  }
  let released = 0;
  for (const d of due) {
    released += await ctx.ledger.withMachine(d.machine_id, async () => {
      const q = (await ctx.store.get('quotes', d.quote_id)) as unknown as QuoteRecord | undefined;
      if (!q || q.state !== 'accepted' || !isExpired(ctx, q)) return 0;
      await ctx.store.write(await expireOps(ctx, q));
      return 1;
    });
  }
  return released;
}
