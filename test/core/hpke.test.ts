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
