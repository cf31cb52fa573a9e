// Quotes (DESIGN.md §5): issued → accepted → executed, or expired. QUOTE prices and answers without
// writing anything: the quote_id carries its terms under a node MAC (quote-token.ts). ACCEPT_QUOTE
// moves quote_units from available to reserved in the same synced batch that first stores the quote
// (state accepted); any other state is 409. An accepted quote that expires releases its reservation
// (sweeper, and lazily) and its record is deleted: the id itself says it has expired. Executed
// quotes stay stored (their result is replayed to a repeated request).
import { ServiceError } from '../errors.ts';
import { assertPulseFits, serviceByName, type ServiceName } from '../protocol/services.ts';
import { key, numPart } from '../store/key-codec.ts';
import { del, put, type Op } from '../store/contract.ts';
import type { CoreContext } from './context.ts';
import type { Reads } from './read-ahead.ts';
import { sha256Hex } from '../protocol/canonical.ts';
import { PRICE_VERSION, QUOTE_TERMS_VERSION, price, priorityClass, type Price } from '../protocol/pricing.ts';
import { QUOTE_ID_PREFIX, decodeQuoteId, encodeQuoteId, type QuoteTerms } from './quote-token.ts';
import { quoteTransitions } from '../metrics/metrics.ts';
import type { PaymentRef } from './x402/payments.ts';

/** svc_quote_transitions_total: counted once the state is durable (issued quotes are never stored). */
export const QUOTES_ENTERING = {
  issued: quoteTransitions.at('issued'), accepted: quoteTransitions.at('accepted'),
  executed: quoteTransitions.at('executed'), expired: quoteTransitions.at('expired'),
};

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
  receipt_id?: string;
  /** the x402 payment that paid (and accepted) this quote */
  payment?: PaymentRef;
}

export function quoteView(q: QuoteRecord): Record<string, unknown> {
  const { expires_ms: _e, ...rest } = q;
  return rest;
}

export const expiryKey = (q: QuoteRecord) => key(numPart(q.expires_ms), q.quote_id);

/** The quote record an id stands for: its terms, issued (or expired, or from an older price book). */
function issuedRecord(
  quoteId: string, machineId: string, t: QuoteTerms, nowMs: number,
  p = price(t.service, t.bits, t.bytes, priorityClass(t.priority)),
): QuoteRecord {
  const svc = serviceByName(t.service)!;
  const expiresMs = t.created_ms + t.ttl_ms;
  // a quote priced by an earlier price book is not honoured at a price this node no longer computes
  const stale = p.quote_units !== t.quote_units;
  const expired = stale || nowMs >= expiresMs;
  return {
    quote_id: quoteId, service: t.service, command: svc.command, machine_id: machineId,
    state: expired ? 'expired' : 'issued',
    bits: t.bits, bytes: t.bytes, max_output: t.max_output, priority: t.priority,
    price: { ...p, quote_units: t.quote_units }, quote_units: t.quote_units,
    price_version: PRICE_VERSION, quote_terms_version: QUOTE_TERMS_VERSION,
    input_field: t.input_digest ? svc.quoteInput : null, input_digest: t.input_digest,
    created_at: new Date(t.created_ms).toISOString(), expires_at: new Date(expiresMs).toISOString(),
    expires_ms: expiresMs,
  };
}

const wrongMachine = () => new ServiceError('quote_wrong_machine', 'the quote was issued to another machine_id');

/**
 * The quote `quoteId` as `machineId` sees it: its stored record once accepted, else what the id
 * says. `stored` tells which. 404 for an id this node did not issue, 409 for another machine's.
 */
/** Whether findQuote reads the store for this id: a forged or another machine's id is refused before. */
export function quoteIsLookedUp(ctx: CoreContext, quoteId: string, machineId: string): boolean {
  const d = decodeQuoteId(ctx.identity.quoteKey(), machineId, quoteId);
  return d.ok || (d.why !== 'other_machine' && !quoteId.startsWith(QUOTE_ID_PREFIX));
}

export async function findQuote(
  ctx: CoreContext, quoteId: string, machineId: string, reads: Reads = ctx.store,
): Promise<{ q: QuoteRecord; stored: boolean }> {
  // the id is checked before the store is read: a forged or foreign id costs no read
  const d = decodeQuoteId(ctx.identity.quoteKey(), machineId, quoteId);
  if (!d.ok && d.why === 'other_machine') throw wrongMachine();
  // an id of another form may still name a quote stored before ids carried their terms
  if (!d.ok && quoteId.startsWith(QUOTE_ID_PREFIX)) throw new ServiceError('not_found', `no quote ${quoteId}`);
  const rec = await reads.get<QuoteRecord>('quotes', quoteId);
  if (rec) {
    if (rec.machine_id !== machineId) throw wrongMachine();
    return { q: rec, stored: true };
  }
  if (!d.ok) throw new ServiceError('not_found', `no quote ${quoteId}`);
  return { q: issuedRecord(quoteId, machineId, d.terms, ctx.now().getTime()), stored: false };
}

/** What issuing a quote needs: a clock and the node's quote key (a gateway worker holds both, quote-desk.ts). */
export type QuoteIssuer = Pick<CoreContext, 'now'> & { identity: Pick<CoreContext['identity'], 'quoteKey'> };

export function createQuote(ctx: QuoteIssuer, a: Record<string, unknown>): QuoteRecord {
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
  if (svc.command === 'GET_PULSE') assertPulseFits(bits, maxOutput);
  const priority = (a.priority as QuoteRecord['priority'] | undefined) ?? 'normal';
  const p = price(svc.service, bits, bytes, priorityClass(priority));
  const machineId = a.machine_id as string;
  const terms: QuoteTerms = {
    created_ms: now.getTime(), ttl_ms: a.quote_ttl_ms as number, service: svc.service, priority,
    bits, bytes, max_output: maxOutput, quote_units: p.quote_units, input_digest: digest,
  };
  const quoteId = encodeQuoteId(ctx.identity.quoteKey(), machineId, terms);
  QUOTES_ENTERING.issued.v++;
  return issuedRecord(quoteId, machineId, terms, now.getTime(), p);
}

/**
 * Ops that end a quote that has expired: an accepted one releases its reservation, and its record
 * goes (the id alone says it expired). Caller holds the machine lock.
 */
export async function expireOps(ctx: CoreContext, q: QuoteRecord): Promise<Op[]> {
  const ops: Op[] = [del('quotes', q.quote_id), del('quote_expiry', expiryKey(q))];
  if (q.state === 'accepted') {
    const acct = await ctx.ledger.account(q.machine_id);
    const units = BigInt(q.quote_units);
    const ref = { quote_id: q.quote_id };
    ops.push(...ctx.ledger.change(q.machine_id, acct, 'release', units, -units, ref, ctx.now()).ops);
  }
  return ops;
}

export function isExpired(ctx: CoreContext, q: QuoteRecord): boolean {
  if (q.state === 'expired') return true;
  return (q.state === 'issued' || q.state === 'accepted') && ctx.now().getTime() >= q.expires_ms;
}

const expiredError = (q: QuoteRecord, released: boolean) => new ServiceError(
  'quote_expired',
  `quote expired at ${q.expires_at}${released ? '; its reservation was released' : ''}`,
  { state: 'expired' },
);

/** Ends an expired quote (a stored one is released and deleted) and returns the 409 to throw. */
export async function expiredQuote(ctx: CoreContext, q: QuoteRecord, stored: boolean): Promise<ServiceError> {
  if (stored) {
    await ctx.store.write(await expireOps(ctx, q));
    QUOTES_ENTERING.expired.v++;
  }
  return expiredError(q, stored && q.state === 'accepted');
}

/** `seal`: ops to write in the same batch, given the accepted quote (an idempotent request's record). */
export async function acceptQuote(
  ctx: CoreContext, quoteId: string, machineId: string, seal?: (q: QuoteRecord) => Op[],
): Promise<QuoteRecord> {
  // the account as the lock read it: nothing below writes before the accept's own batch
  return ctx.ledger.withMachine(machineId, async (_held, acct, reads) => {
    const { q, stored } = await findQuote(ctx, quoteId, machineId, reads);
    if (isExpired(ctx, q)) throw await expiredQuote(ctx, q, stored);
    // accepting again is a state conflict (SPEC "States", rule 2); a retry that must be safe
    // carries an idempotency_key, whose replay returns the first reply
    if (q.state !== 'issued') {
      throw new ServiceError('quote_not_issued', `quote is ${q.state}, not issued`, { state: q.state });
    }
    const units = BigInt(q.quote_units);
    if (acct.available < units) {
      const details = { available_units: acct.available.toString(), quote_units: units.toString() };
      const msg = `available ${acct.available} units, quote needs ${units}`;
      throw new ServiceError('insufficient_balance', msg, details);
    }
    const now = ctx.now();
    const next: QuoteRecord = { ...q, state: 'accepted', accepted_at: now.toISOString() };
    const { ops } = ctx.ledger.change(machineId, acct, 'reserve', -units, units, { quote_id: q.quote_id }, now);
    await ctx.store.write([
      put('quotes', q.quote_id, next),
      put('quote_expiry', expiryKey(next), { quote_id: q.quote_id, machine_id: machineId }),
      ...ops,
      ...(seal?.(next) ?? []),
    ]);
    QUOTES_ENTERING.accepted.v++;
    return next;
  });
}

/** Releases every accepted quote whose expiry has passed; returns how many. */
export async function sweepExpired(ctx: CoreContext): Promise<number> {
  const due: { quote_id: string; machine_id: string }[] = [];
  const range = { lt: key(numPart(ctx.now().getTime()), '\uffff') };
  for await (const [, v] of ctx.store.entries('quote_expiry', range)) {
    due.push(v as { quote_id: string; machine_id: string });
  }
  let released = 0;
  for (const d of due) {
    released += await ctx.ledger.withMachine(d.machine_id, async () => {
      const q = await ctx.store.get<QuoteRecord>('quotes', d.quote_id);
      if (!q || q.state !== 'accepted' || !isExpired(ctx, q)) return 0;
      await ctx.store.write(await expireOps(ctx, q));
      QUOTES_ENTERING.expired.v++;
      return 1;
    });
  }
  return released;
}
