// Ed25519 verification with a raw 32-byte public key — the form the service publishes and offline
// verifiers hold (RFC 8410 SPKI prefix + key) — and the key id named after it.
import { createHash, createPublicKey, verify } from 'node:crypto';

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export function verifyWithRawKey(publicKeyRaw: Uint8Array, data: Uint8Array, signature: Uint8Array): boolean {
  if (publicKeyRaw.length !== 32 || signature.length !== 64) return false;
  const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKeyRaw]), format: 'der', type: 'spki' });
  return verify(null, data, key, signature);
}

/**
 * key_id = hex(SHA-256(raw public key))[:16] (docs/verify.md §Receipts); node_id = svc-node-<key_id>.
 * The embedding kit derives the same with its portable kernels (src/kit/verify.ts keyIdOf).
 */
export function keyIdOf(publicKeyRaw: Uint8Array): string {
  return createHash('sha256').update(publicKeyRaw).digest('hex').slice(0, 16);
}

/**
 * A signing key of a node's key set as it is published (HELLO's node_keys, the manifest, nodes.json):
 * its validity window, null meaning unbounded on that side (valid_from null: since the node's first
 * start; valid_until null: while the key is current).
 */
export interface PublishedKey {
  key_id: string;
  alg: 'Ed25519';
  public_key: string;
  valid_from: string | null;
  valid_until: string | null;
  status: 'current' | 'retired';
}
