// Driving one x402 payment's record to its end (payments.ts has the states): sign the settlement and
// record its hash, send it, and watch the chain until it is deep enough (settled: the credit and the
// quote's acceptance in one batch) or can no longer happen (failed: nothing charged). Whoever holds the
// record drives it — the request that created it, a retry, another node, or this node after a restart —
// and every write is a compare-and-set on what was read, so two drivers can never both move it. What
// decides an unclear case is the chain: the nonce's state, and the transaction that used it.
import { ServiceError } from '../../errors.ts';
import { x402Transitions } from '../../metrics/metrics.ts';
import { isStoreConflict, put, type Op } from '../../store/store.ts';
import type { CoreContext } from '../context.ts';
import { expiryKey, findQuote, type QuoteRecord } from '../quotes.ts';
import { WouldRevert, type X402Chain } from './chain.ts';
import type { X402Config } from './config.ts';
import { moveOp, paymentRef, type X402Payment } from './payments.ts';

/** How long a paid quote stays accepted after its settlement, whatever its own expiry: for a retry to run it. */
export const PAID_QUOTE_HOLD_MS = 10 * 60_000;
/** A settlement is sent only while its authorization stays valid this long: it has to be mined inside it. */
export const SEND_MARGIN_S = 6;
/**
 * A payment fails as expired only this long after its validBefore by this node's clock: a block stamped before
 * it by a chain whose clock lags may still come that late (until then the record waits).
 */
const EXPIRY_GRACE_S = 15;
/** A record left `submitting` this long by another driver is taken over (it never sends before recording). */
const ABANDONED_MS = 30_000;

export interface Settler {
  ctx: CoreContext;
  cfg: X402Config;
  chain: X402Chain;
  /** one settlement signed and sent at a time: the relayer's transaction nonce is its pending count */
  relayer: <T>(fn: () => Promise<T>) => Promise<T>;
}

const ended = (r: X402Payment) => r.state === 'settled' || r.state === 'executed' || r.state === 'failed';

async function reread(s: Settler, id: string): Promise<X402Payment> {
  const r = await s.ctx.store.get<X402Payment>('x402_payments', id);
  if (!r) throw new ServiceError('internal', `x402 payment ${id} vanished`);
  return r;
}

/** Writes `ops` with the record's move; a conflict (another driver moved it) answers the record as it is now. */
async function move(s: Settler, was: X402Payment, next: Partial<X402Payment>, ops: Op[] = []): Promise<X402Payment> {
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

const fail = (s: Settler, r: X402Payment, reason: string, message: string) =>
  move(s, r, { state: 'failed', failure: { reason, message } });

/** Signs the settlement, records its hash, then sends it. A refusal before sending fails the payment. */
export async function submit(s: Settler, r: X402Payment): Promise<X402Payment> {
  return s.relayer(async () => {
    let signed;
    try {
      signed = await s.chain.prepare(r.authorization, r.signature);
    } catch (e) {
      if (e instanceof WouldRevert) {
        // close to its expiry the token may refuse it for that: the expiry decides, not this refusal
        if (tooLate(s, r)) return r;
        return fail(s, r, 'settlement_refused', `the token refuses the transfer: ${e.message}`);
      }
      throw e;
    }
    const next = await move(s, r, { state: 'submitted', tx_hash: signed.hash },
      [put('x402_txs', signed.hash, { payment_id: r.payment_id })]);
    if (next.tx_hash !== signed.hash) return next;
    // an error here leaves the outcome to the chain: the next look finds it mined, pending or unknown
    await s.chain.send(signed.raw).catch(() => undefined);
    return next;
  });
}

/**
 * The ops of a settlement: the credit of what arrived, and the paid quote accepted (its reservation) with
 * its hold extended, under the machine's lock; a quote no longer issued (its machine's token paid it
 * meanwhile) leaves the credit on the balance.
 */
async function settle(s: Settler, r: X402Payment, blockNumber: number): Promise<X402Payment> {
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

/** One look at the chain for a record that has not ended: it moves, or is returned as it was. */
export async function step(s: Settler, r: X402Payment): Promise<X402Payment> {
  const nowMs = s.ctx.now().getTime();
  if (r.state === 'submitting') {
    const mine = r.node_id === s.ctx.identity.nodeId;
    if (!mine && nowMs - Date.parse(r.updated_at) < ABANDONED_MS) return r;
    return unsent(s, r, nowMs);
  }
  if (r.state !== 'submitted' || !r.tx_hash) return r;
  const mined = await s.chain.mined(r.tx_hash, r.authorization);
  if (mined) {
    if (mined.status === 'reverted') return fail(s, r, 'settlement_reverted', `transaction ${r.tx_hash} reverted`);
    if (!mined.paid) return fail(s, r, 'transfer_missing', `transaction ${r.tx_hash} moved no such transfer`);
    if (mined.blockNumber > await s.chain.trustedHead(mined.blockNumber)) return r;
    return settle(s, r, mined.blockNumber);
  }
  if (await s.chain.known(r.tx_hash)) return r;
  return unsent(s, r, nowMs);
}

/**
 * A record whose transaction the chain does not know: the nonce decides. Used: the transaction that used
 * it is the one to watch (a settlement sent before a crash, or by another node). Unused: sent again while
 * the authorization is valid, failed once it is not.
 */
async function unsent(s: Settler, r: X402Payment, nowMs: number): Promise<X402Payment> {
  const a = r.authorization;
  if (await s.chain.authorizationUsed(a.from, a.nonce)) {
    const hash = await s.chain.usedBy(a.from, a.nonce, r.from_block);
    if (!hash) return r;
    return move(s, r, { state: 'submitted', tx_hash: hash }, [put('x402_txs', hash, { payment_id: r.payment_id })]);
  }
  if (nowMs / 1000 >= Number(a.validBefore) + EXPIRY_GRACE_S) {
    return fail(s, r, 'authorization_expired', 'the settlement was not mined before the authorization\'s validBefore');
  }
  return tooLate(s, r) ? r : submit(s, r);
}

/** Too close to validBefore to send a settlement (again): it could not be mined in time. */
const tooLate = (s: Settler, r: X402Payment) =>
  s.ctx.now().getTime() / 1000 >= Number(r.authorization.validBefore) - SEND_MARGIN_S;

/** Drives the record until it ends or `deadlineMs` passes (then returned as it is: still running). */
export async function drive(s: Settler, r: X402Payment, deadlineMs: number): Promise<X402Payment> {
  let cur = r;
  while (!ended(cur)) {
    const was = cur.state;
    cur = await step(s, cur);
    if (ended(cur) || Date.now() >= deadlineMs) return cur;
    // a move (just sent) is looked at again at once: a fast chain has mined it already
    if (cur.state === was) await new Promise((res) => setTimeout(res, s.cfg.pollMs));
  }
  return cur;
}
