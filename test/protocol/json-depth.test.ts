// The depth pre-scan agrees with the real nesting of any JSON value, ignores brackets in strings,
// runs on texts too deep for any recursive walk, and pruning keeps a too-deep frame's top readable.
import test from 'ava';
import fc from 'fast-check';
import { MAX_JSON_DEPTH, exceedsJsonDepth, pruneJsonBelow } from '../../src/protocol/json-depth.ts';

const depthOf = (v: unknown): number =>
  v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0;

test('exceedsJsonDepth(text, k) is exactly "the value nests deeper than k" (property)', (t) => {
  const agrees = (v: unknown, k: number) => exceedsJsonDepth(JSON.stringify(v), k) === depthOf(v) > k;
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 8 }), fc.nat(9), agrees), { numRuns: 3000 });
  t.pass();
});

test('brackets and escaped quotes inside strings do not count', (t) => {
  t.false(exceedsJsonDepth(JSON.stringify({ a: '[[[[{{{{', b: '\\"[[[[', c: '"]]]]"' }), 1));
  t.true(exceedsJsonDepth(JSON.stringify({ a: '\\', b: [[1]] }), 2), 'an escaped backslash ends before the quote');
});

test('texts far too deep for a recursive walk are measured without throwing', (t) => {
  const deep = `{"a":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}`;
  t.true(exceedsJsonDepth(deep));
  const nested = (n: number) => `{"a":${'['.repeat(n)}${']'.repeat(n)}}`; // n + 1 levels
  t.false(exceedsJsonDepth(nested(MAX_JSON_DEPTH - 1)), 'exactly the limit passes');
  t.true(exceedsJsonDepth(nested(MAX_JSON_DEPTH)), 'one more does not');
});

test('pruneJsonBelow keeps the top levels and replaces what is deeper by null (property)', (t) => {
  const prune = (v: unknown, keep: number): unknown => v === null || typeof v !== 'object' ? v
    : keep === 0 ? null : Array.isArray(v) ? v.map((x) => prune(x, keep - 1))
      : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, prune(x, keep - 1)]));
  const agrees = (v: unknown, keep: number) =>
    JSON.stringify(JSON.parse(pruneJsonBelow(JSON.stringify(v), keep))) === JSON.stringify(prune(v, keep));
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 1, max: 4 }), agrees), { numRuns: 2000 });
  const frame = `{"v":"svc/1","id":7,"args":{"x":${'['.repeat(60_000)}${']'.repeat(60_000)}},"cmd":"QUOTE"}`;
  t.deepEqual(JSON.parse(pruneJsonBelow(frame, 1)), { v: 'svc/1', id: 7, args: null, cmd: 'QUOTE' });
});
