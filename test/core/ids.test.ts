// Pooled random bytes: fresh bytes every call (across pool refills), ids of the documented shape.
import test from 'ava';
import { newId, randomBytesPooled } from '../../src/core/ids.ts';

test('pooled random bytes never repeat across calls or pool refills, and are copies', (t) => {
  const seen = new Set<string>();
  // 3,000 × 6 bytes crosses the 4 KiB pool four times
  for (let i = 0; i < 3000; i++) seen.add(randomBytesPooled(6).toString('hex'));
  t.is(seen.size, 3000);
  const a = randomBytesPooled(32);
  const copy = Buffer.from(a);
  for (let i = 0; i < 200; i++) randomBytesPooled(32); // refills the pool under a
  t.deepEqual(a, copy, 'a slice handed out is not overwritten by a refill');
  t.notDeepEqual(a, Buffer.alloc(32));
  t.throws(() => randomBytesPooled(4097), { instanceOf: RangeError });
});

test('ids: prefix and 120 random bits, base64url', (t) => {
  const ids = new Set(Array.from({ length: 1000 }, () => newId('rcpt')));
  t.is(ids.size, 1000);
  for (const id of ids) t.regex(id, /^rcpt_[A-Za-z0-9_-]{20}$/);
});
