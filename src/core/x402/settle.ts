// Driving one x402 payment's record to its end (payments.ts has the states), whatever the chain: its rail
// (rail.ts) signs, sends and watches the settlement; this module holds what every rail does the same way — a
// record moved by compare-and-set on what was read (two drivers can never both move it), a failure that charges
// nothing, and the settlement itself: the credit of what arrived and the paid quote's acceptance in one batch.
// Whoever holds the record drives it — the request that created it, a retry, another node, or this node after a
// restart. What decides an unclear case is the chain, through the rail.
import { ServiceError } from '../../errors.ts';
import { x402Transitions } from '../../metrics/metrics.ts';
import { isStoreConflict, put, type Op } from '../../store/store.ts';
import { expiryKey, findQuote, type QuoteRecord } from '../quotes.ts';
import { moveOp, paymentRef, type X402Payment } from './payments.ts';
import type { Settler, X402Rail } from './rail.ts';

/** How long a paid quote stays accepted after its settlement, whatever its own expiry: for a retry to run it. */
export const PAID_QUOTE_HOLD_MS = 10 * 60_000;
/** A record left `submitting` this long by another driver is taken over (no rail sends before recording). */
const ABANDONED_MS = 30_000;

const ended = (r: X402Payment) => r.state === 'settled' || r.state === 'executed' || r.state === 'failed';

async function reread(s: Settler, id: string): Promise<X402Payment> {
  const r = await s.ctx.store.get<X402Payment>('x402_payments', id);
  if (!r) throw new ServiceError('internal', `x402 payment ${id} vanished`);
  return r;
}

/** Writes `ops` with the record's move; a conflict (another driver moved it) answers the record as it is now. */
async function move(
  s: Settler, was: X402Payment, next: Partial<X402Payment>, ops: Op[] = [],
): Promise<X402Payment> {
  const { rec, op } = moveOp(was, next, s.ctx.now());
  try {
    await s.ctx.store.write([op, ...ops]);
    if (rec.state !== was.state) x402Transitions.at(rec.state).v++;
    return rec;
  } catch (e) {
    if (isStoreConflict(e)) return reread(s, was.payment_id);
    throw e;
  }
}

export const fail = (s: Settler, r: X402Payment, reason: string, message: string) =>
  move(s, r, { state: 'failed', failure: { reason, message } });

/** The settlement's transaction (hash or signature) recorded, with its index, before it is sent. */
export const recordSent = (s: Settler, r: X402Payment, tx: string, more: Partial<X402Payment> = {}) =>
  move(s, r, { state: 'submitted', tx_hash: tx, ...more }, [put('x402_txs', tx, { payment_id: r.payment_id })]);

/** A record `submitting` that this driver may sign: its own, or one another driver left without progress. */
export function mayTakeOver(s: Settler, r: X402Payment): boolean {
  return r.node_id === s.ctx.identity.nodeId || s.ctx.now().getTime() - Date.parse(r.updated_at) >= ABANDONED_MS;
}

/**
 * The ops of a settlement: the credit of what arrived, and the paid quote accepted (its reservation) with
 * its hold extended, under the machine's lock; a quote no longer issued (its machine's token paid it
 * meanwhile) leaves the credit on the balance.
 */
export async function settle(s: Settler, r: X402Payment, blockNumber: number): Promise<X402Payment> {
  const { ctx } = s;
  return ctx.ledger.withMachine(r.machine_id, async (_held, acct, reads) => {
    const cur = await reads.get<X402Payment>('x402_payments', r.payment_id);
    if (!cur || cur.state !== 'submitted' || cur.tx_hash !== r.tx_hash) return cur ?? reread(s, r.payment_id);
    const now = ctx.now();
    const paid = { ...cur, block_number: blockNumber };
    const credit = ctx.ledger.change(r.machine_id, acct, 'credit', BigInt(r.units), 0n,
      { x402: r.payment_id, rail: `x402:${r.network}`, tx: r.tx_hash ?? '' }, now);
    const ops = [...credit.ops];
    const { q } = await findQuote(ctx, r.quote_id, r.machine_id, reads);
    const payable = q.state === 'issued' || (q.state === 'expired' && q.expires_ms > Date.parse(r.created_at));
    if (payable) {
      const units = BigInt(q.quote_units);
      const ref = { quote_id: q.quote_id };
      const held = ctx.ledger.change(r.machine_id, credit.next, 'reserve', -units, units, ref, now);
      const expiresMs = Math.max(q.expires_ms, now.getTime() + PAID_QUOTE_HOLD_MS);
      const accepted: QuoteRecord & { payment: ReturnType<typeof paymentRef> } = {
        ...q, state: 'accepted', accepted_at: now.toISOString(), expires_ms: expiresMs,
        expires_at: new Date(expiresMs).toISOString(), payment: paymentRef(paid),
      };
      ops.push(put('quotes', q.quote_id, accepted),
        put('quote_expiry', expiryKey(accepted), { quote_id: q.quote_id, machine_id: r.machine_id }), ...held.ops);
    }
    // not move(): a conflict here may be the machine's journal moved by another node, and withMachine runs the
    // whole settlement again, reading the record afresh (settled by then: returned as it is)
    const { rec, op } = moveOp(cur, { state: 'settled', block_number: blockNumber }, now);
    await ctx.store.write([op, ...ops]);
    x402Transitions.at('settled').v++;
    return rec;
  });
}

/** Drives the record through its rail until it ends or `deadlineMs` passes (then returned as it is: still running). */
export async function drive(s: Settler, rail: X402Rail, r: X402Payment, deadlineMs: number): Promise<X402Payment> {
  let cur = r;
  while (!ended(cur)) {
    const was = cur.state;
    cur = await rail.step(s, cur);
    if (ended(cur) || Date.now() >= deadlineMs) return cur;
    // a move (just sent) is looked at again at once: a fast chain has mined it already
    if (cur.state === was) await new Promise((res) => setTimeout(res, s.pollMs));
  }
  return cur;
}
