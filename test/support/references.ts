// Payment references for tests: a transfer on a rail's chain, made up from a seed, in the canonical form
// svcd stores (src/core/payment-reference.ts): Base 0x + 64 hex, TRON 64 hex, Solana a base58 signature of
// 64 bytes, then :<index>. Settlements take only references of the invoice's chain.
import { createHash } from 'node:crypto';
import { base58 } from '@scure/base';
import type { Rail } from '../../src/core/rails.ts';

/** The transaction id of `seed` on `rail`, canonical. */
export function txId(seed: string, rail: Rail['rail'] = 'USDC_BASE'): string {
  if (rail === 'USDC_SOLANA' || rail === 'USDT_SOLANA') {
    return base58.encode(createHash('sha512').update(seed).digest());
  }
  const hex = createHash('sha256').update(seed).digest('hex');
  return rail === 'USDT_TRON' ? hex : `0x${hex}`;
}

/** A canonical reference `<tx>:<index>` of `seed` on `rail`. */
export const txRef = (seed: string, rail: Rail['rail'] = 'USDC_BASE', index = 0): string =>
  `${txId(seed, rail)}:${index}`;
