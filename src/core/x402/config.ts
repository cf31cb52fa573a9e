// SVC_X402_* (docs/x402.md): per-request payment of the paid executions with x402's `exact` scheme on an EVM
// chain (EIP-3009 transferWithAuthorization of a USDC-like token), settled by this node's own relayer key.
// Off unless SVC_X402=on; then every setting is checked here and a bad one stops svcd naming its variable.
// The chain, token and wallet default to the USDC on Base rail's (SVC_WATCH_USDC_BASE_*, SVC_WALLET_USDC_BASE).
import { resolve } from 'node:path';
import { EVM_ADDRESS, EVM_FINALITIES, envInt } from '../env-values.ts';
import type { Finality } from '../finality.ts';

export interface X402Config {
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
  /** the payment requirements' maxTimeoutSeconds: the longest a settlement may take */
  maxTimeoutS: number;
  /** how often a settlement's receipt and depth are polled */
  pollMs: number;
}

/** USDC's contract on the chains whose network needs no SVC_X402_ASSET (Circle's published addresses). */
export const KNOWN_USDC: Record<string, string> = {
  'eip155:8453': '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
  'eip155:84532': '0x036cbd53842c5426634e7929541ec2318f3dcf7e',
};


function address(name: string, v: string | undefined, what: string): string {
  if (!v || !EVM_ADDRESS.test(v)) throw new Error(`${name} must be ${what}, 0x and 40 hex digits`);
  return v.toLowerCase();
}

function rpcUrl(env: NodeJS.ProcessEnv): string {
  const raw = env.SVC_X402_RPC || env.SVC_WATCH_USDC_BASE_RPC;
  if (!raw) throw new Error('SVC_X402=on needs SVC_X402_RPC (or SVC_WATCH_USDC_BASE_RPC): the chain it settles on');
  let url: URL | null = null;
  try { url = new URL(raw); } catch { /* refused below */ }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new Error('SVC_X402_RPC must be an http(s) URL');
  }
  return raw;
}

function network(env: NodeJS.ProcessEnv): { network: string; chainId: number } {
  const raw = env.SVC_X402_NETWORK || 'eip155:8453';
  const m = /^eip155:([1-9][0-9]{0,15})$/.exec(raw);
  if (!m || !Number.isSafeInteger(Number(m[1]))) {
    const got = JSON.stringify(raw);
    throw new Error(`SVC_X402_NETWORK must be eip155:<chain id>, e.g. eip155:8453 for Base (got ${got})`);
  }
  return { network: raw, chainId: Number(m[1]) };
}

/** SVC_X402: unset, empty or `off` → null; `on` → the checked settings. */
export function x402Config(env: NodeJS.ProcessEnv): X402Config | null {
  const mode = env.SVC_X402 ?? '';
  if (mode === '' || mode === 'off') return null;
  if (mode !== 'on') throw new Error(`SVC_X402 must be on or off (got ${JSON.stringify(mode)})`);
  const net = network(env);
  const assetRaw = env.SVC_X402_ASSET || env.SVC_WATCH_USDC_BASE_TOKEN || KNOWN_USDC[net.network];
  const asset = address('SVC_X402_ASSET', assetRaw, `the token contract (no USDC address is known for ${net.network})`);
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
    ...net, rpcUrl: rpcUrl(env), asset, payTo, tokenName: name, tokenVersion: version,
    relayerKeyFile: resolve(keyFile), finality,
    // as the watchers': the block trusted is the tag's less this many (latest and 0: mined is enough)
    confirmations: envInt(env, 'SVC_X402_CONFIRMATIONS', 0, 0, 10_000),
    maxTimeoutS: envInt(env, 'SVC_X402_MAX_TIMEOUT_S', 120, 10, 3600),
    pollMs: envInt(env, 'SVC_X402_POLL_MS', 500, 20, 60_000),
  };
}
