// SVC_X402_* (docs/x402.md): per-request payment of the paid executions with x402's `exact` scheme, settled by this
// node itself, on an EVM chain (EIP-3009 transferWithAuthorization of a USDC-like token, sent by the node's relayer)
// and/or on Solana (an SPL TransferChecked the payer signs, the node co-signing as fee payer). Off unless SVC_X402=on;
// then every setting is checked here and a bad one stops svcd naming its variable. SVC_X402_NETWORK lists the networks
// offered (one EVM and one Solana at most); each takes its chain, token and wallet from its rail's settings
// (SVC_WATCH_USDC_BASE_*, SVC_WALLET_USDC_BASE; SVC_WATCH_USDC_SOLANA_*, SVC_WALLET_USDC_SOLANA) when not given.
import { resolve } from 'node:path';
import { EVM_ADDRESS, EVM_FINALITIES, envInt } from '../env-values.ts';
import type { Finality } from '../finality.ts';
import { isSolanaAddress } from '../rails.ts';

export interface EvmX402Config {
  family: 'evm';
  /** CAIP-2: eip155:<chain id> (Base: eip155:8453) */
  network: string;
  chainId: number;
  /** JSON-RPC over HTTP(S); may carry a provider key, so never logged or published */
  rpcUrl: string;
  /** the token contract (0x + 40 hex, lower case) */
  asset: string;
  /** where payments go (0x + 40 hex, lower case) */
  payTo: string;
  /** the token's EIP-712 domain name and version; null: read from the token (name(), version()) at start */
  tokenName: string | null;
  tokenVersion: string | null;
  /** the file holding the relayer's private key (0x + 64 hex): it pays the gas of each settlement */
  relayerKeyFile: string;
  /** how deep a settlement's block must be before the execution runs: at or below the tag's block less confirmations */
  finality: Finality;
  confirmations: number;
}

/** Solana's commitment levels, shallowest first. */
export const SOLANA_COMMITMENTS = ['processed', 'confirmed', 'finalized'] as const;
export type SolanaCommitment = typeof SOLANA_COMMITMENTS[number];

export interface SvmX402Config {
  family: 'solana';
  /** CAIP-2: solana:<the first 32 characters of the genesis hash> */
  network: string;
  /** JSON-RPC over HTTP(S); may carry a provider key, so never logged or published */
  rpcUrl: string;
  /** the token's mint (base58) */
  asset: string;
  /** the wallet paid (base58): its associated token account of the mint receives each payment */
  payTo: string;
  /** the file holding the fee payer's keypair, as `solana-keygen` writes it (a JSON array of 64 bytes) */
  feePayerKeyFile: string;
  /** how settled a payment's transaction must be before the execution runs */
  commitment: SolanaCommitment;
  /** the most a payment's transaction may ask: compute units, and the priority fee per unit (the fee payer pays) */
  maxComputeUnits: number;
  maxPriorityFeeMicroLamports: number;
}

export interface X402Config {
  evm: EvmX402Config | null;
  solana: SvmX402Config | null;
  /** the payment requirements' maxTimeoutSeconds: the longest a settlement may take */
  maxTimeoutS: number;
  /** how often a settlement's receipt and depth are polled */
  pollMs: number;
}

/** USDC's contract on the chains whose network needs no SVC_X402_ASSET (Circle's published addresses). */
export const KNOWN_USDC: Record<string, string> = {
  'eip155:8453': '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
  'eip155:84532': '0x036cbd53842c5426634e7929541ec2318f3dcf7e',
  'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp': 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
  'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1': '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
};

/** Solana mainnet's CAIP-2 network. */
export const SOLANA_MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';

function address(name: string, v: string | undefined, what: string): string {
  if (!v || !EVM_ADDRESS.test(v)) throw new Error(`${name} must be ${what}, 0x and 40 hex digits`);
  return v.toLowerCase();
}

function solanaAddress(name: string, v: string | undefined, what: string): string {
  if (!v || !isSolanaAddress(v)) throw new Error(`${name} must be ${what}, a base58 Solana address`);
  return v;
}

function rpcUrl(name: string, raw: string | undefined, what: string): string {
  if (!raw) throw new Error(`SVC_X402=on needs ${name}: ${what}`);
  let url: URL | null = null;
  try { url = new URL(raw); } catch { /* refused below */ }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new Error(`${name} must be an http(s) URL`);
  }
  return raw;
}

/** SVC_X402_NETWORK: one or two CAIP-2 networks, comma-separated, at most one of each family. */
function networks(env: NodeJS.ProcessEnv): { evm: string | null; solana: string | null } {
  const raw = env.SVC_X402_NETWORK || 'eip155:8453';
  const out: { evm: string | null; solana: string | null } = { evm: null, solana: null };
  for (const n of raw.split(',').map((x) => x.trim())) {
    const family = /^eip155:[1-9][0-9]{0,15}$/.test(n) && Number.isSafeInteger(Number(n.slice(7))) ? 'evm'
      : /^solana:[1-9A-HJ-NP-Za-km-z]{32}$/.test(n) ? 'solana' : null;
    if (!family) {
      throw new Error('SVC_X402_NETWORK must list eip155:<chain id> and/or solana:<genesis hash, 32 characters>, '
        + `e.g. eip155:8453 for Base, ${SOLANA_MAINNET} for Solana (got ${JSON.stringify(raw)})`);
    }
    if (out[family]) throw new Error(`SVC_X402_NETWORK lists two ${family === 'evm' ? 'EVM' : 'Solana'} networks`);
    out[family] = n;
  }
  return out;
}

function evmConfig(env: NodeJS.ProcessEnv, network: string): EvmX402Config {
  const assetRaw = env.SVC_X402_ASSET || env.SVC_WATCH_USDC_BASE_TOKEN || KNOWN_USDC[network];
  const asset = address('SVC_X402_ASSET', assetRaw, `the token contract (no USDC address is known for ${network})`);
  const payTo = address('SVC_X402_PAY_TO', env.SVC_X402_PAY_TO || env.SVC_WALLET_USDC_BASE,
    'the receiving address (or set SVC_WALLET_USDC_BASE)');
  const keyFile = env.SVC_X402_RELAYER_KEY_FILE;
  if (!keyFile) {
    throw new Error('SVC_X402=on needs SVC_X402_RELAYER_KEY_FILE: a file holding the relayer\'s private key '
      + '(0x + 64 hex), the account that pays each settlement\'s gas');
  }
  const finality = (env.SVC_X402_FINALITY || 'latest') as Finality;
  if (!EVM_FINALITIES.includes(finality)) {
    throw new Error(`SVC_X402_FINALITY must be one of ${EVM_FINALITIES.join(', ')}`);
  }
  const name = env.SVC_X402_TOKEN_NAME || null, version = env.SVC_X402_TOKEN_VERSION || null;
  if ((name === null) !== (version === null)) {
    throw new Error('SVC_X402_TOKEN_NAME and SVC_X402_TOKEN_VERSION must be set together '
      + '(or neither: read from the token)');
  }
  return {
    family: 'evm', network, chainId: Number(network.slice('eip155:'.length)),
    rpcUrl: rpcUrl('SVC_X402_RPC', env.SVC_X402_RPC || env.SVC_WATCH_USDC_BASE_RPC,
      'the EVM chain it settles on (or SVC_WATCH_USDC_BASE_RPC)'),
    asset, payTo, tokenName: name, tokenVersion: version, relayerKeyFile: resolve(keyFile), finality,
    // as the watchers': the block trusted is the tag's less this many (latest and 0: mined is enough)
    confirmations: envInt(env, 'SVC_X402_CONFIRMATIONS', 0, 0, 10_000),
  };
}

function solanaConfig(env: NodeJS.ProcessEnv, network: string): SvmX402Config {
  const asset = solanaAddress('SVC_X402_SOLANA_ASSET',
    env.SVC_X402_SOLANA_ASSET || env.SVC_WATCH_USDC_SOLANA_MINT || KNOWN_USDC[network],
    `the token's mint (no USDC mint is known for ${network})`);
  const payTo = solanaAddress('SVC_X402_SOLANA_PAY_TO', env.SVC_X402_SOLANA_PAY_TO || env.SVC_WALLET_USDC_SOLANA,
    'the receiving wallet (or set SVC_WALLET_USDC_SOLANA)');
  const keyFile = env.SVC_X402_SOLANA_FEE_PAYER_KEY_FILE;
  if (!keyFile) {
    throw new Error('a Solana network in SVC_X402_NETWORK needs SVC_X402_SOLANA_FEE_PAYER_KEY_FILE: the fee '
      + 'payer\'s keypair file (as solana-keygen writes it), the account that pays each settlement\'s fee');
  }
  const commitment = (env.SVC_X402_SOLANA_COMMITMENT || 'confirmed') as SolanaCommitment;
  if (!SOLANA_COMMITMENTS.includes(commitment)) {
    throw new Error(`SVC_X402_SOLANA_COMMITMENT must be one of ${SOLANA_COMMITMENTS.join(', ')}`);
  }
  return {
    family: 'solana', network, asset, payTo, feePayerKeyFile: resolve(keyFile), commitment,
    rpcUrl: rpcUrl('SVC_X402_SOLANA_RPC', env.SVC_X402_SOLANA_RPC || env.SVC_WATCH_USDC_SOLANA_RPC,
      'the Solana cluster it settles on (or SVC_WATCH_USDC_SOLANA_RPC)'),
    maxComputeUnits: envInt(env, 'SVC_X402_SOLANA_MAX_COMPUTE_UNITS', 40_000, 1_000, 1_400_000),
    maxPriorityFeeMicroLamports: envInt(env, 'SVC_X402_SOLANA_MAX_PRIORITY_FEE', 100_000, 0, 5_000_000),
  };
}

/** SVC_X402: unset, empty or `off` → null; `on` → the checked settings. */
export function x402Config(env: NodeJS.ProcessEnv): X402Config | null {
  const mode = env.SVC_X402 ?? '';
  if (mode === '' || mode === 'off') return null;
  if (mode !== 'on') throw new Error(`SVC_X402 must be on or off (got ${JSON.stringify(mode)})`);
  const net = networks(env);
  return {
    evm: net.evm ? evmConfig(env, net.evm) : null,
    solana: net.solana ? solanaConfig(env, net.solana) : null,
    maxTimeoutS: envInt(env, 'SVC_X402_MAX_TIMEOUT_S', 120, 10, 3600),
    pollMs: envInt(env, 'SVC_X402_POLL_MS', 500, 20, 60_000),
  };
}
