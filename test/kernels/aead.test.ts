import test from 'ava';
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { xchacha20poly1305, chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { Kernels } from '../../src/kernels/index.ts';
import { hex, interestingLengths, ownVectors, prng, readJson, sharedTest, unhex } from '../helpers.ts';

const k = Kernels.create();

test('ChaCha20: RFC 8439 §2.4.2 and A.2 encryption vectors', (t) => {
  const v = ownVectors('chacha20-poly1305.json');
  for (const c of v.chacha20) {
    t.is(hex(k.chacha20(unhex(c.key), unhex(c.nonce), c.counter, unhex(c.plaintext))), c.ciphertext, c.section);
  }
});

test('Poly1305: RFC 8439 §2.5.2 and A.3 vectors (all 12, including the edge cases)', (t) => {
  const v = ownVectors('chacha20-poly1305.json');
  t.is(v.poly1305.length, 12);
  for (const c of v.poly1305) t.is(hex(k.poly1305(unhex(c.key), unhex(c.message))), c.tag, c.section);
});

test('ChaCha20-Poly1305 AEAD: RFC 8439 §2.8.2 and A.5 seal and open', (t) => {
  const v = ownVectors('chacha20-poly1305.json');
  for (const c of v.aead) {
    const sealed = k.chachaSeal(unhex(c.key), unhex(c.nonce), unhex(c.plaintext), unhex(c.aad));
    t.is(hex(sealed), c.ciphertext + c.tag, c.section);
    t.is(hex(k.chachaOpen(unhex(c.key), unhex(c.nonce), sealed, unhex(c.aad))!), c.plaintext);
  }
});

test('HChaCha20 and XChaCha20-Poly1305: draft-irtf-cfrg-xchacha-03 §2.2.1 and A.3.1', (t) => {
  const v = ownVectors('xchacha20-poly1305.json');
  for (const c of v.hchacha20) t.is(hex(k.hchacha20(unhex(c.key), unhex(c.nonce))), c.subkey);
  for (const c of v.aead) {
    const sealed = k.xchachaSeal(unhex(c.key), unhex(c.nonce), unhex(c.plaintext), unhex(c.aad));
    t.is(hex(sealed), c.ciphertext + c.tag);
    t.is(hex(k.xchachaOpen(unhex(c.key), unhex(c.nonce), sealed, unhex(c.aad))!), c.plaintext);
  }
});

function wycheproofAead(x: boolean) {
  return (t: import('ava').ExecutionContext, path: string) => {
    const w = readJson(path);
    const nonceBits = x ? 192 : 96;
    let valid = 0, invalid = 0;
    for (const g of w.testGroups) {
      for (const c of g.tests) {
        const key = unhex(c.key), iv = unhex(c.iv), aad = unhex(c.aad), msg = unhex(c.msg);
        const sealedWant = c.ct + c.tag;
        const supported = g.ivSize === nonceBits && g.keySize === 256 && g.tagSize === 128;
        if (c.result === 'valid') {
          t.true(supported, `tcId ${c.tcId}: valid case with unsupported parameters`);
          const sealed = x ? k.xchachaSeal(key, iv, msg, aad) : k.chachaSeal(key, iv, msg, aad);
          t.is(hex(sealed), sealedWant, `tcId ${c.tcId} seal`);
          const opened = x
            ? k.xchachaOpen(key, iv, unhex(sealedWant), aad)
            : k.chachaOpen(key, iv, unhex(sealedWant), aad);
          t.is(opened && hex(opened), c.msg, `tcId ${c.tcId} open`);
          valid++;
        } else {
          // invalid: either the parameters are refused up front or the ciphertext does not open
          let opened: Uint8Array | null = null;
          try {
            opened = x
              ? k.xchachaOpen(key, iv, unhex(sealedWant), aad)
              : k.chachaOpen(key, iv, unhex(sealedWant), aad);
          } catch (e) {
            t.regex((e as Error).message, /must be/, `tcId ${c.tcId} refused for a named reason`);
          }
          t.is(opened, null, `tcId ${c.tcId} must be rejected`);
          invalid++;
        }
      }
    }
    t.true(valid > 200 && invalid > 50, `${valid} valid / ${invalid} invalid`);
  };
}
sharedTest(
  test,
  'ChaCha20-Poly1305: Wycheproof chacha20_poly1305_test.json',
  'wycheproof/chacha20_poly1305_test.json',
  wycheproofAead(false),
);
sharedTest(
  test,
  'XChaCha20-Poly1305: Wycheproof xchacha20_poly1305_test.json',
  'wycheproof/xchacha20_poly1305_test.json',
  wycheproofAead(true),
);

test('XChaCha20-Poly1305: equals @noble/ciphers on lengths 0..70,000 and random AAD; opens noble output', (t) => {
  const r = prng(8439);
  for (const n of interestingLengths(3, 120)) {
    const key = r.bytes(32), nonce = r.bytes(24), aad = r.bytes(r.int(80)), msg = r.bytes(n);
    const want = xchacha20poly1305(key, nonce, aad).encrypt(msg);
    t.is(hex(k.xchachaSeal(key, nonce, msg, aad)), hex(want), `len ${n}`);
    t.is(hex(k.xchachaOpen(key, nonce, want, aad)!), hex(msg));
  }
});

test('ChaCha20-Poly1305: equals node:crypto and @noble/ciphers on random inputs', (t) => {
  const r = prng(7539);
  for (const n of interestingLengths(5, 100)) {
    const key = r.bytes(32), nonce = r.bytes(12), aad = r.bytes(r.int(40)), msg = r.bytes(n);
    const c = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
    c.setAAD(aad, { plaintextLength: msg.length });
    const want = Buffer.concat([c.update(msg), c.final(), c.getAuthTag()]);
    t.is(hex(k.chachaSeal(key, nonce, msg, aad)), want.toString('hex'), `len ${n}`);
    if (n % 3 === 0) t.is(hex(chacha20poly1305(key, nonce, aad).encrypt(msg)), want.toString('hex'));
    const d = createDecipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
    d.setAAD(aad, { plaintextLength: n }); d.setAuthTag(want.subarray(n));
    t.is(Buffer.concat([d.update(want.subarray(0, n)), d.final()]).toString('hex'), hex(msg));
  }
});

test('AEAD open rejects every single-bit flip of ciphertext, tag, nonce, key and AAD', (t) => {
  const r = prng(1);
  const key = r.bytes(32), nonce = r.bytes(24), aad = r.bytes(20), msg = r.bytes(70);
  const sealed = k.xchachaSeal(key, nonce, msg, aad);
  for (let bit = 0; bit < sealed.length * 8; bit++) {
    const bad = sealed.slice(); bad[bit >> 3]! ^= 1 << (bit & 7);
    t.is(k.xchachaOpen(key, nonce, bad, aad), null);
  }
  for (const [what, f] of [['nonce', nonce], ['key', key], ['aad', aad]] as const) {
    const bad = f.slice(); bad[5]! ^= 0x80;
    const args = { key, nonce, aad, [what]: bad };
    t.is(k.xchachaOpen(args.key, args.nonce, sealed, args.aad), null, what);
  }
  t.is(k.xchachaOpen(key, nonce, sealed.subarray(0, 15), aad), null, 'shorter than a tag');
});

test('ChaCha20 keystream: counter continuity across the 4-block SIMD path and the scalar tail', (t) => {
  const r = prng(77);
  const key = r.bytes(32), nonce = r.bytes(12);
  const whole = k.chacha20(key, nonce, 7, new Uint8Array(64 * 13));
  for (let b = 0; b < 13; b++) {
    t.is(
      hex(k.chacha20(key, nonce, 7 + b, new Uint8Array(64))),
      hex(whole.subarray(b * 64, b * 64 + 64)),
      `block ${b}`,
    );
  }
});
