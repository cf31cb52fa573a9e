// Guards of the rate limiter (src/protocol/rate-limit.ts), on its own clock (nowMs is a parameter):
// the limit itself, the window that ends and starts a fresh count at its exact millisecond, the
// check that does not count, the headers a 429 carries, and the separation of keys and classes.
import test from 'ava';
import { ServiceError } from '../../src/errors.ts';
import { rateLimited } from '../../src/metrics/metrics.ts';
import { DEFAULT_RATES, RateLimiter, clientKey, parseRate } from '../../src/protocol/rate-limit.ts';

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

test('rate-limit guard: a full table of live windows drops the oldest down to 90% of its size, never all', (t) => {
  const l = new RateLimiter({ public_low: rule, paid_execution: rule }, 20);
  for (let i = 0; i < 20; i++) l.take('public_low', `k-${i}`, T0 + i);
  for (let i = 0; i < 2; i++) l.take('public_low', 'k-19', T0 + 19);
  t.is(l.size, 20);
  l.take('paid_execution', 'newcomer', T0 + 100);
  t.is(l.size, 19, 'the two oldest went (down to 18, 90% of 20), then the newcomer came in');
  t.is(l.take('public_low', 'k-2', T0 + 100).headers.RateLimit, '"public_low";r=1;t=10', 'the third oldest stays');
  t.is(l.take('public_low', 'k-1', T0 + 100).headers.RateLimit, '"public_low";r=2;t=10', 'the second oldest went');
  t.is(l.take('public_low', 'k-19', T0 + 100).headers.RateLimit, '"public_low";r=0;t=10',
    'a kept window kept its count');
  t.false(l.take('public_low', 'k-19', T0 + 100).allowed);
});

test('rate-limit guard: a full table drops the windows with the fewest requests, never an exhausted one', (t) => {
  const l = new RateLimiter({ public_low: rule, paid_execution: rule }, 10);
  for (let i = 0; i < 3; i++) l.take('public_low', 'oldest-exhausted', T0);
  for (let i = 0; i < 9; i++) {
    for (let j = 0; j <= i % 2; j++) l.take('public_low', `k-${i}`, T0 + 1 + i);
  }
  t.is(l.size, 10);
  l.take('public_low', 'newcomer', T0 + 100);
  t.false(l.take('public_low', 'oldest-exhausted', T0 + 100).allowed, 'the oldest, exhausted, stays');
  t.is(l.take('public_low', 'k-1', T0 + 100).headers.RateLimit, '"public_low";r=0;t=10', 'two counted: kept');
  t.is(l.take('public_low', 'k-0', T0 + 100).headers.RateLimit, '"public_low";r=2;t=10', 'one counted: went');
  // only exhausted windows left: a newcomer is refused (busy), none of them goes
  const full = new RateLimiter({ public_low: rule, paid_execution: rule }, 4);
  for (let i = 0; i < 4; i++) for (let j = 0; j < 3; j++) full.take('public_low', `x-${i}`, T0 + i);
  t.throws(() => full.take('public_low', 'newcomer', T0 + 5), { message: /full of exhausted windows/ });
  for (let i = 0; i < 4; i++) t.false(full.take('public_low', `x-${i}`, T0 + 6).allowed, `x-${i} still exhausted`);
});

test('rate-limit guard: the default rules, the refusal headers of assertOpen, and what a refusal counts', async (t) => {
  const d = new RateLimiter();
  t.is(d.take('public_low', 'a', T0).headers['RateLimit-Policy'], '"public_low";q=120;w=60');
  t.is(d.take('paid_execution', 'a', T0).headers['RateLimit-Policy'], '"paid_execution";q=600;w=60');
  t.deepEqual(DEFAULT_RATES, {
    public_low: { limit: 120, windowSec: 60 }, paid_execution: { limit: 600, windowSec: 60 },
  });
  const l = new RateLimiter({ public_low: rule, paid_execution: rule });
  for (let i = 0; i < 3; i++) l.take('paid_execution', 'm', T0);
  const cell = (key: string) => rateLimited.at('paid_execution', key).v;
  const [machine, address] = [cell('machine'), cell('address')];
  const e = t.throws(() => l.assertOpen('paid_execution', 'm', 'per machine', T0 + 2_000)) as ServiceError;
  t.is(e.message, 'rate limit for paid_execution reached (per machine); retry after 8 s');
  t.deepEqual(e.details, {
    rate_class: 'paid_execution', retry_after_s: 8, rate_limit: '"paid_execution";r=0;t=8',
    rate_limit_policy: '"paid_execution";q=3;w=10',
  });
  t.deepEqual([cell('machine') - machine, cell('address') - address], [1, 0], 'counted per machine');
  t.throws(() => l.check('paid_execution', 'm', 'per address', T0 + 2_000));
  t.deepEqual([cell('machine') - machine, cell('address') - address], [1, 1], 'counted per address');
  t.is(l.check('public_low', 'm', 'per address', T0).retryAfterSec, 0, 'check passes an allowed request on');
});

test('rate-limit guard: the key of a client address (IPv6 by its /64), and of none', (t) => {
  t.is(clientKey(undefined), 'unknown');
  t.is(clientKey(''), 'unknown');
  t.is(clientKey('::ffff:10.0.0.1'), '10.0.0.1');
  t.is(clientKey('2001:db8:1:2:3:4:5:6'), clientKey('2001:db8:1:2:ffff::1'));
});

test('rate-limit guard: parseRate takes the smallest rule, 1/1', (t) => {
  t.deepEqual(parseRate('1/1', { limit: 9, windowSec: 9 }, 'X'), { limit: 1, windowSec: 1 });
  t.deepEqual(parseRate('', { limit: 9, windowSec: 9 }, 'X'), { limit: 9, windowSec: 9 }, 'unset is the default');
  t.throws(() => parseRate('5/60 ', { limit: 9, windowSec: 9 }, 'X'), { message: 'X must look like LIMIT/SECONDS, '
    + 'e.g. 120/60 (got 5/60 )' });
});

test('rate-limit guard: a renewed window counts as the newest when a full table drops the oldest', (t) => {
  const l = new RateLimiter({ public_low: rule, paid_execution: rule }, 4);
  l.take('public_low', 'a', T0);
  l.take('public_low', 'b', T0 + 5_000);
  l.take('public_low', 'c', T0 + 6_000);
  l.take('public_low', 'a', T0 + 10_000); // a's window ended: a new one starts, after b's and c's
  l.take('public_low', 'd', T0 + 10_001);
  l.take('public_low', 'e', T0 + 10_002); // full, nothing expired: the oldest window (b's) goes
  t.is(l.size, 4);
  t.is(l.take('public_low', 'a', T0 + 10_003).headers.RateLimit, '"public_low";r=1;t=10', 'a kept its new window');
  t.is(l.take('public_low', 'b', T0 + 10_003).headers.RateLimit, '"public_low";r=2;t=10', 'b starts afresh');
});

test('rate-limit guard: parseRate takes limits and windows of several digits', (t) => {
  t.deepEqual(parseRate('120/60', { limit: 9, windowSec: 9 }, 'X'), { limit: 120, windowSec: 60 });
});

test('rate-limit guard: grant counts a share of what is left (at least 1, at most max), none when nothing is', (t) => {
  const l = new RateLimiter({ public_low: { limit: 10, windowSec: 10 }, paid_execution: { limit: 1, windowSec: 60 } });
  const g = l.grant('public_low', 'k', 0.25, 100, T0);
  t.deepEqual(g, {
    granted: 2, start: T0, endMs: T0 + 10_000, state: { allowed: true, remaining: 8, reset: 10 },
  });
  t.is(l.grant('public_low', 'k', 0.5, 3, T0 + 1).granted, 3, 'at most max');
  t.is(l.grant('public_low', 'k', 0.01, 100, T0 + 2).granted, 1, 'at least one while any is left');
  t.is(l.take('public_low', 'k', T0 + 3).headers.RateLimit, '"public_low";r=3;t=10', 'grants are counted');
  t.is(l.grant('public_low', 'k', 1, 100, T0 + 4).granted, 3, 'all that is left, and no more');
  const none = l.grant('public_low', 'k', 1, 100, T0 + 5);
  t.deepEqual(none, {
    granted: 0, start: T0, endMs: T0 + 10_000, state: { allowed: false, remaining: 0, reset: 10 },
  });
  // a give-back for this window frees what it names; one for another window changes nothing
  l.giveBack('public_low', 'k', T0 + 1, 5);
  t.is(l.grant('public_low', 'k', 1, 100, T0 + 6).granted, 0);
  l.giveBack('public_low', 'k', T0, 2);
  t.is(l.grant('public_low', 'k', 1, 100, T0 + 7).granted, 2);
  l.giveBack('public_low', 'k', T0, 50);
  t.is(l.grant('public_low', 'k', 1, 100, T0 + 8).granted, 10, 'a give-back never leaves a negative count');
  l.giveBack('public_low', 'nobody', T0, 1);
  t.is(l.size, 1, 'a give-back for no window makes none');
  // the next window starts afresh
  t.like(l.grant('public_low', 'k', 1, 100, T0 + 10_000), { granted: 10, start: T0 + 10_000 });
});
