// A gateway worker's takes in the node's per-address windows (gateway/node-windows.ts), against a
// stand-in primary that answers from a real RateLimiter (the core's takeWindows does the same lookup):
// one message per turn of the event loop, answers in order, refusals as 429 with their headers, and
// 503 when the primary is silent, gone or the worker stops. The real IPC path is covered end to end by
// test/gateway/topology.test.ts (an address's window holds across two workers).
import test from 'ava';
import { EventEmitter } from 'node:events';
import { nodeWindows, type TakeMessage, type TakenMessage } from '../../src/gateway/node-windows.ts';
import { RateLimiter, clientKey, type RateRules } from '../../src/protocol/rate-limit.ts';
import { ServiceError } from '../../src/errors.ts';

const RULES: RateRules = { public_low: { limit: 3, windowSec: 60 }, paid_execution: { limit: 10, windowSec: 60 } };

/** A primary on the other end of the channel: answers each batch after `delayMs` (null: never). */
function primary(opts: { delayMs?: number | null; send?: () => void } = {}) {
  const limiter = new RateLimiter(RULES);
  const channel = new EventEmitter() as EventEmitter & { send(m: TakeMessage): void };
  const batches: TakeMessage[] = [];
  channel.send = (m) => {
    opts.send?.();
    batches.push(structuredClone(m));
    if (opts.delayMs === null) return;
    const states = m.takes.map(([klass, client]) => limiter.count(klass, `ip:${clientKey(client)}`, 0));
    const answer: TakenMessage = { type: 'svcd:taken', id: m.id, states };
    setTimeout(() => channel.emit('message', structuredClone(answer)), opts.delayMs ?? 0);
  };
  return { channel, batches };
}

test('takes made in one turn go in one message; each gets its own window\'s decision, in order', async (t) => {
  const p = primary();
  const w = nodeWindows(p.channel, RULES, 1000);
  const takes = [
    w.take('public_low', '10.0.0.1'), w.take('public_low', '10.0.0.2'), w.take('public_low', '10.0.0.1'),
    w.take('paid_execution', '10.0.0.1'),
  ];
  const ds = await Promise.all(takes);
  t.is(p.batches.length, 1);
  t.deepEqual(p.batches[0]!.takes, [
    ['public_low', '10.0.0.1'], ['public_low', '10.0.0.2'], ['public_low', '10.0.0.1'], ['paid_execution', '10.0.0.1'],
  ]);
  t.deepEqual(ds.map((d) => d.headers.RateLimit), [
    '"public_low";r=2;t=60', '"public_low";r=2;t=60', '"public_low";r=1;t=60', '"paid_execution";r=9;t=60',
  ]);
  t.is(ds[0]!.headers['RateLimit-Policy'], '"public_low";q=3;w=60');
  // a later turn: a second message
  await w.take('public_low', '10.0.0.2');
  t.is(p.batches.length, 2);
  t.true(p.batches[1]!.id > p.batches[0]!.id);
  w.close();
});

test('takes made while a message is out wait for its answer, then go together in the next one', async (t) => {
  const p = primary({ delayMs: 30 });
  const w = nodeWindows(p.channel, RULES, 1000);
  const first = w.take('public_low', '10.0.0.1');
  await new Promise((r) => setImmediate(r));
  t.is(p.batches.length, 1);
  // three more, each in a turn of its own, while the first message is out
  const later: Promise<unknown>[] = [];
  for (const c of ['10.0.0.2', '10.0.0.3', '10.0.0.4']) {
    later.push(w.take('public_low', c));
    await new Promise((r) => setTimeout(r, 2));
  }
  t.is(p.batches.length, 1, 'nothing more is sent while one message is out');
  await first;
  t.is(p.batches.length, 2);
  t.deepEqual(p.batches[1]!.takes.map(([, c]) => c), ['10.0.0.2', '10.0.0.3', '10.0.0.4']);
  await Promise.all(later);
  w.close();
});

test('a take the node\'s window refuses is 429 rate_limited with Retry-After; the others in its batch pass',
  async (t) => {
    const p = primary();
    const w = nodeWindows(p.channel, RULES, 1000);
    const results = await Promise.allSettled(
      ['a', 'a', 'a', 'a', 'b'].map((x) => w.take('public_low', x === 'a' ? '192.0.2.1' : '192.0.2.2')),
    );
    t.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    const e = (results[3] as PromiseRejectedResult).reason as ServiceError;
    t.true(e instanceof ServiceError);
    t.is(e.code, 'rate_limited');
    t.like(e.details, { rate_class: 'public_low', retry_after_s: 60, rate_limit: '"public_low";r=0;t=60' });
    w.close();
  });

test('a primary that does not answer in time, or cannot be written to, is 503 service_unavailable', async (t) => {
  const silent = primary({ delayMs: null });
  const w = nodeWindows(silent.channel, RULES, 50);
  const e = await t.throwsAsync(w.take('public_low', '192.0.2.1'), { instanceOf: ServiceError });
  t.is(e.code, 'service_unavailable');
  t.regex(e.message, /did not answer in time/);
  // its late answer, if it ever comes, is ignored
  silent.channel.emit('message', { type: 'svcd:taken', id: silent.batches[0]!.id, states: [] });
  w.close();

  const gone = primary({ send: () => { throw new Error('channel closed'); } });
  const w2 = nodeWindows(gone.channel, RULES, 1000);
  const e2 = await t.throwsAsync(w2.take('public_low', '192.0.2.1'), { instanceOf: ServiceError });
  t.is(e2.code, 'service_unavailable');
  t.regex(e2.message, /the core is gone/);
  w2.close();
});

test('close fails the takes waiting for an answer and refuses new ones; other messages are ignored', async (t) => {
  const p = primary({ delayMs: null });
  const w = nodeWindows(p.channel, RULES, 10_000);
  const waiting = w.take('public_low', '192.0.2.1');
  await new Promise((r) => setImmediate(r));
  t.is(p.batches.length, 1);
  // messages that are not this module's, or name no batch, change nothing
  p.channel.emit('message', { type: 'svcd:stop' });
  p.channel.emit('message', { type: 'svcd:taken', id: 999, states: [] });
  p.channel.emit('message', null);
  w.close();
  t.is((await t.throwsAsync(waiting, { instanceOf: ServiceError })).code, 'service_unavailable');
  t.is((await t.throwsAsync(w.take('public_low', '192.0.2.1'), { instanceOf: ServiceError })).code,
    'service_unavailable');
  t.is(p.channel.listenerCount('message'), 0);
  // a take queued in the turn close came in is failed, never sent
  const p2 = primary();
  const w2 = nodeWindows(p2.channel, RULES, 1000);
  const queued = w2.take('public_low', '192.0.2.1');
  w2.close();
  t.is((await t.throwsAsync(queued, { instanceOf: ServiceError })).code, 'service_unavailable');
  t.is(p2.batches.length, 0);
});

test('an answer without a state for a take is an internal error for that take alone', async (t) => {
  const channel = new EventEmitter() as EventEmitter & { send(m: TakeMessage): void };
  channel.send = (m) => {
    const answer: TakenMessage = { type: 'svcd:taken', id: m.id, states: [{ allowed: true, remaining: 2, reset: 60 }] };
    setImmediate(() => channel.emit('message', answer));
  };
  const w = nodeWindows(channel, RULES, 1000);
  const [a, b] = await Promise.allSettled([w.take('public_low', 'x'), w.take('public_low', 'y')]);
  t.is(a!.status, 'fulfilled');
  t.is(((b as PromiseRejectedResult).reason as ServiceError).code, 'internal');
  w.close();
});
