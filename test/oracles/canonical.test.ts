// RFC 8785 canonical JSON against the RFC author's reference vectors (../shared/vectors/jcs-rfc8785),
// byte for byte: the product's canonicalJson (the `canonicalize` package) and, as a second opinion,
// the independent json-canonicalize package must both produce every expected output.
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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
