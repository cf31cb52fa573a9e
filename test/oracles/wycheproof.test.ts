// Independent oracles for the primitives the product relies on but did not write, from Project
// Wycheproof (../shared/vectors/wycheproof):
//   ed25519_test.json  → verifyWithRawKey (src/protocol/ed25519.ts, node:crypto): every valid case
//                        verifies, all 63 invalid ones are refused (never thrown); @noble/curves in
//                        strict RFC 8032 mode agrees case by case
//   x25519_test.json   → the X25519 inside SEALED_MESSAGE's HPKE (hpkeSuite.kem, @hpke/dhkem-x25519):
//                        each case decapsulated by the product equals the RFC 9180 shared secret
//                        derived here from the vector's `shared`; policy for an all-zero shared
//                        secret (ZeroSharedSecret): refused, as RFC 9180 §7.1.4 requires
//   hkdf_sha256_test.json → the HKDF of that HPKE suite (hpkeSuite.kdf) and node's hkdfSync (the
//                        idempotency token seal): okm matches; sizes over 255·32 are refused
import test from 'ava';
import { createHmac, hkdfSync } from 'node:crypto';
import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { hpkeSuite } from '../../src/core/executors/sealed-message.ts';
import { verifyWithRawKey } from '../../src/protocol/ed25519.ts';
import { readJson, sharedTest, unhex } from '../helpers.ts';

sharedTest(test, 'Wycheproof Ed25519: every valid signature verifies, all invalid ones are refused ' +
  '(product and @noble/curves agree)', 'wycheproof/ed25519_test.json', (t, path) => {
  const v = readJson(path);
  let valid = 0, invalid = 0;
  for (const g of v.testGroups) {
    const pk = unhex(g.publicKey.pk);
    for (const c of g.tests) {
      const label = `tcId ${c.tcId} (${c.comment}; ${c.flags.join(',')})`;
      let ours: boolean;
      try {
        ours = verifyWithRawKey(pk, unhex(c.msg), unhex(c.sig));
      } catch (e) {
        ours = false;
        t.fail(`${label} threw ${String(e)}`);
      }
      let noble: boolean;
      try { noble = ed25519.verify(unhex(c.sig), unhex(c.msg), pk, { zip215: false }); } catch { noble = false; }
      t.is(ours, c.result === 'valid', label);
      t.is(noble, ours, `${label}: @noble/curves agrees`);
      if (c.result === 'valid') valid++; else invalid++;
    }
  }
  t.deepEqual([valid, invalid], [88, 63]);
});

const hkdfExpand = (prk: Buffer, info: Buffer, len: number) => {
  let prev = Buffer.alloc(0);
  const out: Buffer[] = [];
  for (let i = 1; Buffer.concat(out).length < len; i++) {
    prev = createHmac('sha256', prk).update(Buffer.concat([prev, info, Buffer.of(i)])).digest();
    out.push(prev);
  }
  return Buffer.concat(out).subarray(0, len);
};

/** RFC 9180 §4.1 DHKEM(X25519, HKDF-SHA256) ExtractAndExpand, written here from the RFC text. */
function kemSharedSecret(dh: Buffer, enc: Buffer, pkR: Buffer): Buffer {
  const suite = Buffer.concat([Buffer.from('KEM'), Buffer.of(0x00, 0x20)]);
  const v1 = Buffer.from('HPKE-v1');
  const labeled = Buffer.concat([v1, suite, Buffer.from('eae_prk'), dh]);
  const prk = createHmac('sha256', Buffer.alloc(32)).update(labeled).digest();
  const info = Buffer.concat([Buffer.of(0, 32), v1, suite, Buffer.from('shared_secret'), enc, pkR]);
  return hkdfExpand(prk, info, 32);
}

sharedTest(test, 'Wycheproof X25519: the X25519 inside the product\'s HPKE decapsulates every case to the ' +
  'vector\'s shared secret; an all-zero shared secret is refused', 'wycheproof/x25519_test.json', async (t, path) => {
  const v = readJson(path);
  const kem = hpkeSuite.kem;
  let agreed = 0, refusedZero = 0;
  for (const g of v.testGroups) {
    for (const c of g.tests) {
      const label = `tcId ${c.tcId} (${c.comment}; ${c.flags.join(',')})`;
      const sk = await kem.deserializePrivateKey(unhex(c.private));
      // the recipient's public key, for the KEM context: derived by the second implementation
      const pkR = Buffer.from(x25519.getPublicKey(unhex(c.private)));
      const enc = Buffer.from(c.public, 'hex');
      const zero = /^0+$/.test(c.shared);
      let got: Buffer | null = null;
      try {
        const publicKey = await kem.importKey('raw', new Uint8Array(pkR).buffer, true);
        const recipientKey = { privateKey: sk, publicKey };
        got = Buffer.from(await kem.decap({ enc, recipientKey }));
      } catch { got = null; }
      if (zero) {
        t.is(got, null, `${label}: an all-zero shared secret must be refused`);
        refusedZero++;
      } else {
        t.truthy(got, `${label}: decapsulates`);
        t.is(got?.toString('hex'), kemSharedSecret(Buffer.from(c.shared, 'hex'), enc, pkR).toString('hex'), label);
        agreed++;
      }
    }
  }
  t.true(agreed >= 480 && refusedZero >= 31, `${agreed} agreed, ${refusedZero} zero refused`);
});

sharedTest(test, 'Wycheproof HKDF-SHA256: the HPKE suite\'s HKDF and node\'s hkdfSync give every okm; ' +
  'oversized outputs are refused', 'wycheproof/hkdf_sha256_test.json', async (t, path) => {
  const v = readJson(path);
  const kdf = hpkeSuite.kdf;
  let checked = 0;
  for (const g of v.testGroups) {
    for (const c of g.tests) {
      const label = `tcId ${c.tcId} (${c.comment})`;
      const [ikm, salt, info] = [unhex(c.ikm), unhex(c.salt), unhex(c.info)];
      if (c.result === 'invalid') {
        const expand = async () => kdf.expand(await kdf.extract(new Uint8Array(0), ikm), info, c.size);
        await t.throwsAsync(expand, undefined, label);
        t.throws(() => hkdfSync('sha256', ikm, salt, info, c.size), undefined, label);
        continue;
      }
      t.is(Buffer.from(hkdfSync('sha256', ikm, salt, info, c.size)).toString('hex'), c.okm, `${label}: hkdfSync`);
      t.is(Buffer.from(await kdf.extractAndExpand(salt, ikm, info, c.size)).toString('hex'), c.okm, `${label}: hpke`);
      // HPKE's own extract takes only the salts HPKE uses: none, or one of the hash's length
      if (salt.length === 0 || salt.length === 32) {
        const prk = await kdf.extract(salt, ikm);
        t.is(Buffer.from(await kdf.expand(prk, info, c.size)).toString('hex'), c.okm, `${label}: hpke extract+expand`);
      }
      checked++;
    }
  }
  t.is(checked, 83);
});
