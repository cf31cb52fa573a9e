// SEALED_MESSAGE (DESIGN.md §8): HPKE (RFC 9180) base mode to the recipient's X25519 public key
// (packet_hex, 32 bytes), sealing plain_hex. Suite DHKEM(X25519, HKDF-SHA256) / HKDF-SHA256 /
// ChaCha20Poly1305 (0x0020/0x0001/0x0003), info = "svc sealed-message v1", empty aad: any HPKE
// library opens it with the recipient's private key (docs/verify.md §Sealed messages).
// HPKE comes from @hpke/core (checked against the RFC 9180 vectors in the tests), not hand-written.
import { CipherSuite, EncapError, HkdfSha256 } from '@hpke/core';
import { Chacha20Poly1305 } from '@hpke/chacha20poly1305';
import { DhkemX25519HkdfSha256 } from '@hpke/dhkem-x25519';
import { ServiceError } from '../../errors.ts';
import { canonicalDigest, sha256Hex } from '../../protocol/canonical.ts';
import { bytesOf, type Executor } from './types.ts';

export const SEALED_INFO = new TextEncoder().encode('svc sealed-message v1');
export const SEALED_SUITE = {
  kem: 'DHKEM(X25519, HKDF-SHA256)', kem_id: 0x0020,
  kdf: 'HKDF-SHA256', kdf_id: 0x0001,
  aead: 'ChaCha20Poly1305', aead_id: 0x0003,
  mode: 'base',
} as const;

export const hpkeSuite = new CipherSuite({
  kem: new DhkemX25519HkdfSha256(),
  kdf: new HkdfSha256(),
  aead: new Chacha20Poly1305(),
});

const NOT_A_RECIPIENT_KEY = 'packet_hex must be the recipient\'s 32-byte X25519 public key';

/** HPKE base-mode seal; `ekm` (fixed ephemeral key material) only for known-answer tests. */
export async function hpkeSeal(
  recipientPublicKey: Uint8Array, plaintext: Uint8Array, info: Uint8Array = SEALED_INFO, aad?: Uint8Array,
  ekm?: Uint8Array,
): Promise<{ enc: Uint8Array; ct: Uint8Array }> {
  let pk: CryptoKey;
  try {
    pk = await hpkeSuite.kem.deserializePublicKey(recipientPublicKey);
  } catch (e) {
    throw new ServiceError('invalid_request', NOT_A_RECIPIENT_KEY, { field: 'packet_hex' }, { cause: e });
  }
  let r: { enc: ArrayBuffer; ct: ArrayBuffer };
  try {
    r = await hpkeSuite.seal({ recipientPublicKey: pk, info, ...(ekm ? { ekm } : {}) }, plaintext, aad);
  } catch (e) {
    // X25519 with a low-order point (0, 1, p - 1, the points of order 8, ...) is all zeros for any
    // private key; RFC 9180 §7.1.4 has the sender refuse it. Nothing else of the encapsulation is the caller's
    if (!(e instanceof EncapError)) throw e;
    const msg = 'packet_hex is a low-order X25519 point: no shared secret can come of it (RFC 7748 §6.1)';
    throw new ServiceError('invalid_request', msg, { field: 'packet_hex' }, { cause: e });
  }
  return { enc: new Uint8Array(r.enc), ct: new Uint8Array(r.ct) };
}

export const sealedMessage: Executor = async (_ctx, q, a) => {
  const recipient = bytesOf(a.packet_hex), plain = bytesOf(a.plain_hex);
  if (recipient.length !== 32) {
    throw new ServiceError('invalid_request', NOT_A_RECIPIENT_KEY, { field: 'packet_hex' });
  }
  const { enc, ct } = await hpkeSeal(recipient, plain);
  const out = { enc_hex: Buffer.from(enc).toString('hex'), ciphertext_hex: Buffer.from(ct).toString('hex') };
  return {
    fields: { suite: SEALED_SUITE, info_hex: Buffer.from(SEALED_INFO).toString('hex'), aad_hex: '', ...out },
    input_digest: canonicalDigest({
      recipient_sha256: sha256Hex(recipient),
      plaintext_sha256: sha256Hex(plain),
      machine_id: q.machine_id,
    }),
    output_digest: canonicalDigest(out),
    status: 'ok',
  };
};
