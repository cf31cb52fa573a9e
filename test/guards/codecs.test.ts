// Guards of the codecs everything else trusts: the svc/1 line limit (complete and unfinished lines,
// at the exact byte), the store's key codec (no two identifiers share a key, numbers sort as
// numbers), and the verifier's length checks on result tags (VERIFY_RESULT).
import test from 'ava';
import { createHash } from 'node:crypto';
import { LineDecoder } from '../../src/protocol/line-codec.ts';
import { idFromPart, idPart, isWellFormed, key, numFromPart, numPart } from '../../src/store/key-codec.ts';
import { ServiceError } from '../../src/errors.ts';
import { resultTag } from '../../src/core/receipts.ts';
import { verifyResult } from '../../src/core/executors/verify-result.ts';
import type { QuoteRecord } from '../../src/core/quotes.ts';
import { coreFixture } from '../support/core-fixture.ts';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

test('line guard: a complete (newline-terminated) line longer than the limit is refused at the exact byte', (t) => {
  const d = new LineDecoder(8);
  d.feed(Buffer.from('12345678\n123456789\nok\n'));
  t.deepEqual(d.nextLine(), { line: '12345678' }, 'exactly the limit passes');
  t.deepEqual(d.nextLine(), { fault: 'line_too_long' }, 'one byte over, newline included in one chunk');
  // the same when the line arrives in pieces and only its last piece carries the newline
  const p = new LineDecoder(8);
  t.deepEqual(p.push(Buffer.from('12345')), { lines: [], overflow: false });
  t.deepEqual(p.push(Buffer.from('6789\n')), { lines: [], overflow: true });
  const q = new LineDecoder(8);
  q.push(Buffer.from('12345'));
  t.deepEqual(q.push(Buffer.from('678\n')), { lines: ['12345678'], overflow: false });
  t.deepEqual(new LineDecoder(8).push(Buffer.from('123456789\r\n')), { lines: [], overflow: true },
    'a CR before the newline counts');
});

test('line guard: an unfinished line is refused as soon as it passes the limit', (t) => {
  const d = new LineDecoder(8);
  t.deepEqual(d.push(Buffer.from('12345678')), { lines: [], overflow: false });
  t.deepEqual(d.push(Buffer.from('9')), { lines: [], overflow: true });
});

test('key-codec guard: identifiers are hex-encoded, ill-formed UTF-16 is refused, numbers sort as numbers', (t) => {
  t.is(idPart('a!b'), '612162', 'a separator inside an id cannot split a key');
  t.is(idFromPart(idPart('m-é😀')), 'm-é😀');
  t.not(idPart('\u{1F600}'), idPart('\uFFFD'));
  for (const bad of ['\uD800', 'a\uDC00', '\uDBFFx']) {
    t.false(isWellFormed(bad));
    const e = t.throws(() => idPart(bad)) as ServiceError;
    t.is(e.code, 'invalid_request');
    t.is(e.message, 'identifier is not well-formed Unicode (unpaired surrogate)');
    t.throws(() => key('ok', bad), { instanceOf: ServiceError });
    t.throws(() => key(bad), { instanceOf: ServiceError }, 'the first part too');
  }
  t.true(isWellFormed('\uD83D\uDE00'), 'a surrogate pair is fine');
  t.is(key('a', 'b', 'c'), 'a!b!c');
  t.is(idPart('é'), 'c3a9', 'UTF-8 bytes, in hex');
  t.is(idFromPart('c3a9'), 'é');
  t.is(numFromPart('00000000000000ff'), 255, 'hex digits');
  t.is(numPart(0), '0000000000000000');
  t.is(numPart(Number.MAX_SAFE_INTEGER), '001fffffffffffff');
  for (const bad of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN]) {
    t.throws(() => numPart(bad), { instanceOf: RangeError, message: `key number out of range: ${bad}` });
  }
  const ns = [0, 1, 9, 10, 15, 16, 255, 256, 65_535, 2 ** 40, Number.MAX_SAFE_INTEGER];
  const sorted = ns.map(numPart).sort();
  t.deepEqual(sorted.map(numFromPart), ns);
});

test('verify-result guard: a result tag is genuine only at its full length and exact bytes', async (t) => {
  const f = await coreFixture(t);
  const facts = {
    service: 'submit-id', quote_id: 'q1x', input_digest: 'aa'.repeat(32), output_digest: 'bb'.repeat(32),
  };
  const tag = resultTag(f.ctx.kernels, f.identity, facts);
  const ask = async (m: unknown) => {
    const packet_hex = Buffer.from(typeof m === 'string' ? m : JSON.stringify(m)).toString('hex');
    return (await verifyResult(f.ctx, {} as QuoteRecord, { machine_id: 'm', quote_id: 'q', packet_hex })).fields;
  };
  t.deepEqual(await ask({ ...facts, result_tag: tag }), { valid: true });
  t.deepEqual(await ask({ ...facts, result_tag: tag.slice(0, 62) }), { valid: false, reason: 'tag_mismatch' }, 'cut');
  t.deepEqual(await ask({ ...facts, result_tag: '' }), { valid: false, reason: 'tag_mismatch' }, 'empty');
  t.deepEqual(await ask({ ...facts, result_tag: `${tag}00` }), { valid: false, reason: 'tag_mismatch' }, 'longer');
  const flipped = (tag[0] === '0' ? '1' : '0') + tag.slice(1);
  t.deepEqual(await ask({ ...facts, result_tag: flipped }), { valid: false, reason: 'tag_mismatch' });
  for (const field of Object.keys(facts) as (keyof typeof facts)[]) {
    t.deepEqual(await ask({ ...facts, [field]: `${facts[field]}x`, result_tag: tag }),
      { valid: false, reason: 'tag_mismatch' }, field);
  }
  t.regex(((await ask({ ...facts })) as { reason: string }).reason, /^malformed/);
  t.regex(((await ask({ ...facts, result_tag: 5 })) as { reason: string }).reason, /^malformed/);
  t.regex(((await ask('[]')) as { reason: string }).reason, /^malformed/);
  for (const bad of ['null', 'not json', '"a string"', '5']) {
    t.deepEqual(await ask(bad), { valid: false, reason: 'malformed: packet_hex must be UTF-8 JSON with string fields '
      + 'service, quote_id, input_digest, output_digest, result_tag' }, bad);
  }
  // the execution's own digests: of the material as given, and of the verdict's canonical JSON
  const packet = Buffer.from(JSON.stringify({ ...facts, result_tag: tag }));
  const whole = await verifyResult(f.ctx, {} as QuoteRecord, { machine_id: 'm', quote_id: 'q', packet_hex:
    packet.toString('hex') });
  t.deepEqual(whole, { fields: { valid: true }, status: 'valid', input_digest: sha256(packet),
    output_digest: sha256('{"valid":true}') });
  const refused = await verifyResult(f.ctx, {} as QuoteRecord, { machine_id: 'm', quote_id: 'q', packet_hex: '5b5d' });
  t.is(refused.status, 'invalid');
  // after a key rotation a tag by the retired result key still checks, and so does one by the new key
  f.clock.advance(1000);
  f.identity.rotate(f.clock.now());
  const fresh = resultTag(f.ctx.kernels, f.identity, facts);
  t.not(fresh, tag, 'the rotation changed the result key');
  t.deepEqual(await ask({ ...facts, result_tag: tag }), { valid: true }, 'the retired key');
  t.deepEqual(await ask({ ...facts, result_tag: fresh }), { valid: true }, 'the current key');
});
