// x402 at the paid executions (docs/x402.md): a caller without a machine token (or whose balance cannot
// cover an issued quote) is answered 402 with what a payment must be, on each network offered; a request carrying
// a payment has it checked by its network's rail (rail.ts: what it pays, to whom, signed by whom, against the
// chain), settled by this node (settle.ts), credited and the quote accepted in one batch, then executed as any
// accepted quote is (executions.ts), the payment's record moving to `executed` in the execution's batch.
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
import type { X402Config } from './config.ts';
import { createOp, moveOp, newPayment, type X402Payment } from './payments.ts';
import { isRefusal, type Settler, type X402Rail } from './rail.ts';
import { drive } from './settle.ts';

export class X402Desk {
  readonly #ctx: CoreContext;
  readonly #cfg: X402Config;
  /** the networks offered, by CAIP-2 name, in the order a 402 lists them */
  readonly #rails: Map<string, X402Rail>;
  readonly #settler: Settler;
  readonly #locks = new KeyedMutex();

  constructor(ctx: CoreContext, cfg: X402Config, rails: X402Rail[]) {
    this.#ctx = ctx;
    this.#cfg = cfg;
    this.#rails = new Map(rails.map((r) => [r.network, r]));
    this.#settler = { ctx, pollMs: cfg.pollMs };
  }

  /** The desk with a rail per network configured, each rail's modules loaded only where it is offered. */
  static async open(ctx: CoreContext, cfg: X402Config): Promise<X402Desk> {
    const rails: X402Rail[] = [];
    if (cfg.evm) rails.push(new (await import('./evm-rail.ts')).EvmRail(cfg.evm, cfg.maxTimeoutS));
    if (cfg.solana) rails.push(await (await import('./svm-rail.ts')).SvmRail.open(cfg.solana, cfg.maxTimeoutS));
    return new X402Desk(ctx, cfg, rails);
  }

  get pollMs(): number { return this.#cfg.pollMs; }

  /** Each network's fee account (EVM relayer, Solana fee payer): what pays each settlement's fee. */
  feeAccounts(): Record<string, string> {
    return Object.fromEntries([...this.#rails.values()].map((r) => [r.network, r.feeAccount]));
  }

  /** The fee account's native balance on `family`'s network (wei, lamports), or null when it is not offered. */
  feeBalance(family: 'eip155' | 'solana'): Promise<bigint> | null {
    const rail = [...this.#rails.values()].find((r) => r.network.startsWith(`${family}:`));
    return rail ? rail.feeBalance() : null;
  }

  /**
   * What a payment for quote `q` may be, one entry per network; its amount the price in token base units,
   * rounded up to a whole one. A network whose chain cannot tell (its RPC down) is left out; none: unavailable.
   */
  async #accepts(q: QuoteRecord): Promise<PaymentRequirements[]> {
    const amount = baseUnits(q);
    const all = await Promise.allSettled([...this.#rails.values()].map((r) => r.requirements(q, amount)));
    const ok = all.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
    if (ok.length === 0) throw (all[0] as PromiseRejectedResult).reason;
    return ok;
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
      accepts: await this.#accepts(q),
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
    const payment = auth.payment;
    const payload = await this.#reading(q, () => decodePayment(payment));
    // the quote is paid already (from the balance, or by this payment before): the payment is not settled again
    if (q.state === 'accepted' && tokened && !q.payment) {
      return execute(this.#ctx, command, args, seal);
    }
    const rail = await this.#reading(q, () => this.#railOf(payload));
    const id = await this.#reading(q, () => rail.paymentId(payload));
    return this.#locks.run(id, () => this.#pay(command, args, q, payload, id, rail, seal));
  }

  /** What `read` reads of a payment; a payment it cannot read is a 402 payment_invalid naming x402's reason. */
  async #reading<T>(q: QuoteRecord, read: () => T): Promise<T> {
    try {
      return read();
    } catch (e) {
      if (!(e instanceof PaymentDecodeError)) throw e;
      throw await this.#required(q, `x402: ${e.message}`, { code: 'payment_invalid', reason: e.reason });
    }
  }

  /** The rail of the payment's network; PaymentDecodeError when this node does not offer it. */
  #railOf(payload: PaymentPayload): X402Rail {
    const rail = this.#rails.get(payload.accepted.network);
    if (rail) return rail;
    const offered = [...this.#rails.keys()].join(', ');
    throw new PaymentDecodeError('invalid_network',
      `network ${payload.accepted.network.slice(0, 64)} is not offered (${offered})`);
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
    command: ExecutionCommand, args: ExecutionArgs, q: QuoteRecord, payload: PaymentPayload, id: string,
    rail: X402Rail, seal?: Seal,
  ): Promise<Reply> {
    const deadline = Date.now() + this.#cfg.maxTimeoutS * 1000;
    let rec = await this.#ctx.store.get<X402Payment>('x402_payments', id);
    if (!rec) {
      const begun = await this.#begin(q, payload, id, rail);
      // one this request created is sent at once: #begin checked it against the chain a moment ago
      rec = begun.created ? await rail.submit(this.#settler, begun.rec) : begun.rec;
    }
    if (rec.quote_id !== q.quote_id || rec.machine_id !== args.machine_id) {
      throw new ServiceError('payment_used', `x402: this authorization paid for quote ${rec.quote_id} already`);
    }
    rec = await drive(this.#settler, rail, rec, deadline);
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
  async #begin(
    q: QuoteRecord, payload: PaymentPayload, id: string, rail: X402Rail,
  ): Promise<{ rec: X402Payment; created: boolean }> {
    if (isExpired(this.#ctx, q)) throw new ServiceError('quote_expired', `quote expired at ${q.expires_at}`);
    if (q.state !== 'issued') {
      throw new ServiceError('quote_not_issued', `quote is ${q.state}: an x402 payment pays an issued quote`);
    }
    const req = await rail.requirements(q, baseUnits(q));
    const facts = await rail.check(payload, req, this.#ctx.now().getTime() / 1000);
    if (isRefusal(facts)) {
      throw await this.#required(q, `x402: ${facts.message}`, { code: 'payment_invalid', reason: facts.reason });
    }
    const rec = newPayment({
      id, nodeId: this.#ctx.identity.nodeId, quoteId: q.quote_id, machineId: q.machine_id, command: q.command,
      network: rail.network, asset: rail.asset, payTo: rail.payTo, facts,
      units: BigInt(facts.amount) * UNITS_PER_BASE_UNIT, at: this.#ctx.now(),
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
      // a network no longer offered keeps its records as they are (the audit lists them) until it is again
      const rail = this.#rails.get(r.network);
      if (!rail) continue;
      await this.#locks.run(r.payment_id, async () => {
        const cur = await this.#ctx.store.get<X402Payment>('x402_payments', r.payment_id);
        if (cur) await drive(this.#settler, rail, cur, 0);
      });
    }
    return open.length;
  }
}

/** A quote's price in token base units, rounded up to a whole one (the rest is credited to the machine). */
const baseUnits = (q: QuoteRecord) => (BigInt(q.quote_units) + UNITS_PER_BASE_UNIT - 1n) / UNITS_PER_BASE_UNIT;
