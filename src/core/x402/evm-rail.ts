// x402 `exact` on an EVM chain: a payment is an EIP-3009 transferWithAuthorization the payer signed. Checked here
// (what it pays, to whom, when, signed by whom — an EOA locally, a contract wallet through ERC-1271 — then the
// payer's balance and the nonce on chain); settled by this node's relayer (evm-settle.ts).
import { ServiceError } from '../../errors.ts';
import type { PaymentPayload, PaymentRequirements } from '../../protocol/x402.ts';
import { PaymentDecodeError, isEvmPayload, type ExactEvmPayload } from '../../protocol/x402.ts';
import { KeyedMutex } from '../keyed-mutex.ts';
import type { QuoteRecord } from '../quotes.ts';
import { X402Chain, type TokenDomain } from './chain.ts';
import type { EvmX402Config } from './config.ts';
import { SEND_MARGIN_S, step, submit, type EvmSettling } from './evm-settle.ts';
import { paymentId, type PaymentFacts, type X402Payment } from './payments.ts';
import type { Refusal, Settler, X402Rail } from './rail.ts';

export class EvmRail implements X402Rail {
  readonly #cfg: EvmX402Config;
  readonly #maxTimeoutS: number;
  readonly #settling: EvmSettling;
  #domain: Promise<TokenDomain> | null = null;

  constructor(cfg: EvmX402Config, maxTimeoutS: number, chain = new X402Chain(cfg)) {
    this.#cfg = cfg;
    this.#maxTimeoutS = maxTimeoutS;
    const relayerLock = new KeyedMutex();
    this.#settling = { chain, relayer: (fn) => relayerLock.run('relayer', fn) };
  }

  get network(): string { return this.#cfg.network; }
  get asset(): string { return this.#cfg.asset; }
  get payTo(): string { return this.#cfg.payTo; }
  get feeAccount(): string { return this.#settling.chain.relayer; }

  feeBalance(): Promise<bigint> { return this.#settling.chain.relayerBalance(); }

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
      id = await this.#settling.chain.chainId();
    } catch (e) {
      throw new ServiceError('service_unavailable', 'x402: the chain\'s RPC does not answer; pay from a balance '
        + 'or retry later', undefined, { cause: e });
    }
    if (id !== this.#cfg.chainId) {
      throw new ServiceError('service_unavailable', `x402: the RPC serves chain ${id}, not ${this.#cfg.network}`);
    }
    if (this.#cfg.tokenName !== null) return { name: this.#cfg.tokenName, version: this.#cfg.tokenVersion! };
    return this.#settling.chain.tokenDomain();
  }

  async requirements(q: QuoteRecord, amount: bigint): Promise<PaymentRequirements> {
    const d = await this.domain();
    return {
      scheme: 'exact', network: this.#cfg.network, asset: this.#cfg.asset, amount: amount.toString(),
      payTo: this.#cfg.payTo, maxTimeoutSeconds: this.#maxTimeoutS,
      extra: { name: d.name, version: d.version, quote_id: q.quote_id },
    };
  }

  paymentId(p: PaymentPayload): string {
    if (!isEvmPayload(p)) throw new PaymentDecodeError('invalid_payload', 'not an EIP-3009 authorization');
    return paymentId(this.#cfg.network, this.#cfg.asset, p.payload.authorization);
  }

  async check(p: PaymentPayload, req: PaymentRequirements, nowS: number): Promise<PaymentFacts | Refusal> {
    if (!isEvmPayload(p)) return { reason: 'invalid_payload', message: 'not an EIP-3009 authorization' };
    const why = checkAgainst(p, req, nowS);
    if (why) return why;
    const { chain } = this.#settling;
    const a = p.payload.authorization;
    if (!await chain.signedBy(await this.domain(), a, p.payload.signature)) {
      const message = 'the signature is not the payer\'s over this authorization';
      return { reason: 'invalid_exact_evm_payload_signature', message };
    }
    const [used, balance, block] = await Promise.all([
      chain.authorizationUsed(a.from, a.nonce), chain.balanceOf(a.from), chain.blockNumber(),
    ]).catch((e: unknown) => {
      const message = 'x402: the chain\'s RPC does not answer; retry';
      throw new ServiceError('service_unavailable', message, undefined, { cause: e });
    });
    if (used) {
      const message = 'this authorization\'s nonce is used';
      return { reason: 'invalid_exact_evm_payload_authorization_nonce', message };
    }
    if (balance < BigInt(a.value)) {
      return { reason: 'insufficient_funds', message: `the payer holds ${balance}, less than ${a.value}` };
    }
    return {
      payer: a.from.toLowerCase(), amount: a.value, from_block: block, authorization: a, signature: p.payload.signature,
    };
  }

  submit(s: Settler, r: X402Payment): Promise<X402Payment> { return submit(this.#settling, s, r); }
  step(s: Settler, r: X402Payment): Promise<X402Payment> { return step(this.#settling, s, r); }
}

/** What a payment must match of the requirements this node gives for the quote; null when it does. */
export function checkAgainst(
  p: PaymentPayload<ExactEvmPayload>, req: PaymentRequirements, nowS: number,
): Refusal | null {
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
  if (Number(a.validBefore) < nowS + SEND_MARGIN_S) {
    return {
      reason: 'invalid_exact_evm_payload_authorization_valid_before',
      message: `the authorization expires within ${SEND_MARGIN_S} s`,
    };
  }
  return null;
}
