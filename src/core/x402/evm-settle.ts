// Settling an EVM payment (the EVM rail's submit and step): the relayer signs the transferWithAuthorization
// and its hash is recorded before it is sent; then the chain is watched until the transaction is deep enough
// (settled) or can no longer happen (failed: nothing charged). What decides an unclear case is the chain: the
// nonce's state, and the transaction that used it.
import type { X402Payment } from './payments.ts';
import { WouldRevert, type X402Chain } from './chain.ts';
import type { Settler } from './rail.ts';
import { fail, mayTakeOver, recordSent, settle } from './settle.ts';

/** A settlement is sent only while its authorization stays valid this long: it has to be mined inside it. */
export const SEND_MARGIN_S = 6;
/**
 * A payment fails as expired only this long after its validBefore by this node's clock: a block stamped before
 * it by a chain whose clock lags may still come that late (until then the record waits).
 */
const EXPIRY_GRACE_S = 15;

export interface EvmSettling {
  chain: X402Chain;
  /** one settlement signed and sent at a time: the relayer's transaction nonce is its pending count */
  relayer: <T>(fn: () => Promise<T>) => Promise<T>;
}

/** Signs the settlement, records its hash, then sends it. A refusal before sending fails the payment. */
export async function submit(e: EvmSettling, s: Settler, r: X402Payment): Promise<X402Payment> {
  return e.relayer(async () => {
    let signed;
    try {
      signed = await e.chain.prepare(r.authorization!, r.signature!);
    } catch (err) {
      if (err instanceof WouldRevert) {
        // close to its expiry the token may refuse it for that: the expiry decides, not this refusal
        if (tooLate(s, r)) return r;
        return fail(s, r, 'settlement_refused', `the token refuses the transfer: ${err.message}`);
      }
      throw err;
    }
    const next = await recordSent(s, r, signed.hash);
    if (next.tx_hash !== signed.hash) return next;
    // an error here leaves the outcome to the chain: the next look finds it mined, pending or unknown
    await e.chain.send(signed.raw).catch(() => undefined);
    return next;
  });
}

/** One look at the chain for a record that has not ended: it moves, or is returned as it was. */
export async function step(e: EvmSettling, s: Settler, r: X402Payment): Promise<X402Payment> {
  if (r.state === 'submitting') return mayTakeOver(s, r) ? unsent(e, s, r) : r;
  if (r.state !== 'submitted' || !r.tx_hash) return r;
  const mined = await e.chain.mined(r.tx_hash, r.authorization!);
  if (mined) {
    if (mined.status === 'reverted') return fail(s, r, 'settlement_reverted', `transaction ${r.tx_hash} reverted`);
    if (!mined.paid) return fail(s, r, 'transfer_missing', `transaction ${r.tx_hash} moved no such transfer`);
    if (mined.blockNumber > await e.chain.trustedHead(mined.blockNumber)) return r;
    return settle(s, r, mined.blockNumber);
  }
  if (await e.chain.known(r.tx_hash)) return r;
  return unsent(e, s, r);
}

/**
 * A record whose transaction the chain does not know: the nonce decides. Used: the transaction that used
 * it is the one to watch (a settlement sent before a crash, or by another node). Unused: sent again while
 * the authorization is valid, failed once it is not.
 */
async function unsent(e: EvmSettling, s: Settler, r: X402Payment): Promise<X402Payment> {
  const a = r.authorization!;
  if (await e.chain.authorizationUsed(a.from, a.nonce)) {
    const hash = await e.chain.usedBy(a.from, a.nonce, r.from_block);
    if (!hash) return r;
    return recordSent(s, r, hash);
  }
  if (s.ctx.now().getTime() / 1000 >= Number(a.validBefore) + EXPIRY_GRACE_S) {
    return fail(s, r, 'authorization_expired', 'the settlement was not mined before the authorization\'s validBefore');
  }
  return tooLate(s, r) ? r : submit(e, s, r);
}

/** Too close to validBefore to send a settlement (again): it could not be mined in time. */
const tooLate = (s: Settler, r: X402Payment) =>
  s.ctx.now().getTime() / 1000 >= Number(r.authorization!.validBefore) - SEND_MARGIN_S;
