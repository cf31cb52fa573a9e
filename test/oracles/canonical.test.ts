// RFC 8785 canonical JSON against the RFC author's reference vectors (../shared/vectors/jcs-rfc8785),
// byte for byte: the product's canonicalJson (src/protocol/jcs.ts) and, as a second opinion, the
// independent json-canonicalize package must both produce every expected output.
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { canonicalize as otherJcs } from 'json-canonicalize';
import { canonicalDigest, canonicalJson, sha256Hex } from '../../src/protocol/canonical.ts';
import { sharedTest } from '../helpers.ts';

sharedTest(test, 'canonical JSON: RFC 8785 reference vectors (cyberphone/json-canonicalization), byte for byte',
  'jcs-rfc8785', (t, dir) => {
    const names = readdirSync(join(dir, 'input')).filter((n) => n.endsWith('.json')).sort();
    t.deepEqual(names, ['arrays.json', 'french.json', 'structures.json', 'unicode.json', 'values.json', 'weird.json']);
    for (const name of names) {
      const input = JSON.parse(readFileSync(join(dir, 'input', name), 'utf8'));
      const want = readFileSync(join(dir, 'output', name));
      t.is(Buffer.from(canonicalJson(input), 'utf8').toString('hex'), want.toString('hex'), `${name}: product`);
      t.is(Buffer.from(otherJcs(input), 'utf8').toString('hex'), want.toString('hex'), `${name}: json-canonicalize`);
      t.is(canonicalDigest(input), sha256Hex(want), `${name}: digest of the canonical bytes`);
      const outhex = readFileSync(join(dir, 'outhex', name.replace('.json', '.txt')), 'utf8');
      const hexDump = outhex.trim().split(/\s+/).join('');
      t.is(want.toString('hex'), hexDump, `${name}: output and outhex agree`);
    }
  });

test('canonical JSON: values JSON cannot carry are refused, not signed as something else', (t) => {
  t.throws(() => canonicalJson(undefined), { instanceOf: TypeError });
  t.throws(() => canonicalJson(() => 1));
  t.throws(() => canonicalJson(Number.NaN));
  t.throws(() => canonicalJson(Number.POSITIVE_INFINITY));
});

// The product's JCS (src/protocol/jcs.ts) is its own code; the `canonicalize` package it replaced and
// json-canonicalize are two independent implementations of the same RFC. On random values they must all
// agree byte for byte, and on strings of raw UTF-16 units (lone surrogates included) the product must
// refuse exactly what `canonicalize` refuses.
const theirJcs = (v: unknown): string => {
  const s = canonicalize(v);
  if (s === undefined) throw new TypeError('no JSON form');
  return s;
};
const units = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)) });
const fullUnicode = { stringUnit: 'binary' } as const;

test('canonical JSON agrees with two independent RFC 8785 implementations on random JSON values', (t) => {
  fc.assert(fc.property(fc.jsonValue(fullUnicode), (v) => {
    const mine = canonicalJson(v);
    return mine === theirJcs(v) && mine === otherJcs(v);
  }), { numRuns: 2000 });
  t.pass();
});

test('canonical JSON refuses a lone surrogate exactly where `canonicalize` does, in names and values', (t) => {
  fc.assert(fc.property(units, units, (name, value) => {
    for (const v of [value, { [name]: 1 }, [{ k: value }]]) {
      let mine: string | Error, theirs: string | Error;
      try { mine = canonicalJson(v); } catch (e) { mine = e as Error; }
      try { theirs = theirJcs(v); } catch (e) { theirs = e as Error; }
      if (typeof mine === 'string' ? mine !== theirs : !(theirs instanceof Error)) return false;
    }
    return true;
  }), { numRuns: 3000 });
  t.throws(() => canonicalJson({ ['\udc00x']: 1 }), { message: /surrogate/i });
  t.throws(() => canonicalJson(['a\ud83d']), { message: /surrogate/i });
  t.is(canonicalJson('\ud83d\ude00'), '"\ud83d\ude00"');
});

test('canonical JSON: toJSON, undefined members and elements, nested and shared values as `canonicalize` has them',
  (t) => {
    const shared = { z: 1, a: [2] };
    const values: unknown[] = [
      { at: new Date(0), b: undefined, a: [undefined, 1, { toJSON: () => 'x' }] },
      { x: shared, y: [shared, shared] },
      [[[]], {}, [{}], -0, 1e-7, 5e-324, 1.7976931348623157e308, 2 ** 53 + 2],
      { 10: 'ten', 9: 'nine', '': 'empty', A: 'upper', a: 'lower' },
    ];
    for (const v of values) t.is(canonicalJson(v), theirJcs(v));
    const loop: Record<string, unknown> = {};
    loop.self = [loop];
    t.throws(() => canonicalJson(loop), { message: /circular/i });
    for (const big of [1n, [1n], { n: 1n }, { n: [1n] }]) t.throws(() => canonicalJson(big), { message: /BigInt/ });
    for (const n of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      t.throws(() => canonicalJson([n]), { message: `${n} is not allowed` });
    }
    // toJSON's own value is canonical too, members sorted; a backslash before "ud" is no surrogate
    const custom = { toJSON: () => ({ b: 1, a: [2] }) };
    t.is(canonicalJson({ c: custom }), theirJcs({ c: custom }));
    t.is(canonicalJson({ c: custom }), '{"c":{"a":[2],"b":1}}');
    t.is(canonicalJson({ n: 1, path: 'C:\\udir' }), '{"n":1,"path":"C:\\\\udir"}');
    t.is(canonicalJson({ path: 'C:\\udir', n: 1 }), theirJcs({ path: 'C:\\udir', n: 1 }));
  });
