// An x402 payment's record, one per payment: per EIP-3009 authorization on EVM (payer and nonce on one token and
// chain), per transaction message on Solana. Created before anything is sent, so one payment is settled and executes
// once however many requests, nodes and restarts carry it. States, each written as compare-and-set on the one before:
//
//   submitting  created; the settlement is being signed (no transaction can exist yet)
//   submitted   the settlement's transaction hash (Solana: signature) is known, recorded before it is sent
//   settled     mined, successful and as deep as configured: the credit and the quote's acceptance are
//               in the same batch (ledger credit of `units`, then the reservation of the quote's units)
//   executed    the execution ran; its capture, receipt and this state are one batch (executions.ts)
//   failed      reverted, or never mined before the authorization's validBefore: nothing was charged
import { createHash } from 'node:crypto';
import { create, replace, type Op } from '../../store/store.ts';
import type { Authorization } from '../../protocol/x402.ts';

export type PaymentState = 'submitting' | 'submitted' | 'settled' | 'executed' | 'failed';

export interface X402Payment {
  payment_id: string;
  state: PaymentState;
  /** the node that created the record (others take over a record left without progress) */
  node_id: string;
  quote_id: string;
  machine_id: string;
  command: string;
  network: string;
  asset: string;
  pay_to: string;
  /** the payer: authorization.from (lower case) on EVM, the transfer's authority on Solana */
  payer: string;
  /** EVM: the EIP-3009 authorization and its signature */
  authorization?: Authorization;
  signature?: string;
  /** Solana: the payer's transaction (base64), its blockhash, and the transaction once the node signed it */
  transaction?: string;
  blockhash?: string;
  signed_transaction?: string;
  /** the token base units paid and what they credit (units) */
  amount: string;
  units: string;
  /** the chain's block (Solana: slot) when the record was created: a search for the nonce's use starts there */
  from_block: number;
  tx_hash: string | null;
  block_number: number | null;
  receipt_id: string | null;
  failure: { reason: string; message: string } | null;
  created_at: string;
  updated_at: string;
}

/** What a quote, a receipt and an execution's reply say of the payment that paid them. */
export interface PaymentRef {
  scheme: 'exact';
  network: string;
  asset: string;
  payer: string;
  amount: string;
  transaction: string;
  payment_id: string;
}

/** The record's key: one per authorization, however its header was spelled (hex case, field order). */
export function paymentId(network: string, asset: string, a: Authorization): string {
  return idOf([network, asset.toLowerCase(), a.from.toLowerCase(), a.nonce.toLowerCase()].join('|'));
}

/** A Solana payment's key: one per transaction message (the payer's signature covers it; the node signs it once). */
export function svmPaymentId(network: string, asset: string, messageBytes: Uint8Array): string {
  return idOf([network, asset, createHash('sha256').update(messageBytes).digest('hex')].join('|'));
}

const idOf = (k: string) => `x402_${createHash('sha256').update(k).digest('hex').slice(0, 40)}`;

/** What a rail checked of a payment: who pays how much, and what its settlement needs of the payload. */
export type PaymentFacts = Pick<X402Payment, 'payer' | 'amount' | 'from_block'>
  & Partial<Pick<X402Payment, 'authorization' | 'signature' | 'transaction' | 'blockhash'>>;

export function newPayment(p: {
  id: string; nodeId: string; quoteId: string; machineId: string; command: string; network: string; asset: string;
  payTo: string; facts: PaymentFacts; units: bigint; at: Date;
}): X402Payment {
  const at = p.at.toISOString();
  return {
    payment_id: p.id, state: 'submitting', node_id: p.nodeId, quote_id: p.quoteId, machine_id: p.machineId,
    command: p.command, network: p.network, asset: p.asset, pay_to: p.payTo, ...p.facts, units: p.units.toString(),
    tx_hash: null, block_number: null, receipt_id: null, failure: null, created_at: at, updated_at: at,
  };
}

export const createOp = (rec: X402Payment): Op => create('x402_payments', rec.payment_id, rec);

/** The record moved on from `was`: refused (a store conflict) if another request or node moved it first. */
export function moveOp(was: X402Payment, next: Partial<X402Payment>, at: Date): { rec: X402Payment; op: Op } {
  const rec: X402Payment = { ...was, ...next, updated_at: at.toISOString() };
  return { rec, op: replace('x402_payments', was.payment_id, rec, was) };
}

export function paymentRef(rec: X402Payment): PaymentRef {
  return {
    scheme: 'exact', network: rec.network, asset: rec.asset, payer: rec.payer, amount: rec.amount,
    transaction: rec.tx_hash ?? '', payment_id: rec.payment_id,
  };
}
