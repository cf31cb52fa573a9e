// x402 at the paid executions (docs/x402.md): a caller without a machine token (or whose balance cannot
// cover an issued quote) is answered 402 with what a payment must be; a request carrying a payment has it
// checked here (what it pays, to whom, when, signed by whom, the payer's balance and the nonce on chain),
// settled by this node's relayer (settle.ts), credited and the quote accepted in one batch, then executed as
// any accepted quote is (executions.ts), the payment's record moving to `executed` in the execution's batch.
import { ServiceError } from '../../errors.ts';
import { x402Transitions } from '../../metrics/metrics.ts';
import { commandSpec } from '../../protocol/registry.ts';
import { UNITS_PER_BASE_UNIT } from '../invoices.ts';
import type { ExecutionCommand } from '../../protocol/services.ts';
import {
  PaymentDecodeError, X402_VERSION, decodePayment, type PaymentPayload, type PaymentRequired, type PaymentRequirements,
} from '../../protocol/x402.ts';
import { idPart } from '../../store/key-codec.ts';
import { isStoreConflict, type Op } from '../../store/store.ts';
import type { Auth, Reply, Seal } from '../call.ts';
import type { CoreContext } from '../context.ts';
import { execute, type ExecutionArgs } from '../executions.ts';
import { KeyedMutex } from '../keyed-mutex.ts';
import { findQuote, isExpired, type QuoteRecord } from '../quotes.ts';
import { X402Chain, type TokenDomain } from './chain.ts';
import type { X402Config } from './config.ts';
import { createOp, moveOp, newPayment, paymentId, type X402Payment } from './payments.ts';
import { SEND_MARGIN_S as VALID_MARGIN_S, drive, submit, type Settler } from './settle.ts';

export class X402Desk {
  readonly #ctx: CoreContext;
  readonly #cfg: X402Config;
  readonly #chain: X402Chain;
  readonly #settler: Settler;
  readonly #locks = new KeyedMutex();
  #domain: Promise<TokenDomain> | null = null;

  constructor(ctx: CoreContext, cfg: X402Config, chain = new X402Chain(cfg)) {
    this.#ctx = ctx;
    this.#cfg = cfg;
    this.#chain = chain;
    const relayerLock = new KeyedMutex();
    this.#settler = { ctx, cfg, chain, relayer: (fn) => relayerLock.run('relayer', fn) };
  }

  get relayer(): string { return this.#chain.relayer; }
  get pollMs(): number { return this.#cfg.pollMs; }

  /** The relayer's native balance (wei): what pays each settlement's gas. */
  relayerBalance(): Promise<bigint> { return this.#chain.relayerBalance(); }

  /** The token's EIP-712 domain (configured, or read once from the token) after checking the chain's id. */
  domain(): Promise<TokenDomain> {
    this.#domain ??= this.#readDomain().catch((e: unknown) => {
      this.#domain = null;
      throw e;
    });
    return this.#domain;
  }

  async #readDomain(): Promise<TokenDomain> {
    let id: number;
    try {
      id = await this.#chain.chainId();
    } catch (e) {
      throw new ServiceError('service_unavailable', 'x402: the chain\'s RPC does not answer; pay from a balance '
        + 'or retry later', undefined, { cause: e });
    }
    if (id !== this.#cfg.chainId) {
      throw new ServiceError('service_unavailable', `x402: the RPC serves chain ${id}, not ${this.#cfg.network}`);
    }
    if (this.#cfg.tokenName !== null) return { name: this.#cfg.tokenName, version: this.#cfg.tokenVersion! };
    return this.#chain.tokenDomain();
  }

  /** What a payment for quote `q` must be; its amount the price in token base units, rounded up to a whole one. */
  async #requirements(q: QuoteRecord): Promise<PaymentRequirements> {
    const d = await this.domain();
    const amount = (BigInt(q.quote_units) + UNITS_PER_BASE_UNIT - 1n) / UNITS_PER_BASE_UNIT;
    return {
      scheme: 'exact', network: this.#cfg.network, asset: this.#cfg.asset, amount: amount.toString(),
      payTo: this.#cfg.payTo, maxTimeoutSeconds: this.#cfg.maxTimeoutS,
      extra: { name: d.name, version: d.version, quote_id: q.quote_id },
    };
  }

  /** The 402 for quote `q`: ServiceError payment_required (or `code`), its body in details.payment_required. */
  async #required(
    q: QuoteRecord, message: string, why?: { code: 'payment_invalid' | 'payment_failed'; reason: string },
  ): Promise<ServiceError> {
    const spec = commandSpec(q.command);
    const body: PaymentRequired = {
      x402Version: X402_VERSION,
      ...(why ? { error: why.reason } : {}),
      resource: {
        url: spec?.http?.path ?? '', mimeType: 'application/json',
        description: `${q.service} execution of quote ${q.quote_id}`,
      },
      accepts: [await this.#requirements(q)],
    };
    return new ServiceError(why?.code ?? 'payment_required', message, { payment_required: body });
  }

  /**
   * A paid execution on an x402 node. The gate checked the token if one came; without one the machine must
   * be unclaimed (nobody acts on an account without its token).
   */
  async execute(command: ExecutionCommand, args: ExecutionArgs, auth: Auth | undefined, seal?: Seal): Promise<Reply> {
    const tokened = auth?.token !== undefined;
    // a token without a payment is the prepaid flow, as on any node; only its quote_not_accepted may become a 402
    if (tokened && !auth?.payment) return this.#fromBalance(command, args, seal);
    if (!tokened) await this.#assertUnclaimed(args.machine_id);
    const { q } = await findQuote(this.#ctx, args.quote_id, args.machine_id);
    if (q.command !== command) {
      throw new ServiceError('quote_wrong_service', `the quote is for ${q.service}, not ${command}`);
    }
    if (!auth?.payment) return this.#anonymous(command, args, q, seal);
    let payload: PaymentPayload;
    try {
      payload = decodePayment(auth.payment);
    } catch (e) {
      if (!(e instanceof PaymentDecodeError)) throw e;
      throw await this.#required(q, `x402: ${e.message}`, { code: 'payment_invalid', reason: e.reason });
    }
    // the quote is paid already (from the balance, or by this payment before): the payment is not settled again
    if (q.state === 'accepted' && tokened && !q.payment) {
      return execute(this.#ctx, command, args, seal);
    }
    const id = paymentId(this.#cfg.network, this.#cfg.asset, payload.payload.authorization);
    return this.#locks.run(id, () => this.#pay(command, args, q, payload, id, seal));
  }

  /**
   * A token and no payment: the execution as on any node. An issued quote the balance cannot cover is a 402
   * instead of the contract's quote_not_accepted (one the balance covers is to be accepted first, as ever).
   */
  async #fromBalance(command: ExecutionCommand, args: ExecutionArgs, seal?: Seal): Promise<Reply> {
    try {
      return await execute(this.#ctx, command, args, seal);
    } catch (e) {
      if (!(e instanceof ServiceError) || e.code !== 'quote_not_accepted') throw e;
      const { q } = await findQuote(this.#ctx, args.quote_id, args.machine_id);
      const acct = await this.#ctx.ledger.account(args.machine_id);
      if (q.state !== 'issued' || acct.available >= BigInt(q.quote_units)) throw e;
      const msg = `available ${acct.available} units, this execution costs ${q.quote_units}: pay it with x402 `
        + '(the PAYMENT-REQUIRED header), or fund the machine and accept the quote';
      throw await this.#required(q, msg);
    }
  }

  /** Neither token nor payment: an issued quote is a 402; an executed one replays; an accepted one needs its token. */
  async #anonymous(command: ExecutionCommand, args: ExecutionArgs, q: QuoteRecord, seal?: Seal): Promise<Reply> {
    if (q.state === 'issued' && !isExpired(this.#ctx, q)) {
      const msg = `this execution costs ${q.quote_units} units: pay it with x402 (the PAYMENT-REQUIRED header), `
        + 'or fund a machine and accept the quote with its token';
      throw await this.#required(q, msg);
    }
    if (q.state === 'accepted' && !isExpired(this.#ctx, q)) {
      throw new ServiceError('unauthorized', 'this quote is paid from a machine\'s balance: present its token');
    }
    return execute(this.#ctx, command, args, seal);
  }

  async #assertUnclaimed(machineId: string): Promise<void> {
    if (await this.#ctx.store.get('machines', idPart(machineId))) {
      throw new ServiceError('unauthorized', 'this machine_id is claimed: present its token (Authorization: Bearer), '
        + 'or pay with x402 under a machine_id of your own');
    }
  }

  async #pay(
    command: ExecutionCommand, args: ExecutionArgs, q: QuoteRecord, payload: PaymentPayload, id: string, seal?: Seal,
  ): Promise<Reply> {
    const deadline = Date.now() + this.#cfg.maxTimeoutS * 1000;
    let rec = await this.#ctx.store.get<X402Payment>('x402_payments', id);
    if (!rec) {
      const begun = await this.#begin(q, payload, id);
      // one this request created is sent at once: #begin saw its nonce unused a moment ago
      rec = begun.created ? await submit(this.#settler, begun.rec) : begun.rec;
    }
    if (rec.quote_id !== q.quote_id || rec.machine_id !== args.machine_id) {
      throw new ServiceError('payment_used', `x402: this authorization paid for quote ${rec.quote_id} already`);
    }
    rec = await drive(this.#settler, rec, deadline);
    if (rec.state === 'failed') {
      const f = rec.failure!;
      throw await this.#required(q, `x402: the payment failed (${f.message}); nothing was charged: sign a new one`,
        { code: 'payment_failed', reason: f.reason });
    }
    if (rec.state !== 'settled' && rec.state !== 'executed') {
      throw new ServiceError('payment_pending', `x402: the settlement ${rec.tx_hash ?? ''} is not final yet; send the `
        + 'same request with the same payment again to get its result', { payment_id: id, state: rec.state });
    }
    const done = rec;
    const result = await execute(this.#ctx, command, args, (r) => this.#executedOps(done, r, seal));
    if (!result.replayed) x402Transitions.at('executed').v++;
    return result;
  }

  #executedOps(rec: X402Payment, result: Reply, seal?: Seal): Op[] {
    const { op } = moveOp(rec, { state: 'executed', receipt_id: result.receipt_id as string }, this.#ctx.now());
    return [op, ...(seal ? seal(result) : [])];
  }

  /**
   * A payment seen for the first time: checked against the quote and the chain, then its record created
   * (`created` false: another node created it first, and its record is the one).
   */
  async #begin(q: QuoteRecord, payload: PaymentPayload, id: string): Promise<{ rec: X402Payment; created: boolean }> {
    if (isExpired(this.#ctx, q)) throw new ServiceError('quote_expired', `quote expired at ${q.expires_at}`);
    if (q.state !== 'issued') {
      throw new ServiceError('quote_not_issued', `quote is ${q.state}: an x402 payment pays an issued quote`);
    }
    const req = await this.#requirements(q);
    const bad = (reason: string, msg: string) => this.#required(q, `x402: ${msg}`, { code: 'payment_invalid', reason });
    const why = checkAgainst(payload, req, this.#ctx.now().getTime() / 1000);
    if (why) throw await bad(why.reason, why.message);
    const a = payload.payload.authorization;
    if (!await this.#chain.signedBy(await this.domain(), a, payload.payload.signature)) {
      throw await bad('invalid_exact_evm_payload_signature',
        'the signature is not the payer\'s over this authorization');
    }
    const [used, balance, block] = await Promise.all([
      this.#chain.authorizationUsed(a.from, a.nonce), this.#chain.balanceOf(a.from), this.#chain.blockNumber(),
    ]).catch((e: unknown) => {
      const msg = 'x402: the chain\'s RPC does not answer; retry';
      throw new ServiceError('service_unavailable', msg, undefined, { cause: e });
    });
    if (used) throw await bad('invalid_exact_evm_payload_authorization_nonce', 'this authorization\'s nonce is used');
    if (balance < BigInt(a.value)) {
      throw await bad('insufficient_funds', `the payer holds ${balance}, less than ${a.value}`);
    }
    const rec = newPayment({
      id, nodeId: this.#ctx.identity.nodeId, quoteId: q.quote_id, machineId: q.machine_id, command: q.command,
      network: this.#cfg.network, asset: this.#cfg.asset, payTo: this.#cfg.payTo, payload,
      units: BigInt(a.value) * UNITS_PER_BASE_UNIT, fromBlock: block, at: this.#ctx.now(),
    });
    try {
      await this.#ctx.store.write([createOp(rec)]);
      x402Transitions.at('submitting').v++;
      return { rec, created: true };
    } catch (e) {
      // another node took the same authorization first: its record is the one
      if (!isStoreConflict(e)) throw e;
      const theirs = await this.#ctx.store.get<X402Payment>('x402_payments', id);
      if (!theirs) throw e;
      return { rec: theirs, created: false };
    }
  }

  /** Drives every payment not ended (a restart's leftovers, a request that gave up waiting); returns how many. */
  async resume(): Promise<number> {
    const open: X402Payment[] = [];
    for await (const [, v] of this.#ctx.store.entries<X402Payment>('x402_payments')) {
      if (v.state === 'submitting' || v.state === 'submitted') open.push(v);
    }
    for (const r of open) {
      await this.#locks.run(r.payment_id, async () => {
        const cur = await this.#ctx.store.get<X402Payment>('x402_payments', r.payment_id);
        if (cur) await drive(this.#settler, cur, 0);
      });
    }
    return open.length;
  }
}

/** What a payment must match of the requirements this node gives for the quote; null when it does. */
export function checkAgainst(
  p: PaymentPayload, req: PaymentRequirements, nowS: number,
): { reason: string; message: string } | null {
  const a = p.payload.authorization;
  const acc = p.accepted;
  const same = (x: string, y: string) => x.toLowerCase() === y.toLowerCase();
  if (acc.network !== req.network) {
    return { reason: 'invalid_network', message: `network ${acc.network} is not ${req.network}` };
  }
  if (!same(acc.asset, req.asset)) return { reason: 'invalid_exact_evm_payload_asset', message: 'another asset' };
  if (!same(a.to, req.payTo) || !same(acc.payTo, req.payTo)) {
    return { reason: 'invalid_exact_evm_payload_recipient_mismatch', message: `the payment is not to ${req.payTo}` };
  }
  if (a.value !== req.amount || acc.amount !== req.amount) {
    const message = `the quote costs exactly ${req.amount}`;
    return { reason: 'invalid_exact_evm_payload_authorization_value', message };
  }
  if (Number(a.validAfter) > nowS) {
    const message = 'the authorization is not valid yet';
    return { reason: 'invalid_exact_evm_payload_authorization_valid_after', message };
  }
  if (Number(a.validBefore) < nowS + VALID_MARGIN_S) {
    return {
      reason: 'invalid_exact_evm_payload_authorization_valid_before',
      message: `the authorization expires within ${VALID_MARGIN_S} s`,
    };
  }
  return null;
}
