// Receipts (DESIGN.md §8): canonical JSON (RFC 8785) of the execution's facts, signed with the
// node's Ed25519 key, plus the result tag — HMAC-SHA256 under the node's result key over the
// canonical JSON of {service, quote_id, input_digest, output_digest}. Byte layouts: docs/verify.md.
// After a key rotation a receipt verifies against the key its key_id names, if issued_at lies in that
// key's window; a result tag checks against any result key of the set (docs/operations.md).
// Several nodes on one shared store (docs/scale-out.md): each publishes its signing keys there (node_keys,
// one record per node id, at start and after a rotation), and a receipt another node signed verifies
// against that node's published keys, with their windows, as its own do.
import type { Kernels } from '../kernels/index.ts';
import { newId } from './ids.ts';
import { canonicalJson } from '../protocol/canonical.ts';
import { verifyWithRawKey, type PublishedKey } from '../protocol/ed25519.ts';
import { put, type Range, type Store } from '../store/store.ts';
import { inWindow, type NodeIdentity } from './node-identity.ts';
import { PRICE_VERSION, QUOTE_TERMS_VERSION } from '../protocol/pricing.ts';
import type { PaymentRef } from './x402/payments.ts';

export const RECEIPT_FORMAT = 'svc_receipt_v1';

export interface ReceiptBody {
  format: typeof RECEIPT_FORMAT;
  receipt_id: string;
  service: string;
  command: string;
  quote_id: string;
  machine_id: string;
  units_charged: string;
  price_version: string;
  quote_terms_version: number;
  input_digest: string;
  output_digest: string;
  status: string;
  issued_at: string;
  node_id: string;
  key_id: string;
  result_tag: string;
  /** an x402 payment paid this execution (docs/x402.md): signed with the rest */
  payment?: PaymentRef;
}

export interface SignedReceipt { receipt: ReceiptBody; signature: string }

export function resultTag(k: Kernels, id: NodeIdentity, f: {
  service: string; quote_id: string; input_digest: string; output_digest: string;
}): string {
  const msg = new TextEncoder().encode(canonicalJson({
    service: f.service,
    quote_id: f.quote_id,
    input_digest: f.input_digest,
    output_digest: f.output_digest,
  }));
  return Buffer.from(k.hmacSha256(id.resultKey(), msg)).toString('hex');
}

/** Every tag the result key set gives these fields, current key first (VERIFY_RESULT compares each). */
export function resultTags(k: Kernels, id: NodeIdentity, f: {
  service: string; quote_id: string; input_digest: string; output_digest: string;
}): Buffer[] {
  const msg = new TextEncoder().encode(canonicalJson({
    service: f.service,
    quote_id: f.quote_id,
    input_digest: f.input_digest,
    output_digest: f.output_digest,
  }));
  return id.resultKeys().map((key) => Buffer.from(k.hmacSha256(key, msg)));
}

export function issueReceipt(k: Kernels, id: NodeIdentity, f: {
  service: string; command: string; quote_id: string; machine_id: string; units_charged: bigint;
  input_digest: string; output_digest: string; status: string; at: Date; payment?: PaymentRef;
}): SignedReceipt {
  // the key of the receipt's own time: a rotation between the execution's clock reading and here
  // must not give it a key whose window starts after issued_at
  const signer = id.signerAt(f.at);
  const receipt: ReceiptBody = {
    format: RECEIPT_FORMAT,
    receipt_id: newId('rcpt'),
    service: f.service, command: f.command, quote_id: f.quote_id, machine_id: f.machine_id,
    units_charged: f.units_charged.toString(),
    price_version: PRICE_VERSION, quote_terms_version: QUOTE_TERMS_VERSION,
    input_digest: f.input_digest, output_digest: f.output_digest, status: f.status,
    issued_at: f.at.toISOString(), node_id: id.nodeId, key_id: signer.keyId,
    result_tag: resultTag(k, id, f),
    ...(f.payment ? { payment: f.payment } : {}),
  };
  // inline, not on libuv's pool: the pool costs more CPU per flow than it takes off this thread (about
  // 35 µs more per paid flow on 2 cores, `npm run bench:cpu`; docs/performance.md "Tried and not kept")
  const signature = signer.sign(Buffer.from(canonicalJson(receipt))).toString('base64url');
  return { receipt, signature };
}

/** What a node publishes of itself on a shared store (sublevel node_keys, key = node id). */
export interface NodeKeysRecord { node_id: string; signing: PublishedKey[]; published_at: string }

/** Publishes this node's signing keys (with their windows) for the other nodes of a shared store. */
export async function publishNodeKeys(store: Store, id: NodeIdentity, now: Date): Promise<void> {
  const rec: NodeKeysRecord = { node_id: id.nodeId, signing: id.publishedKeys(), published_at: now.toISOString() };
  await store.write([put('node_keys', id.nodeId, rec)]);
}

/**
 * The key set of the node a receipt names: this node's own, or the one another node of a shared store
 * published (undefined: no such node known here).
 */
export async function signerKeys(store: Store, id: NodeIdentity, nodeId: unknown): Promise<PublishedKey[] | undefined> {
  if (nodeId === id.nodeId) return id.publishedKeys();
  if (typeof nodeId !== 'string') return undefined;
  return (await store.get<NodeKeysRecord & Record<string, unknown>>('node_keys', nodeId))?.signing;
}

/**
 * Every key set known here, by node id (this node's and those published on the store, as of `range`'s
 * snapshot): for checking many receipts at once (the audit).
 */
export async function allSignerKeys(
  store: Store, id: NodeIdentity, range: Range = {},
): Promise<Map<string, PublishedKey[]>> {
  const sets = new Map<string, PublishedKey[]>();
  for await (const [k, v] of store.entries<NodeKeysRecord & Record<string, unknown>>('node_keys', range)) {
    sets.set(k, v.signing);
  }
  sets.set(id.nodeId, id.publishedKeys());
  return sets;
}

/**
 * Checks a receipt against the key set of the node that signed it (signerKeys), and names the key its
 * key_id names. Reasons: unknown_key, bad_signature, outside_key_window (issued_at not in the key's window).
 */
export function verifyReceipt(keys: readonly PublishedKey[] | undefined, r: SignedReceipt): {
  valid: boolean; reason?: string; key?: PublishedKey;
} {
  const key = keys?.find((k) => k.key_id === r.receipt.key_id);
  if (!key) return { valid: false, reason: 'unknown_key' };
  const bytes = Buffer.from(canonicalJson(r.receipt));
  if (!verifyWithRawKey(Buffer.from(key.public_key, 'base64url'), bytes, Buffer.from(r.signature, 'base64url'))) {
    return { valid: false, reason: 'bad_signature', key };
  }
  if (!inWindow(key, r.receipt.issued_at)) return { valid: false, reason: 'outside_key_window', key };
  return { valid: true, key };
}
