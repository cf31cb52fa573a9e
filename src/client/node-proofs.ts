// The HELLO edge proof, for the client kit (svc hello): Ed25519 over the RFC 8785 canonical JSON of
// its statement, naming the caller's nonce and the edge certificate this connection saw. Returns
// every check by name; `ok` only when all pass. (Pulses: src/client/verify.ts, the kit's verifier.)
import { isObject } from '../kit/bytes.ts';
import { canonicalJson } from '../protocol/canonical.ts';
import { keyIdOf, verifyWithRawKey } from '../protocol/ed25519.ts';
import { PROTOCOL } from '../protocol/wire.ts';
import { normalizeFingerprint } from './client.ts';
import type { Check } from './verify.ts';

export interface NodeProofResult { ok: boolean; checks: Check[]; key_id: string; public_key: string }

/**
 * Verifies HELLO's edge_proof. `nonce`: the one sent (the proof is fresh only if it names it);
 * `certSha256`: the fingerprint of the certificate this connection presented (hex, colons allowed);
 * `publicKey`: a node key the caller already trusts (from the manifest), else the proof's own key.
 */
export function verifyEdgeProof(
  hello: Record<string, unknown>,
  expect: { nonce: string; certSha256?: string; publicKey?: string },
): NodeProofResult {
  const checks: Check[] = [];
  const add = (name: string, ok: boolean, detail?: string) => checks.push({ name, ok, ...(detail ? { detail } : {}) });
  const proof = isObject(hello.edge_proof) ? hello.edge_proof : {};
  const statement = isObject(proof.statement) ? proof.statement : {};
  const publicKey = typeof proof.public_key === 'string' ? proof.public_key : '';
  const keyId = publicKey ? keyIdOf(Buffer.from(publicKey, 'base64url')) : '';
  add('edge_proof is Ed25519 with a statement', proof.alg === 'Ed25519' && isObject(proof.statement));
  add(`statement is svc/edge-proof/v1 for ${PROTOCOL}`,
    statement.type === 'svc/edge-proof/v1' && statement.protocol === PROTOCOL);
  let signed = false;
  try {
    signed = verifyWithRawKey(
      Buffer.from(publicKey, 'base64url'),
      Buffer.from(canonicalJson(statement), 'utf8'),
      Buffer.from(String(proof.signature ?? ''), 'base64url'),
    );
  } catch { /* a statement that cannot be canonicalized is not signed */ }
  add('signature: Ed25519 over the RFC 8785 canonical JSON of the statement', signed);
  add('key_id = SHA-256(public key)[:16], the same in proof and statement',
    !!keyId && proof.key_id === keyId && statement.key_id === keyId);
  // a node is named after its first key; after a key rotation its key set (node_keys) holds that key
  // and names the proof's key current
  const set = (Array.isArray(hello.node_keys) ? hello.node_keys : []).filter(isObject);
  const idOf = (k: Record<string, unknown>) => (typeof k.public_key === 'string'
    ? keyIdOf(Buffer.from(k.public_key, 'base64url')) : '');
  const rotated = set.some((k) => k.public_key === publicKey && k.status === 'current')
    && set.some((k) => hello.node_id === `svc-node-${idOf(k)}`);
  add('node_id names the key (svc-node-<key_id>) or the first key of its key set, in reply and statement',
    !!keyId && (hello.node_id === `svc-node-${keyId}` || rotated) && statement.node_id === hello.node_id);
  add('nonce is the one this client sent', statement.nonce === expect.nonce, String(statement.nonce));
  if (expect.certSha256 !== undefined) {
    const seen = String(statement.edge_cert_sha256);
    add('edge_cert_sha256 is the certificate this connection saw',
      normalizeFingerprint(seen) === normalizeFingerprint(expect.certSha256), seen);
  }
  if (expect.publicKey !== undefined) add('public key is the trusted node key', publicKey === expect.publicKey);
  return { ok: checks.every((c) => c.ok), checks, key_id: keyId, public_key: publicKey };
}
