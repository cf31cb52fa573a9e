import test from 'ava';
import fc from 'fast-check';
import { Kernels } from '../../src/kernels/index.ts';
import { pulseReference } from '../reference/pulse-ref.ts';
import { hex, utf8 } from '../helpers.ts';

const k = Kernels.create();

test('pulse: kernel equals the node:crypto reference for every bit count class (1..65536)', (t) => {
  const seed = utf8('seed-0123456789abcdef0123456789ab');
  for (const bits of [1, 2, 7, 8, 9, 255, 256, 257, 1000, 4096, 65535, 65536]) {
    const ctx = utf8(`q-${bits}`);
    const got = k.pulseExpand(seed, ctx, bits);
    t.is(got.length, Math.ceil(bits / 8));
    t.is(hex(got), hex(pulseReference(seed, ctx, bits)), `bits=${bits}`);
  }
});

test('pulse: random seeds, contexts and bit counts equal the reference (property)', (t) => {
  fc.assert(fc.property(
    fc.uint8Array({ maxLength: 100 }), fc.uint8Array({ maxLength: 300 }), fc.integer({ min: 1, max: 65536 }),
    (s, c, bits) => hex(k.pulseExpand(s, c, bits)) === hex(pulseReference(s, c, bits)),
  ), { numRuns: 150 });
  t.pass();
});

test('pulse: a non-multiple of 8 zero-pads the low bits of the last byte, and bits is bound into every block', (t) => {
  const seed = new Uint8Array(32).fill(7);
  for (let bits = 1; bits <= 16; bits++) {
    const out = k.pulseExpand(seed, new Uint8Array(0), bits);
    const unused = (8 - (bits % 8)) % 8;
    t.is(out[out.length - 1]! & ((1 << unused) - 1), 0, `bits=${bits}`);
  }
  // bits is bound into every block: a shorter pulse is not a prefix of a longer one
  t.not(
    hex(k.pulseExpand(seed, new Uint8Array(0), 256)),
    hex(k.pulseExpand(seed, new Uint8Array(0), 512).subarray(0, 32)),
  );
});

test('pulse: seed and context boundaries are unambiguous (length-prefixed)', (t) => {
  const a = k.pulseExpand(utf8('ab'), utf8('c'), 256);
  const b = k.pulseExpand(utf8('a'), utf8('bc'), 256);
  t.not(hex(a), hex(b));
});

test('pulse: bits outside 1..65536 are refused with a named error', (t) => {
  for (const bits of [0, -1, 65537, 1.5, Number.NaN]) {
    t.throws(
      () => k.pulseExpand(new Uint8Array(1), new Uint8Array(0), bits),
      { message: /bits must be an integer in 1\.\.65536/ },
    );
  }
  t.is(k.raw.pulse_expand(0, 0, 0, 0, 0, 0, 100), -1, 'raw ABI returns ERR_INPUT');
  t.is(k.raw.pulse_expand(0, 0, 0, 0, 64, 0, 7), -4, 'raw ABI returns ERR_CAPACITY');
});
