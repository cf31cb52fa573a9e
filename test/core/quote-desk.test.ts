// The quote desk (core/quote-desk.ts): the free quotes a gateway worker answers itself. It takes only a
// QUOTE without an idempotency_key; it counts the caller's window before it looks at the arguments (the
// core's order); it checks arguments nobody checked; and the ids it makes are the core's own (decoded
// with the same key, refused with another).
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { quoteDesk } from '../../src/core/quote-desk.ts';
import { decodeQuoteId } from '../../src/core/quote-token.ts';
import { ServiceError } from '../../src/errors.ts';

const key = randomBytes(32);
const args = () => ({ service: 'get-pulse', machine_id: 'desk-m', bits: 256, max_output: 32, quote_ttl_ms: 60_000 });

test('a free QUOTE is answered here with an id the node decodes; anything else is left to the core', async (t) => {
  const taken: [string, string][] = [];
  const now = new Date('2026-11-27T00:00:00Z');
  const desk = quoteDesk({ quoteKey: key, now: () => now, take: async (k, c) => { taken.push([k, c]); } });
  t.is(desk('ACCEPT_QUOTE', { quote_id: 'q1x', machine_id: 'desk-m' }, '192.0.2.1', true), null);
  t.is(desk('QUOTE', { ...args(), idempotency_key: 'k' }, '192.0.2.1', true), null);
  const q = await desk('QUOTE', args(), '192.0.2.1', true)!;
  t.deepEqual(taken, [['public_low', '192.0.2.1']]);
  t.is(q.state, 'issued');
  t.is(q.created_at, now.toISOString());
  const d = decodeQuoteId(key, 'desk-m', q.quote_id as string);
  t.true(d.ok);
  t.false(decodeQuoteId(randomBytes(32), 'desk-m', q.quote_id as string).ok);
  // the gateway's own calls name no client, and are nobody's to count
  await desk('QUOTE', args(), undefined, true);
  t.is(taken.length, 1);
});

test('the window is counted before the arguments are looked at; unchecked arguments are checked', async (t) => {
  const refuse = quoteDesk({
    quoteKey: key,
    take: async () => { throw new ServiceError('rate_limited', 'over'); },
  });
  const bad = { ...args(), bits: 0 };
  t.is((await t.throwsAsync(refuse('QUOTE', bad, '192.0.2.1', false)!, { instanceOf: ServiceError })).code,
    'rate_limited');
  const open = quoteDesk({ quoteKey: key, take: async () => undefined });
  t.is((await t.throwsAsync(open('QUOTE', bad, '192.0.2.1', false)!, { instanceOf: ServiceError })).code,
    'invalid_request');
  // defaults the schema fills in (priority, ttl) come with the check
  const { quote_ttl_ms: _t, max_output: _m, ...bare } = args();
  const q = await open('QUOTE', bare, '192.0.2.1', false)!;
  t.is(q.priority, 'normal');
});
