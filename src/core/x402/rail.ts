// One network x402 payments settle on (docs/x402.md): what the desk (desk.ts) asks of it. The EVM rail
// (evm-rail.ts) settles an EIP-3009 authorization by sending it from the node's relayer; the Solana rail
// (svm-rail.ts) co-signs the payer's transaction as its fee payer and sends it. Both record the settlement's
// transaction before sending it, and let the chain decide every unclear case (settle.ts drives them).
import type { PaymentPayload, PaymentRequirements } from '../../protocol/x402.ts';
import type { QuoteRecord } from '../quotes.ts';
import type { PaymentFacts, X402Payment } from './payments.ts';
import type { CoreContext } from '../context.ts';

/** Who drives a payment's record (settle.ts): the node's context, and how often a settlement is looked at again. */
export interface Settler {
  ctx: CoreContext;
  pollMs: number;
}

/** Why a payment is refused before anything is recorded: x402's reason name and a sentence. */
export interface Refusal { reason: string; message: string }

export const isRefusal = (v: PaymentFacts | Refusal): v is Refusal => 'reason' in v;

export interface X402Rail {
  /** CAIP-2 */
  readonly network: string;
  readonly asset: string;
  readonly payTo: string;
  /** the account that pays each settlement's fee (the EVM relayer, the Solana fee payer) */
  readonly feeAccount: string;
  /** what a payment of `amount` token base units for quote `q` must be (service_unavailable if it cannot tell) */
  requirements(q: QuoteRecord, amount: bigint): Promise<PaymentRequirements>;
  /** the payment's record key: one per payment however its header was spelled (throws PaymentDecodeError) */
  paymentId(p: PaymentPayload): string;
  /** the payment checked against `req` (at `nowS`) and the chain: what it pays and what settling needs, or why not */
  check(p: PaymentPayload, req: PaymentRequirements, nowS: number): Promise<PaymentFacts | Refusal>;
  /** signs the settlement, records it, then sends it */
  submit(s: Settler, r: X402Payment): Promise<X402Payment>;
  /** one look at the chain for a record not ended: it moves, or is returned as it was */
  step(s: Settler, r: X402Payment): Promise<X402Payment>;
  /** the fee account's native balance in the chain's smallest unit (wei, lamports) */
  feeBalance(): Promise<bigint>;
}
