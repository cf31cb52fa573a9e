// What discovery documents say about the running node and where it is reached. The gateway builds
// it from the core's HELLO (node key, edge certificate) and its configuration; `svcd manifest`
// builds it from the data dir. Documents are pure functions of it and the registry.
import type { PublishedKey } from '../protocol/ed25519.ts';

/** A signing key of the node's key set with its validity window (the protocol's PublishedKey). */
export type NodeKeyInfo = PublishedKey;

export interface NodeInfo {
  node_id: string;
  /** the current signing key */
  key_id: string;
  alg: 'Ed25519';
  /** raw Ed25519 public key, base64url */
  public_key: string;
  /** every signing key, retired ones too, oldest first: what verifies documents signed before a rotation */
  keys: NodeKeyInfo[];
  /** SHA-256 of the edge certificate (DER), hex */
  edge_cert_sha256: string;
}

/**
 * x402 per-request payment of the paid executions as PAYMENT_INFO publishes it (GET /api/v1/payment's
 * `x402`, docs/x402.md); null where the node has it off. Kept apart from NodeInfo and SiteInfo, the
 * manifest's inputs: `svcd manifest` builds those too, without the core, and the hash it prints for DNS must
 * be the served manifest's, so what it does not know the manifest must not carry.
 */
/** One network x402 payments are taken on. */
export interface X402Network {
  /** CAIP-2, e.g. eip155:8453, solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp */
  network: string;
  /** the token contract (EVM) or mint (Solana) */
  asset: string;
  pay_to: string;
  /** who settles (the node itself) and how deep a settlement must be before the execution runs */
  settlement: Record<string, unknown>;
}

export interface X402Info {
  x402_version: number;
  scheme: string;
  /** each network a payment may be made on, in the order a 402's accepts[] lists them */
  networks: X402Network[];
  max_timeout_seconds: number;
  headers: { payment: string; required: string; response: string };
  /** the HTTP paths of the paid executions */
  paid_executions: string[];
}

export interface SiteInfo {
  /** public base URL of the gateway, no trailing slash */
  base_url: string;
  /** public host of the svc/1 edge */
  edge_host: string;
  edge_port: number;
  /** receiving address per rail key (USDT_TRON, USDC_BASE, USDC_SOLANA, USDT_SOLANA) */
  wallets: Record<string, string>;
}

export function siteFromBaseUrl(baseUrl: string, edgePort: number, wallets: Record<string, string>): SiteInfo {
  const u = new URL(baseUrl);
  return {
    base_url: baseUrl.replace(/\/+$/, ''),
    edge_host: u.hostname.replace(/^\[|\]$/g, ''),
    edge_port: edgePort,
    wallets,
  };
}
