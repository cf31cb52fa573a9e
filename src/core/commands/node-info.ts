// The node's own commands: who it is (HELLO, with a signed edge proof), what it offers (CAPS,
// PAYMENT_INFO), how it is (HEALTH) and its pulse chain (PULSE). Free, and the same on every listener.
import { ServiceError } from '../../errors.ts';
import {
  PAYMENT_REQUIRED_HEADER, PAYMENT_RESPONSE_HEADER, PAYMENT_SIGNATURE_HEADER, X402_VERSION,
} from '../../protocol/x402.ts';
import { canonicalJson } from '../../protocol/canonical.ts';
import { PRICE_BOOK, PRICE_VERSION, QUOTE_TERMS_VERSION } from '../../protocol/pricing.ts';
import { ALL_COMMANDS, AUXILIARY, CAPABILITIES, COMMANDS, isPaidExecution } from '../../protocol/registry.ts';
import { SERVICES } from '../../protocol/services.ts';
import { CORE_VERSION as VERSION } from '../../protocol/versions.ts';
import { PROTOCOL } from '../../protocol/wire.ts';
import type { Handler, Listener, NodeState, Reply } from '../call.ts';
import type { CoreContext } from '../context.ts';
import { isOffered } from '../executions.ts';
import { takesPayments } from '../invoices.ts';
import type { X402Config } from '../x402/config.ts';

/** HELLO: the node's identity, and a signed statement binding its node key to the edge's TLS certificate. */
function hello(ctx: CoreContext, nonce: string | undefined): Reply {
  const id = ctx.identity;
  const statement = {
    type: 'svc/edge-proof/v1', protocol: PROTOCOL, node_id: id.nodeId, key_id: id.keyId,
    edge_cert_sha256: ctx.edgeFingerprint, nonce: nonce ?? null, time: ctx.now().toISOString(),
  };
  const signature = id.sign(Buffer.from(canonicalJson(statement), 'utf8')).toString('base64url');
  return {
    protocol: PROTOCOL, version: VERSION, node_id: id.nodeId, time: statement.time,
    edge_proof: {
      alg: 'Ed25519',
      key_id: id.keyId,
      public_key: id.public.public_key,
      statement,
      signature,
      signed_bytes: 'RFC 8785 canonical JSON of statement',
    },
    pulse: { chain_id: ctx.chain.chainId, latest_index: ctx.chain.latest?.pulse.index ?? null },
    node_keys: id.publishedKeys(),
  };
}

/** CAPS: the registry as this node offers it. */
function caps(): Reply {
  return {
    protocol: PROTOCOL, version: VERSION, capability_count: CAPABILITIES.length, capabilities: CAPABILITIES,
    commands: COMMANDS.map((c) => ({
      name: c.name, group: c.group, access: c.access, http: c.http, cli: c.cli, billing: c.billing, auth: c.auth,
      rate_class: c.rateClass, execution: c.execution, purpose: c.purpose,
      ...(c.execution ? { offered: isOffered(c.name) } : {}),
    })),
    auxiliary: AUXILIARY.filter((c) => c.access !== 'admin' && c.access !== 'gateway').map((c) => c.name),
    services: SERVICES.map((s) => ({
      service: s.service, command: s.command, quote_billing: s.quoteBilling, offered: isOffered(s.command),
    })),
    price_book: PRICE_BOOK, price_version: PRICE_VERSION, quote_terms_version: QUOTE_TERMS_VERSION,
  };
}

/**
 * HEALTH: serving, stopping or unavailable (its store does not answer), the store, the kernel pool, the
 * pulse chain and the watchers. Why the store does not answer is told on the admin socket only.
 */
async function health(node: NodeState, listener: Listener | undefined): Promise<Reply> {
  const ctx = node.ctx;
  const store = await node.storeHealth.state();
  const status = node.stopping ? 'stopping' : store.ok ? 'ok' : 'unavailable';
  const why = !store.ok && listener === 'admin' ? { reason: store.reason } : {};
  return {
    status, version: VERSION, node_id: ctx.identity.nodeId,
    store: { status: store.ok ? 'ok' : 'unavailable', ...why },
    pool: { threads: ctx.pool.threads, in_flight: ctx.pool.inFlight },
    pulse: { chain_id: ctx.chain.chainId, latest_index: ctx.chain.latest?.pulse.index ?? null },
    ...(node.watchers?.size ? { watchers: node.watchers.status() } : {}),
  };
}

function paymentInfo(ctx: CoreContext): Reply {
  return {
    rails: ctx.config.rails.map((r) => ({
      ...r, takes_payments: takesPayments(ctx, r),
      // a watcher credits payments on its own; else the operator settles them by hand
      settled_by: ctx.config.watchers.some((w) => w.rail === r.rail) ? 'watcher' : 'operator',
    })),
    payments: ctx.config.payments ?? 'live',
    settlement: 'crypto only',
    reference_value_usd_per_svcC: '1.00',
    x402: x402Info(ctx.config.x402 ?? null),
  };
}

/** Per-request payment of the paid executions (docs/x402.md), as x402 clients need to know it; null: off. */
function x402Info(cfg: X402Config | null): Reply | null {
  if (!cfg) return null;
  const networks: Reply[] = [];
  if (cfg.evm) {
    const { network, asset, payTo, finality, confirmations } = cfg.evm;
    networks.push({ network, asset, pay_to: payTo, settlement: { by: 'node relayer', finality, confirmations } });
  }
  if (cfg.solana) {
    const { network, asset, payTo, commitment } = cfg.solana;
    networks.push({ network, asset, pay_to: payTo, settlement: { by: 'node fee payer', commitment } });
  }
  return {
    x402_version: X402_VERSION, scheme: 'exact', networks, max_timeout_seconds: cfg.maxTimeoutS,
    headers: {
      payment: PAYMENT_SIGNATURE_HEADER, required: PAYMENT_REQUIRED_HEADER, response: PAYMENT_RESPONSE_HEADER,
    },
    paid_executions: ALL_COMMANDS.filter(isPaidExecution).map((c) => c.http!.path),
  };
}

async function pulse(ctx: CoreContext, index: number | undefined): Promise<Reply> {
  const p = index === undefined ? ctx.chain.latest : await ctx.chain.get(index);
  if (!p) throw new ServiceError('not_found', `no pulse ${String(index)}`);
  // the key that signed this pulse (a pulse from before a key rotation names the retired key)
  return {
    ...p, public_key: ctx.identity.signingKey(p.pulse.key_id)?.public_key ?? ctx.identity.signer().publicKey,
    node_keys: ctx.identity.publishedKeys(),
  };
}

export const NODE_COMMANDS: Record<string, Handler> = {
  HELLO: (n, c) => hello(n.ctx, c.args.nonce as string | undefined),
  CAPS: () => caps(),
  HEALTH: (n, c) => health(n, c.listener),
  PAYMENT_INFO: (n) => paymentInfo(n.ctx),
  PULSE: (n, c) => pulse(n.ctx, c.args.index as number | undefined),
};
