// The node facts the discovery documents are built from (the core's HELLO and PAYMENT_INFO: node id, keys,
// edge certificate, rails' wallets, x402), cached a minute, and the site they are published at (the public
// base URL and the edge's port). The document routes and the MCP endpoint read the same facts.
import type { NodeInfo, NodeKeyInfo, SiteInfo, X402Info } from '../discovery/node-info.ts';
import type { CoreCall } from './core-call.ts';

export interface DiscoverySource {
  baseUrl: () => string;
  edgePort: number;
  /** whether baseUrl is the configured public one (SVC_BASE_URL), not the address the gateway is bound to */
  baseConfigured: boolean;
}

/** x402: PAYMENT_INFO's x402 block, null when the node has x402 off (apart from `node` and `site`: node-info.ts). */
export interface Facts { node: NodeInfo; site: SiteInfo; x402: X402Info | null }

export interface DiscoveryFacts {
  /** the site as published now (wallets: the rails' addresses, when known) */
  site(wallets?: Record<string, string>): SiteInfo;
  /** the node facts and the site, from the core at most once a minute */
  facts(): Promise<Facts>;
}

const CACHE_MS = 60_000;

export function discoveryFacts(core: CoreCall, src: DiscoverySource): DiscoveryFacts {
  let cached: { at: number; node: NodeInfo; wallets: Record<string, string>; x402: X402Info | null } | null = null;
  const site = (wallets: Record<string, string> = {}): SiteInfo => {
    const base = src.baseUrl().replace(/\/+$/, '');
    const edgeHost = new URL(base).hostname.replace(/^\[|\]$/g, '');
    return { base_url: base, edge_host: edgeHost, edge_port: src.edgePort, wallets };
  };
  const facts = async (): Promise<Facts> => {
    if (!cached || Date.now() - cached.at > CACHE_MS) {
      const [hello, pay] = await Promise.all([core('HELLO', {}, null), core('PAYMENT_INFO', {}, null)]);
      const p = hello.edge_proof as { key_id: string; public_key: string; statement: { edge_cert_sha256: string } };
      const current: NodeKeyInfo = {
        key_id: p.key_id, alg: 'Ed25519', public_key: p.public_key,
        valid_from: null, valid_until: null, status: 'current',
      };
      cached = {
        at: Date.now(),
        node: {
          node_id: hello.node_id as string, key_id: p.key_id, alg: 'Ed25519', public_key: p.public_key,
          keys: Array.isArray(hello.node_keys) ? hello.node_keys as NodeKeyInfo[] : [current],
          edge_cert_sha256: p.statement.edge_cert_sha256,
        },
        wallets: Object.fromEntries((pay.rails as { rail: string; address: string }[]).map((r) => [r.rail, r.address])),
        x402: (pay.x402 as X402Info | null | undefined) ?? null,
      };
    }
    return { node: cached.node, site: site(cached.wallets), x402: cached.x402 };
  };
  return { site, facts };
}
