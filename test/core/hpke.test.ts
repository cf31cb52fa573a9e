// The HPKE used by SEALED_MESSAGE reproduces RFC 9180 A.2.1 byte for byte (fixed ephemeral key).
import test from 'ava';
import { hpkeSeal } from '../../src/core/executors/sealed-message.ts';
import { ownVectors, readJson, sharedTest, unhex, hex } from '../helpers.ts';

test('HPKE: RFC 9180 A.2.1 (X25519, HKDF-SHA256, ChaCha20Poly1305, base) enc and first ciphertext', async (t) => {
  const v = ownVectors('hpke-rfc9180-a21.json');
  const e0 = v.encryptions[0];
  const r = await hpkeSeal(unhex(v.pkRm), unhex(e0.pt), unhex(v.info), unhex(e0.aad), unhex(v.ikmE));
  t.is(hex(r.enc), v.enc);
  t.is(hex(r.ct), e0.ct);
});

sharedTest(test, 'HPKE: ../shared RFC 9180 vectors, base mode with ChaCha20Poly1305 (seq 0)',
  'hpke/rfc9180_x25519_sha256_base_psk.json', async (t, path) => {
  const all = readJson(path) as any[];
  const base = all.filter((x) => x.mode === 0 && x.aead_id === 3);
  t.true(base.length >= 1);
  for (const v of base) {
    const e0 = v.encryptions[0];
    const r = await hpkeSeal(unhex(v.pkRm), unhex(e0.pt), unhex(v.info), unhex(e0.aad), unhex(v.ikmE));
    t.is(hex(r.enc), v.enc);
    t.is(hex(r.ct), e0.ct);
  }
});

// The u-coordinates whose X25519 with any private key is all zeros (RFC 7748 §6.1's check; libsodium's
// list of small-order points), each confirmed low-order by @noble/curves below, not by the product.
const P = (1n << 255n) - 19n;
const le = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex').reverse().toString('hex');
const LOW_ORDER: Record<string, string> = {
  'zero': le(0n),
  'one': le(1n),
  'order 8 (RFC 7748)': 'e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800',
  'order 8, the other': '5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157',
  'p - 1 (order 2)': le(P - 1n),
  'p (zero, not reduced)': le(P),
  'p + 1 (one, not reduced)': le(P + 1n),
};

test('HPKE seal to a low-order X25519 key: invalid_request on packet_hex, never an internal error', async (t) => {
  const { x25519 } = await import('@noble/curves/ed25519.js');
  const { ServiceError } = await import('../../src/errors.ts');
  for (const [name, u] of Object.entries(LOW_ORDER)) {
    // the oracle: every private key gives the all-zero shared secret with it (noble refuses that)
    t.throws(() => x25519.getSharedSecret(x25519.utils.randomSecretKey(), unhex(u)), undefined, `noble: ${name}`);
    const e = await t.throwsAsync(hpkeSeal(unhex(u), new Uint8Array([1, 2, 3])), { instanceOf: ServiceError }, name);
    t.is((e as InstanceType<typeof ServiceError>).code, 'invalid_request', name);
    t.regex(e!.message, /low-order|X25519/, name);
  }
  // a key of the right length that is not low-order still seals
  const ok = await hpkeSeal(x25519.getPublicKey(x25519.utils.randomSecretKey()), new Uint8Array([1]));
  t.is(ok.enc.length, 32);
});
