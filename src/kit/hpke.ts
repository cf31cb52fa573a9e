// Opening a SEALED_MESSAGE (docs/verify.md §Sealed messages) with the recipient's private key:
// RFC 9180 base mode, DHKEM(X25519, HKDF-SHA256) / HKDF-SHA256 / ChaCha20Poly1305, single shot
// (sequence 0). X25519 is @noble/curves; HKDF's HMAC-SHA256 and the AEAD are the WASM kernels.
import { x25519 } from '@noble/curves/ed25519.js';
import type { Kernels } from '../kernels/kernels.ts';
import { concat, utf8 } from './bytes.ts';

const KEM_ID = 0x0020, KDF_ID = 0x0001, AEAD_ID = 0x0003;
const i2osp2 = (n: number) => Uint8Array.of(n >>> 8, n & 0xff);
const HPKE_V1 = utf8('HPKE-v1');
const KEM_SUITE = concat(utf8('KEM'), i2osp2(KEM_ID));
const SUITE = concat(utf8('HPKE'), i2osp2(KEM_ID), i2osp2(KDF_ID), i2osp2(AEAD_ID));

function labeledExtract(k: Kernels, suite: Uint8Array, salt: Uint8Array, label: string, ikm: Uint8Array) {
  return k.hmacSha256(salt, concat(HPKE_V1, suite, utf8(label), ikm));
}

/** HKDF-Expand for L ≤ 32 (one block): all this suite needs. */
function labeledExpand(k: Kernels, suite: Uint8Array, prk: Uint8Array, label: string, info: Uint8Array, len: number) {
  const labeled = concat(i2osp2(len), HPKE_V1, suite, utf8(label), info);
  return k.hmacSha256(prk, concat(labeled, Uint8Array.of(1))).slice(0, len);
}

/** RFC 9180 Open in base mode; null when the ciphertext is not for this key or was altered. */
export function hpkeOpenBase(
  k: Kernels, recipientPrivateKey: Uint8Array, enc: Uint8Array, ciphertext: Uint8Array, info: Uint8Array,
  aad: Uint8Array,
): Uint8Array | null {
  if (recipientPrivateKey.length !== 32 || enc.length !== 32) return null;
  let dh: Uint8Array, pkR: Uint8Array;
  try {
    dh = x25519.getSharedSecret(recipientPrivateKey, enc); // throws on an all-zero result (RFC 9180 §7.1.4)
    pkR = x25519.getPublicKey(recipientPrivateKey);
  } catch {
    return null;
  }
  const empty = new Uint8Array(0);
  const eaePrk = labeledExtract(k, KEM_SUITE, empty, 'eae_prk', dh);
  const shared = labeledExpand(k, KEM_SUITE, eaePrk, 'shared_secret', concat(enc, pkR), 32);
  const pskIdHash = labeledExtract(k, SUITE, empty, 'psk_id_hash', empty);
  const infoHash = labeledExtract(k, SUITE, empty, 'info_hash', info);
  const context = concat(Uint8Array.of(0), pskIdHash, infoHash);
  const secret = labeledExtract(k, SUITE, shared, 'secret', empty);
  const key = labeledExpand(k, SUITE, secret, 'key', context, 32);
  const nonce = labeledExpand(k, SUITE, secret, 'base_nonce', context, 12);
  return k.chachaOpen(key, nonce, ciphertext, aad);
}
