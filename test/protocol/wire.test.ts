// svc/1 frame parsing is total: any line gives a request or a named error, never an exception; a
// frame nested past the depth limit is refused before JSON.parse, answered with its own id.
import test from 'ava';
import fc from 'fast-check';
import { parseRequest } from '../../src/protocol/wire.ts';
import { ERRORS } from '../../src/errors.ts';

test('parseRequest: random strings and random JSON never throw and always name their error', (t) => {
  const check = (line: string) => {
    const r = parseRequest(line);
    return r.ok
      ? typeof r.req.cmd === 'string' && r.req.v === 'svc/1'
      : Object.hasOwn(ERRORS, r.error.code) && r.error.message.length > 0;
  };
  fc.assert(fc.property(fc.string({ maxLength: 300 }), check), { numRuns: 2000 });
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => check(JSON.stringify(v))), { numRuns: 2000 });
  const frame = fc.record({
    v: fc.constantFrom('svc/1', 'svc/2', 1),
    id: fc.oneof(fc.nat(), fc.string({ maxLength: 70 }), fc.constant(null)),
    cmd: fc.oneof(fc.constantFrom('HELLO', 'QUOTE', 'SETTLE_INVOICE'), fc.string()),
    args: fc.jsonValue({ maxDepth: 2 }),
    auth: fc.jsonValue({ maxDepth: 2 }),
  }, { requiredKeys: [] });
  fc.assert(fc.property(frame, (f) => check(JSON.stringify(f))), { numRuns: 2000 });
  t.pass();
});

test('parseRequest: a frame nested past 64 levels is invalid_request, answered with its id', (t) => {
  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const r = parseRequest(`{"v":"svc/1","id":7,"cmd":"QUOTE","args":{"service":"get-pulse","x":${deep(60_000)}}}`);
  t.like(r, { ok: false, id: 7 });
  t.is(!r.ok && r.error.code, 'invalid_request');
  t.regex(!r.ok ? r.error.message : '', /deeper than 64 levels/);
  t.like(parseRequest(`{"args":${deep(100)}}`), { ok: false, id: null }, 'no id to answer with');
  t.like(parseRequest(`{"v":"svc/1","id":1,"cmd":"HELLO","args":{"nonce":${deep(62)}}}`), { ok: true });
});
