// Rate limits and per-address quotas, tried as an attacker would: no caller
// can spend another's budget, rotate a forwarded address past a limit, reset everyone's windows with a
// flood of keys, or deny the sandbox or quotes to others. Several clients are loopback source addresses
// (127.0.0.2, .3, ...) against a real svcd.
import test from 'ava';
import { SvcClient } from '../../src/client/client.ts';
import { ServiceError } from '../../src/errors.ts';
import { RateLimiter, addressWindowKey } from '../../src/protocol/rate-limit.ts';
import { Sandbox } from '../../src/core/sandbox.ts';
import { SANDBOX_LIMITS } from '../../src/protocol/sandbox.ts';
import { fundMachine, Svcd } from '../support/svcd.ts';
import { httpFrom } from '../support/http-from.ts';

const edgeFrom = (s: Svcd, localAddress: string) => SvcClient.connect({
  kind: 'tls', host: '127.0.0.1', port: s.edgePort, pin: s.ready.edge_cert_sha256, localAddress,
});

async function paidFlow(s: Svcd, from: string, machine: string, token: string): Promise<number[]> {
  const base = s.ready.http!;
  const auth = { authorization: `Bearer ${token}` };
  const q = await httpFrom(from, base, 'POST', '/api/v1/quotes/get-pulse', { machine_id: machine, bits: 64 });
  const acceptPath = `/api/v1/quotes/${q.body.quote_id}/accept`;
  const a = await httpFrom(from, base, 'POST', acceptPath, { machine_id: machine }, auth);
  const body = { machine_id: machine, quote_id: q.body.quote_id };
  const e = await httpFrom(from, base, 'POST', '/api/v1/executions/get-pulse', body, auth);
  return [q.status, a.status, e.status];
}

test.serial('paid_execution: requests naming a victim without its token spend the sender\'s address '
  + 'budget, never the victim\'s', async (t) => {
  const s = await Svcd.start({ SVC_RATE_PAID_EXECUTION: '4/60' }, ['start']);
  t.teardown(() => { void s.stop().then(() => s.cleanup()); });
  const token = await fundMachine(s, 'victim-m', 1);
  const base = s.ready.http!;
  const bogus = { machine_id: 'victim-m', quote_id: 'q_none' };
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) {
    const h: Record<string, string> = i % 2 ? { authorization: 'Bearer svcm_wrong' } : {};
    statuses.push((await httpFrom('127.0.0.2', base, 'POST', '/api/v1/executions/get-pulse', bogus, h)).status);
  }
  t.true(statuses.includes(401));
  t.is(statuses.at(-1), 429, `the sender's address is limited: ${statuses.join(',')}`);
  // over the edge too, from a third address
  const c = await edgeFrom(s, '127.0.0.4');
  for (let i = 0; i < 8; i++) await c.request('GET_PULSE', bogus, { token: 'svcm_wrong' }).catch(() => undefined);
  const last = await c.request('GET_PULSE', bogus, { token: 'svcm_wrong' }).catch((e: { code: string }) => e.code);
  t.is(last, 'rate_limited');
  c.close();
  // the victim, with its token, from its own address: its machine budget is untouched
  t.deepEqual(await paidFlow(s, '127.0.0.3', 'victim-m', token), [200, 200, 200]);
});

test.serial('paid_execution: unauthenticated requests with ever new machine_ids are limited per address', async (t) => {
  const s = await Svcd.start({ SVC_RATE_PAID_EXECUTION: '5/60' }, ['start']);
  t.teardown(() => { void s.stop().then(() => s.cleanup()); });
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++) {
    const body = { machine_id: `rot-${i}`, quote_id: 'q_x' };
    statuses.push((await httpFrom('127.0.0.2', s.ready.http!, 'POST', '/api/v1/executions/get-pulse', body)).status);
  }
  t.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429]);
  const stranger = { machine_id: 'x', quote_id: 'q' };
  const other = await httpFrom('127.0.0.3', s.ready.http!, 'POST', '/api/v1/executions/get-pulse', stranger);
  t.is(other.status, 401, 'another address is not affected');
});

test.serial('X-Forwarded-For: believed only from a trusted proxy and by hop count; rotating the '
  + 'client-written part bypasses nothing', async (t) => {
  const s = await Svcd.start({ SVC_TRUST_PROXY: '1', SVC_RATE_PUBLIC_LOW: '3/60' }, ['start']);
  t.teardown(() => { void s.stop().then(() => s.cleanup()); });
  const base = s.ready.http!;
  const viaProxy = async (forged: string, client: string) => {
    const h = { 'x-forwarded-for': `${forged}, ${client}` };
    return (await httpFrom('127.0.0.1', base, 'GET', '/api/v1/hello', undefined, h)).status;
  };
  const seen = [];
  for (let i = 0; i < 5; i++) seen.push(await viaProxy(`198.51.100.${i}`, '203.0.113.7'));
  t.deepEqual(seen, [200, 200, 200, 429, 429], 'the rightmost (proxy-written) entry is the client');
  t.is(await viaProxy('198.51.100.1', '203.0.113.8'), 200, 'another client behind the proxy has its own window');
  // a peer that is not a listed proxy: its X-Forwarded-For is ignored and its own address counts
  const direct = [];
  for (let i = 0; i < 5; i++) {
    const h = { 'x-forwarded-for': `203.0.113.${100 + i}` };
    direct.push((await httpFrom('127.0.0.9', base, 'GET', '/api/v1/hello', undefined, h)).status);
  }
  t.deepEqual(direct, [200, 200, 200, 429, 429]);
});

test.serial('rate limiter: a flood of new keys past the table size never resets the windows of others', (t) => {
  const rule = { limit: 3, windowSec: 60 };
  const l = new RateLimiter({ public_low: rule, paid_execution: rule }, 1000);
  const now = 1_000_000;
  for (let i = 0; i < 3; i++) t.true(l.take('public_low', 'victim-abuser', now).allowed);
  t.false(l.take('public_low', 'victim-abuser', now).allowed);
  // the abuser's own window is the newest: fill the table with fresh keys, then check the abuser again
  for (let i = 0; i < 500; i++) l.take('public_low', `flood-${i}`, now + 1);
  const late = l.take('public_low', 'victim-abuser', now + 2);
  t.false(late.allowed, 'the window survived 500 new keys');
  for (let i = 500; i < 1200; i++) l.take('public_low', `flood-${i}`, now + 3);
  t.true(l.size <= 1000, `bounded: ${l.size}`);
  t.true(l.size >= 800, `never cleared: ${l.size}`);
});

test.serial('rate limiter: the flooder\'s exhausted window survives 100,000 other addresses, oldest or not', (t) => {
  const l = new RateLimiter(); // the defaults: 120 a minute, 100,000 keys
  const now = 1_000_000;
  const flooder = addressWindowKey('198.51.100.7');
  let allowed = 0;
  for (let i = 0; i < 130; i++) if (l.take('public_low', flooder, now).allowed) allowed++;
  t.is(allowed, 120);
  // the flooder's window is the oldest in the table: the one an oldest-first eviction dropped
  const address = (i: number) => `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`;
  for (let i = 0; i < 100_500; i++) l.take('public_low', addressWindowKey(address(i)), now + 1);
  t.true(l.size <= 100_000, `bounded: ${l.size}`);
  let after = 0;
  for (let i = 0; i < 130; i++) if (l.take('public_low', flooder, now + 2).allowed) after++;
  t.is(after, 0, 'every follow-up within the window refused');
  t.true(l.take('public_low', flooder, now + 60_000).allowed, 'a new window once it ends');
});

test.serial('rate limiter: a table full of exhausted windows refuses a new key with busy until the first ends, '
  + 'without a scan per key', (t) => {
  const rule = { limit: 1, windowSec: 60 };
  const l = new RateLimiter({ public_low: rule, paid_execution: rule }, 100);
  const now = 1_000_000;
  for (let i = 0; i < 100; i++) l.take('public_low', `k-${i}`, now + i);
  const e = t.throws(() => l.take('public_low', 'newcomer', now + 200), { instanceOf: ServiceError });
  t.is(e.code, 'busy');
  t.is(e.details?.retry_after_s, 60, 'until k-0\'s window ends');
  t.false(l.take('public_low', 'k-5', now + 300).allowed, 'the exhausted ones are still counted');
  const g = l.grant('public_low', 'newcomer', 0.5, 10, now + 300);
  t.is(g.granted, 0, 'a worker\'s ask is refused, not thrown at');
  t.true(l.take('public_low', 'newcomer', now + 60_000).allowed, 'room once the first window ends');
});

test.serial('edge: free commands are rate limited per address like HTTP; another address is still '
  + 'served', async (t) => {
  const s = await Svcd.start({ SVC_RATE_PUBLIC_LOW: '5/60' });
  t.teardown(() => { void s.stop().then(() => s.cleanup()); });
  const a = await edgeFrom(s, '127.0.0.2');
  const codes: string[] = [];
  const hello = () => a.request('HELLO', {}).then(() => 'ok', (e: { code: string }) => e.code);
  for (let i = 0; i < 7; i++) codes.push(await hello());
  t.deepEqual(codes, ['ok', 'ok', 'ok', 'ok', 'ok', 'rate_limited', 'rate_limited']);
  const err = await a.request('CAPS', {}).catch((e: { details?: Record<string, unknown> }) => e);
  t.is(typeof (err as { details?: { retry_after_s?: unknown } }).details?.retry_after_s, 'number');
  const b = await edgeFrom(s, '127.0.0.3');
  t.is((await b.request('HELLO', {})).protocol, 'svc/1');
  a.close(); b.close();
});

test.serial('sandbox: one address cannot fill it for others; a full sandbox evicts, never 503', async (t) => {
  const s = await Svcd.start({ SVC_SANDBOX_MAX_PER_CLIENT: '4' }, ['start']);
  t.teardown(() => { void s.stop().then(() => s.cleanup()); });
  const base = s.ready.http!;
  const st = [];
  const sandboxQuote = (from: string) => httpFrom(from, base, 'POST', '/api/v1/sandbox/quotes/get-pulse', { bits: 64 });
  for (let i = 0; i < 6; i++) st.push((await sandboxQuote('127.0.0.2')).status);
  t.deepEqual(st, [200, 200, 200, 200, 429, 429]);
  const other = await sandboxQuote('127.0.0.3');
  t.is(other.status, 200, 'the default sandbox_machine still works for another address');

  const sb = new Sandbox({ maxPerClient: 10 });
  const first = sb.quote({ machine_id: 'm', bits: 8, max_output: 8192 }, 'c-0');
  for (let i = 1; i <= 20_000; i++) sb.quote({ machine_id: 'm', bits: 8, max_output: 8192 }, `c-${i % 5000}`);
  t.true(sb.size.quotes <= 20_000);
  t.throws(() => sb.accept(first.quote_id as string, 'm'), { message: /no sandbox quote/ },
    'c-0 held the most (5): its oldest went');
});

test.serial('sandbox: a victim\'s accepted quote executes after 22,000 quotes from 200 addresses; its one issued '
  + 'quote outlives the flooders\' oldest', (t) => {
  const sb = new Sandbox({ maxPerClient: 500 });
  const req = { machine_id: 'victim-m', bits: 8, max_output: 8192 };
  const t0 = 1_000_000;
  const accepted = sb.quote(req, 'victim', t0);
  sb.accept(accepted.quote_id as string, 'victim-m', t0);
  const issued = sb.quote(req, 'victim', t0);
  for (let i = 0; i < 22_000; i++) sb.quote({ ...req, machine_id: 'f' }, `flooder-${i % 200}`, t0 + 1 + (i >> 4));
  t.true(sb.size.quotes <= 20_000, `bounded: ${sb.size.quotes}`);
  const done = sb.execute(accepted.quote_id as string, 'victim-m', 'victim', t0 + 2000);
  t.is(done.quote_id, accepted.quote_id, 'the accepted quote survived and executed');
  t.notThrows(() => sb.accept(issued.quote_id as string, 'victim-m', t0 + 2000),
    'the victim held one: the 200 flooders holding ~110 each lost theirs first');
});

test.serial('sandbox: a table full of accepted quotes refuses a new one with busy, never drops one', (t) => {
  const sb = new Sandbox({ maxPerClient: 1_000_000 });
  const req = { machine_id: 'm', bits: 8, max_output: 8192 };
  const t0 = 1_000_000;
  for (let i = 0; i < 20_000; i++) sb.accept(sb.quote(req, `a-${i % 50}`, t0).quote_id as string, 'm', t0);
  const e = t.throws(() => sb.quote(req, 'newcomer', t0 + 1), { instanceOf: ServiceError });
  t.is(e.code, 'busy');
  t.is(e.details?.retry_after_s, 5);
});

test.serial('sandbox: expired entries go, at most a second after they are due; they answer as gone at once', (t) => {
  const sb = new Sandbox({ maxPerClient: 10 });
  const req = { machine_id: 'm', bits: 8, max_output: 8192 };
  const t0 = 1_000_000;
  const old = sb.quote(req, 'a', t0);
  for (let i = 1; i < 5; i++) sb.quote(req, 'a', t0 + i);
  const expired = t0 + SANDBOX_LIMITS.ttlSeconds * 1000 + 10;
  t.throws(() => sb.accept(old.quote_id as string, 'm', expired), { message: /no sandbox quote/ });
  sb.quote(req, 'b', expired);
  t.is(sb.size.quotes, 1, 'the five expired quotes were dropped when the next one came');
  t.notThrows(() => { for (let i = 0; i < 9; i++) sb.quote(req, 'a', expired + 1); }, 'and gave a its slots back');
});

test.serial('GET routes ignore query parameters they do not take (utm_source, cache busters)', async (t) => {
  const s = await Svcd.start({}, ['start']);
  t.teardown(() => { void s.stop().then(() => s.cleanup()); });
  const paths = [
    '/api/v1/hello?utm_source=news', '/api/v1/caps?_=123', '/api/v1/health?x=1', '/openapi.json?utm_medium=x',
  ];
  for (const p of paths) {
    const r = await httpFrom('127.0.0.1', s.ready.http!, 'GET', p);
    t.is(r.status, 200, p);
  }
  const bad = await httpFrom('127.0.0.1', s.ready.http!, 'GET', '/api/v1/hello?nonce=bad!');
  t.is(bad.status, 400, 'parameters a command takes are still validated');
});
