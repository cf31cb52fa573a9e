// Ed25519 verification with a raw 32-byte public key — the form the service publishes and offline
// verifiers hold (RFC 8410 SPKI prefix + key).
import { createPublicKey, verify } from 'node:crypto';

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export function verifyWithRawKey(publicKeyRaw: Uint8Array, data: Uint8Array, signature: Uint8Array): boolean {
  if (publicKeyRaw.length !== 32 || signature.length !== 64) return false;
  const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKeyRaw]), format: 'der', type: 'spki' });
  return verify(null, data, key, signature);
}
