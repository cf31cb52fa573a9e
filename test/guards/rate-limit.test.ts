// Guards of the rate limiter (src/protocol/rate-limit.ts), on its own clock (nowMs is a parameter):
// the limit itself, the window that ends and starts a fresh count at its exact millisecond, the
// check that does not count, the headers a 429 carries, and the separation of keys and classes.
import test from 'ava';
import { ServiceError } from '../../src/errors.ts';
import { RateLimiter, parseRate } from '../../src/protocol/rate-limit.ts';

const rule = { limit: 3, windowSec: 10 };
const T0 = 5_000_000;

test('rate-limit guard: a window resets exactly windowSec after it started, and not a millisecond before', (t) => {
  const l = new RateLimiter({ public_low: rule, paid_execution: { limit: 1, windowSec: 60 } });
  for (let i = 0; i < 3; i++) t.true(l.take('public_low', 'k', T0 + i).allowed, `request ${i + 1}`);
  t.false(l.take('public_low', 'k', T0 + 5_000).allowed, 'the 4th in the window is refused');
  t.false(l.take('public_low', 'k', T0 + 9_999).allowed, 'still the same window 1 ms before its end');
  const fresh = l.take('public_low', 'k', T0 + 10_000);
  t.true(fresh.allowed, 'a new window at start + windowSec');
  t.is(fresh.headers.RateLimit, '"public_low";r=2;t=10', 'and it counts from one again');
  t.true(l.take('public_low', 'k', T0 + 10_001).allowed);
  t.true(l.take('public_low', 'k', T0 + 10_002).allowed);
  t.false(l.take('public_low', 'k', T0 + 10_003).allowed, 'the new window has the same limit');
});

test('rate-limit guard: the limit is exact, a denial carries Retry-After, keys and classes count apart', (t) => {
  const l = new RateLimiter({ public_low: rule, paid_execution: { limit: 1, windowSec: 60 } });
  const first = l.take('public_low', 'a', T0);
  t.deepEqual(first, {
    allowed: true, retryAfterSec: 0,
    headers: { 'RateLimit-Policy': '"public_low";q=3;w=10', RateLimit: '"public_low";r=2;t=10' },
  });
  l.take('public_low', 'a', T0);
  t.is(l.take('public_low', 'a', T0).headers.RateLimit, '"public_low";r=0;t=10');
  const denied = l.take('public_low', 'a', T0 + 2_500);
  t.deepEqual(denied, {
    allowed: false, retryAfterSec: 8,
    headers: { 'RateLimit-Policy': '"public_low";q=3;w=10', RateLimit: '"public_low";r=0;t=8', 'Retry-After': '8' },
  });
  t.true(l.take('public_low', 'b', T0).allowed, 'another key has its own window');
  t.true(l.take('paid_execution', 'a', T0).allowed, 'another class has its own window');
  t.false(l.take('paid_execution', 'a', T0).allowed, 'each class has its own limit');
  const e = t.throws(() => l.check('public_low', 'a', 'per address', T0 + 3_000)) as ServiceError;
  t.is(e.code, 'rate_limited');
  t.is(e.status, 429);
  t.deepEqual(e.details, {
    rate_class: 'public_low', retry_after_s: 7, rate_limit: '"public_low";r=0;t=7',
    rate_limit_policy: '"public_low";q=3;w=10',
  });
  t.regex(e.message, /per address/);
});

test('rate-limit guard: assertOpen refuses a key at its limit without counting, and opens with the new window', (t) => {
  const l = new RateLimiter({ public_low: rule, paid_execution: rule });
  l.assertOpen('public_low', 'k', 'x', T0);
  l.assertOpen('public_low', 'k', 'x', T0);
  l.assertOpen('public_low', 'k', 'x', T0);
  l.assertOpen('public_low', 'k', 'x', T0);
  t.is(l.take('public_low', 'k', T0).headers.RateLimit, '"public_low";r=2;t=10', 'assertOpen counted nothing');
  l.take('public_low', 'k', T0);
  t.notThrows(() => l.assertOpen('public_low', 'k', 'x', T0), 'open while under the limit');
  l.take('public_low', 'k', T0);
  const e = t.throws(() => l.assertOpen('public_low', 'k', 'x', T0 + 1_000)) as ServiceError;
  t.is(e.code, 'rate_limited');
  t.is(e.details?.retry_after_s, 9);
  t.throws(() => l.assertOpen('public_low', 'k', 'x', T0 + 9_999));
  t.notThrows(() => l.assertOpen('public_low', 'k', 'x', T0 + 10_000), 'the window ended');
});

test('rate-limit guard: a full table drops expired windows first and keeps live ones', (t) => {
  const l = new RateLimiter({ public_low: rule, paid_execution: rule }, 10);
  for (let i = 0; i < 3; i++) l.take('public_low', 'live', T0 + 9_000);
  for (let i = 0; i < 9; i++) l.take('public_low', `old-${i}`, T0);
  t.is(l.size, 10);
  l.take('public_low', 'newcomer', T0 + 10_000);
  t.is(l.size, 2, 'the nine expired windows went, the live one and the newcomer stay');
  t.false(l.take('public_low', 'live', T0 + 10_000).allowed, 'the live window kept its count');
});

test('rate-limit guard: parseRate takes LIMIT/SECONDS only, both at least 1', (t) => {
  const def = { limit: 9, windowSec: 9 };
  t.deepEqual(parseRate(undefined, def, 'X'), def);
  t.deepEqual(parseRate('5/60', def, 'X'), { limit: 5, windowSec: 60 });
  for (const bad of ['0/60', '5/0', '5', '5/60/1', '-5/60', 'a/b', ' 5/60']) {
    t.throws(() => parseRate(bad, def, 'SVC_X'), { message: /SVC_X must look like LIMIT\/SECONDS/ }, bad);
  }
});
