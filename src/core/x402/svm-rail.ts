// x402 `exact` on Solana: a payment is a transaction the payer signed — compute budget, an SPL TransferChecked of the
// quote's price to the payee's associated token account, the quote's id as its memo — that names this node's fee
// payer and waits for its signature. Checked by x402's own verifier (@x402/svm: the instruction layout, that the fee
// payer moves nothing, the mint, payee, amount, memo, the payer's signature, the fee limits), then simulated; settled
// by co-signing and sending it, its signature recorded first. The chain decides an unclear case: a signature the
// cluster has seen moves on with it; one it has not is sent again until its blockhash expires, then it failed.
import { ExactSvmScheme as SvmVerifier } from '@x402/svm/exact/facilitator';
import { ServiceError } from '../../errors.ts';
import {
  PaymentDecodeError, isSvmPayload, type PaymentPayload, type PaymentRequirements,
} from '../../protocol/x402.ts';
import type { QuoteRecord } from '../quotes.ts';
import { SOLANA_COMMITMENTS, type SvmX402Config } from './config.ts';
import { svmPaymentId, type PaymentFacts, type X402Payment } from './payments.ts';
import type { Refusal, Settler, X402Rail } from './rail.ts';
import { fail, mayTakeOver, recordSent, settle } from './settle.ts';
import { SvmChain, decodeTransaction, type Decoded } from './svm-chain.ts';

export class SvmRail implements X402Rail {
  readonly #cfg: SvmX402Config;
  readonly #maxTimeoutS: number;
  readonly #chain: SvmChain;
  readonly #verifier: SvmVerifier;
  #genesisChecked: Promise<void> | null = null;

  private constructor(cfg: SvmX402Config, maxTimeoutS: number, chain: SvmChain) {
    this.#cfg = cfg;
    this.#maxTimeoutS = maxTimeoutS;
    this.#chain = chain;
    // the verifier's own simulation is a no-op: the node simulates after it, telling a cluster that does not answer
    // (retry) from a transaction that would fail (refused)
    const signer = { getAddresses: () => [chain.feePayer], simulateTransaction: async () => undefined };
    this.#verifier = new SvmVerifier(signer as never, undefined, {
      maxComputeUnits: cfg.maxComputeUnits, maxPriorityFeeMicroLamports: cfg.maxPriorityFeeMicroLamports,
      maxRequiredSignatures: 2,
    });
  }

  static async open(cfg: SvmX402Config, maxTimeoutS: number): Promise<SvmRail> {
    return new SvmRail(cfg, maxTimeoutS, await SvmChain.open(cfg));
  }

  get network(): string { return this.#cfg.network; }
  get asset(): string { return this.#cfg.asset; }
  get payTo(): string { return this.#cfg.payTo; }
  get feeAccount(): string { return this.#chain.feePayer; }

  feeBalance(): Promise<bigint> { return this.#chain.balance(); }

  /** The RPC serves the configured network (its genesis hash), checked once it answers. */
  #checkGenesis(): Promise<void> {
    this.#genesisChecked ??= this.#readGenesis().catch((e: unknown) => {
      this.#genesisChecked = null;
      throw e;
    });
    return this.#genesisChecked;
  }

  async #readGenesis(): Promise<void> {
    const genesis = await this.#chain.genesisHash().catch((e: unknown) => {
      throw unavailable('the Solana RPC does not answer; pay from a balance or retry later', e);
    });
    if (!this.#cfg.network.endsWith(`:${genesis.slice(0, 32)}`)) {
      const msg = `x402: the Solana RPC serves genesis ${genesis}, not ${this.network}`;
      throw new ServiceError('service_unavailable', msg);
    }
  }

  async requirements(q: QuoteRecord, amount: bigint): Promise<PaymentRequirements> {
    await this.#checkGenesis();
    return {
      scheme: 'exact', network: this.#cfg.network, asset: this.#cfg.asset, amount: amount.toString(),
      payTo: this.#cfg.payTo, maxTimeoutSeconds: this.#maxTimeoutS,
      // the memo binds the transaction to the quote: x402's verifier requires it, once, as given
      extra: { feePayer: this.#chain.feePayer, memo: q.quote_id, quote_id: q.quote_id },
    };
  }

  paymentId(p: PaymentPayload): string {
    return svmPaymentId(this.#cfg.network, this.#cfg.asset, Buffer.from(decoded(p).tx.messageBytes));
  }

  async check(p: PaymentPayload, req: PaymentRequirements): Promise<PaymentFacts | Refusal> {
    if (!isSvmPayload(p)) return { reason: 'invalid_payload', message: 'not a Solana transaction' };
    const d = decoded(p);
    const v = await this.#verifier.verify(p as never, req as never);
    if (!v.isValid) {
      const reason = v.invalidReason ?? 'invalid_exact_svm_verification_failed';
      return { reason, message: `the transaction does not pay this quote as required (${reason})` };
    }
    let slot: number;
    try {
      await this.#chain.simulate(p.payload.transaction);
    } catch (e) {
      if (!(e instanceof Error) || !e.message.startsWith('simulation failed')) {
        throw unavailable('the Solana RPC does not answer; retry', e);
      }
      return { reason: 'invalid_exact_svm_transaction_simulation_failed', message: e.message };
    }
    try {
      slot = await this.#chain.slot();
    } catch (e) {
      throw unavailable('the Solana RPC does not answer; retry', e);
    }
    return {
      payer: v.payer ?? '', amount: req.amount, from_block: slot, transaction: p.payload.transaction,
      blockhash: d.blockhash,
    };
  }

  /** Co-signs as fee payer, records the signature (the transaction's id), then sends it. */
  async submit(s: Settler, r: X402Payment): Promise<X402Payment> {
    const { signature, wire } = await this.#chain.sign(decodeTransaction(r.transaction!));
    const next = await recordSent(s, r, signature, { signed_transaction: wire });
    if (next.tx_hash !== signature) return next;
    // an error here leaves the outcome to the cluster: the next look finds it landed, or sends it again
    await this.#chain.send(wire).catch(() => undefined);
    return next;
  }

  async step(s: Settler, r: X402Payment): Promise<X402Payment> {
    if (r.state === 'submitting') return mayTakeOver(s, r) ? this.submit(s, r) : r;
    if (r.state !== 'submitted' || !r.tx_hash || !r.signed_transaction) return r;
    const st = await this.#chain.status(r.tx_hash);
    if (st.seen) {
      if (st.err) return fail(s, r, 'settlement_reverted', `transaction ${r.tx_hash} failed: ${st.err}`);
      if (!deepEnough(st.commitment, this.#cfg.commitment)) return r;
      return settle(s, r, st.slot);
    }
    if (await this.#chain.blockhashValid(r.blockhash!)) {
      await this.#chain.send(r.signed_transaction).catch(() => undefined);
      return r;
    }
    // it may have landed between the two reads; once the blockhash has expired it cannot land any more
    if ((await this.#chain.status(r.tx_hash)).seen) return r;
    return fail(s, r, 'authorization_expired', 'the transaction did not land before its blockhash expired');
  }
}

const deepEnough = (got: string | null, want: string) =>
  got !== null && SOLANA_COMMITMENTS.indexOf(got as never) >= SOLANA_COMMITMENTS.indexOf(want as never);

const unavailable = (message: string, cause: unknown) =>
  new ServiceError('service_unavailable', `x402: ${message}`, undefined, { cause });

/** The payload's transaction, decoded; PaymentDecodeError when it is not a Solana transaction. */
function decoded(p: PaymentPayload): Decoded {
  if (!isSvmPayload(p)) throw new PaymentDecodeError('invalid_payload', 'not a Solana transaction');
  try {
    return decodeTransaction(p.payload.transaction);
  } catch {
    throw new PaymentDecodeError('invalid_exact_svm_payload_transaction_could_not_be_decoded',
      'payload.transaction is not a Solana transaction');
  }
}
