// Solana Pay for the Solana rails' invoices (docs/settlement.md "Solana Pay references"): each invoice carries a
// `reference`, a fresh random public key that the payer's wallet adds to the transfer as a read-only account, and
// a transfer-request URI (solana:<wallet>?amount=…&spl-token=…&reference=…) that Solana Pay wallets open. The
// watcher finds the reference among the accounts of the transactions it already reads, so an invoice is matched by
// it whatever its amount; the amount's suffix stays as the match for payers whose wallet cannot add a reference (an
// exchange's withdrawal) while the rail has free amounts. Spec: https://docs.solanapay.com/spec.
import { randomBytes } from 'node:crypto';
import { base58 } from '@scure/base';
import { key } from '../store/key-codec.ts';
import type { Rail } from './rails.ts';

/** The mints of the Solana rails on mainnet (Circle's USDC, Tether's USDT), unless the watcher names another. */
export const SOLANA_MINTS: Partial<Record<Rail['rail'], string>> = {
  USDC_SOLANA: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
  USDT_SOLANA: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB',
};

/** A fresh reference: 32 random bytes written as a Solana address (no key pair is needed to be named). */
export const newReference = (): string => base58.encode(randomBytes(32));

/** The invoice_refs key of a reference on a rail. */
export const referenceIndexKey = (rail: Rail['rail'], reference: string): string => key(rail, reference);

/** A Solana Pay transfer request for `amountDecimal` of `mint` to `wallet`, labelled with the invoice. */
export function transferRequest(
  wallet: string, amountDecimal: string, mint: string | undefined, reference: string, invoiceId: string,
): string {
  const q = new URLSearchParams({ amount: amountDecimal.replace(/\.?0+$/, '') || '0' });
  if (mint) q.set('spl-token', mint);
  q.set('reference', reference);
  q.set('label', 'svc');
  q.set('message', `invoice ${invoiceId}`);
  return `solana:${wallet}?${q.toString()}`;
}
