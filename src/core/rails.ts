// The payment rails: the four stablecoin rails a funding invoice can name, the chain family each
// belongs to, and how each family writes an address. Domain types only; configuration (which
// address receives each rail's payments, which rails are watched) is config.ts's.
import { base58 } from '@scure/base';
import type { RAIL_IDS } from '../protocol/schemas.ts';

export interface Rail {
  /** the rail's key (GET /api/v1/payment), one of the registry's RAIL_IDS */
  rail: (typeof RAIL_IDS)[number];
  network: 'TRON' | 'Base' | 'Solana';
  asset: 'USDT' | 'USDC';
  decimals: 6;
  /** the receiving address (SVC_WALLET_<RAIL>), or NO_ADDRESS when none is configured */
  address: string;
}

/** What a rail without SVC_WALLET_<RAIL> publishes as its address: no payment can reach it. */
export const NO_ADDRESS = '<WALLET_ADDRESS>';

/** How a rail's chain is read and its references written: EVM, TRON's EVM-style RPC, or Solana. */
export type ChainFamily = 'evm' | 'tron' | 'solana';

export const RAILS: readonly Omit<Rail, 'address'>[] = [
  { rail: 'USDT_TRON', network: 'TRON', asset: 'USDT', decimals: 6 },
  { rail: 'USDC_BASE', network: 'Base', asset: 'USDC', decimals: 6 },
  { rail: 'USDC_SOLANA', network: 'Solana', asset: 'USDC', decimals: 6 },
  { rail: 'USDT_SOLANA', network: 'Solana', asset: 'USDT', decimals: 6 },
];

/** The chain family of each rail: its watcher's, and the form of its payment references. */
export const RAIL_FAMILY: Record<Rail['rail'], ChainFamily> = {
  USDC_BASE: 'evm', USDT_TRON: 'tron', USDC_SOLANA: 'solana', USDT_SOLANA: 'solana',
};

/** A Solana address: base58 of 32 bytes. */
export function isSolanaAddress(s: string): boolean {
  if (!/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(s)) return false;
  try { return base58.decode(s).length === 32; } catch { return false; }
}
