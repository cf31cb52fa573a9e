// canonicalJson is RFC 8785 (JCS): the examples of RFC 8785 §3.2.2 and §3.2.3 byte for byte, and
// what JCS refuses. Everything the node signs goes through it, so a dependency change (the
// canonicalize package is pinned to 4.0.0, whose engines allow Node 20) must keep these.
import test from 'ava';
import { createHash } from 'node:crypto';
import { canonicalDigest, canonicalJson } from '../../src/protocol/canonical.ts';

test('RFC 8785 §3.2.2: numbers (ECMAScript form), string escaping, literals, sorted keys', (t) => {
  const input = JSON.parse('{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
    + ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}');
  t.is(canonicalJson(input), '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
    + '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
});

test('RFC 8785 §3.2.3: keys sorted by UTF-16 code units', (t) => {
  const input = {
    '\u20ac': 'Euro Sign', '\r': 'Carriage Return', '\ufb33': 'Hebrew Letter Dalet With Dagesh', 1: 'One',
    '\ud83d\ude00': 'Emoji: Grinning Face', '\u0080': 'Control', '\u00f6': 'Latin Small Letter O With Diaeresis',
  };
  // (not through JSON.parse: JavaScript objects list integer-like keys such as "1" first)
  const members = [
    ['\\r', 'Carriage Return'], ['1', 'One'], ['\u0080', 'Control'], ['\u00f6', 'Latin Small Letter O With Diaeresis'],
    ['\u20ac', 'Euro Sign'], ['\ud83d\ude00', 'Emoji: Grinning Face'], ['\ufb33', 'Hebrew Letter Dalet With Dagesh'],
  ];
  t.is(canonicalJson(input), `{${members.map(([k, v]) => `"${k}":"${v}"`).join(',')}}`);
});

test('JCS refuses what I-JSON cannot carry; undefined members are left out; the digest is of the text', (t) => {
  t.throws(() => canonicalJson({ s: 'lone \ud800' }), { message: /surrogate/i });
  t.throws(() => canonicalJson([Number.NaN]));
  for (const nothing of [undefined, () => 1, Symbol('s')]) {
    t.throws(() => canonicalJson(nothing), { instanceOf: TypeError, message: 'value cannot be canonicalized' });
  }
  t.throws(() => canonicalJson({ x: Number.POSITIVE_INFINITY }));
  t.is(canonicalJson({ b: undefined, a: [undefined, -0, 1e21, 1e-7] }), '{"a":[null,0,1e+21,1e-7]}');
  t.is(canonicalDigest({ b: 1, a: 'x' }), createHash('sha256').update('{"a":"x","b":1}').digest('hex'));
});
