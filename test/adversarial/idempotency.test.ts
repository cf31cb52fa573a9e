// Idempotency keys as an attacker and an unlucky client see them: a lost
// claim reply is recoverable with the same key until the token is used; nobody can poison or read another's
// key; replays show the present state; records expire and are deleted.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../src/store/store.ts';
import { loadRecord, recordKey, recordOps, sweepIdempotency } from '../../src/core/idempotency.ts';
import { fundMachine, Svcd } from '../support/svcd.ts';
import { httpFrom } from '../support/http-from.ts';
import { until } from '../support/until.ts';
import { sharedSvcd } from '../support/start-svcd.ts';

const s = sharedSvcd(test, {}, { checkLedger: true });
let base: string;
test.before(() => { base = s.ready.http!; });

const post = (from: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  httpFrom(from, base, 'POST', path, body, headers);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const accept = (from: string, quoteId: string, machine: string, headers: Record<string, string>) =>
  post(from, `/api/v1/quotes/${quoteId}/accept`, { machine_id: machine }, headers);

test.serial('lost claim reply: the same key and body get the same invoice and token back, '
  + 'until the token is used', async (t) => {
  const body = { machine_id: 'lost-reply', units: 1, network: 'TRON', asset: 'USDT' };
  const key = { 'idempotency-key': 'c1a1m-2f6e5b8a-first-invoice' };
  const first = await post('127.0.0.2', '/api/v1/invoices', body, key);
  t.is(first.status, 200);
  const token = first.body.machine_token as string;
  t.regex(token, /^svcm_/);
  // the reply was lost: the client retries with the same key, without a token (it never saw it)
  const again = await post('127.0.0.3', '/api/v1/invoices', body, key);
  t.is(again.status, 200);
  t.is(again.headers['idempotent-replayed'], 'true');
  t.deepEqual([again.body.invoice_id, again.body.machine_token], [first.body.invoice_id, token]);
  // another body with the key, or another key: 401, nothing revealed
  const other = await post('127.0.0.3', '/api/v1/invoices', { ...body, units: 2 }, key);
  t.deepEqual([other.status, other.body.error.code], [401, 'unauthorized']);
  const guess = await post('127.0.0.3', '/api/v1/invoices', body, { 'idempotency-key': 'guess' });
  t.is(guess.status, 401);
  t.is(JSON.stringify(guess.body).includes('svcm_'), false);
  // first use of the token ends the replay
  const bal = await post('127.0.0.2', '/api/v1/balance', { machine_id: 'lost-reply' }, bearer(token));
  t.is(bal.status, 200);
  const late = await post('127.0.0.3', '/api/v1/invoices', body, key);
  t.deepEqual([late.status, late.body.error?.code], [401, 'unauthorized']);
  // the owner, with its token, still gets its original reply (without the token) for that key
  const owner = await post('127.0.0.2', '/api/v1/invoices', body, { ...key, ...bearer(token) });
  t.deepEqual([owner.status, owner.body.invoice_id, owner.body.machine_token], [200, first.body.invoice_id, undefined]);
});

test.serial('poisoning: a key used by an attacker on QUOTE (naming the victim) does not touch '
  + 'the victim\'s QUOTE or ACCEPT', async (t) => {
  const token = await fundMachine(s, 'idem-victim', 1);
  const k = { 'idempotency-key': 'victim-key-7' };
  // the attacker uses the victim's key first, from its own address, with another body
  const evil = await post('127.0.0.9', '/api/v1/quotes/get-pulse', { machine_id: 'idem-victim', bits: 8 }, k);
  t.is(evil.status, 200);
  const mine = await post('127.0.0.2', '/api/v1/quotes/get-pulse', { machine_id: 'idem-victim', bits: 64 }, k);
  t.is(mine.status, 200, 'not 422: the attacker\'s key use is in another scope');
  t.not(mine.body.quote_id, evil.body.quote_id);
  const acc = await accept('127.0.0.2', mine.body.quote_id, 'idem-victim', { ...bearer(token), ...k });
  t.is(acc.status, 200, 'ACCEPT with the same key is its own scope (command)');
  t.is(acc.body.state, 'accepted');
});

test.serial('scoping: two machines using one key each get their own replies, never the other\'s', async (t) => {
  const ta = await fundMachine(s, 'idem-a', 1);
  const tb = await fundMachine(s, 'idem-b', 1);
  const k = { 'idempotency-key': 'shared-key' };
  const qa = await post('127.0.0.2', '/api/v1/quotes/get-pulse', { machine_id: 'idem-a', bits: 64 });
  const qb = await post('127.0.0.2', '/api/v1/quotes/get-pulse', { machine_id: 'idem-b', bits: 64 });
  const aa = await accept('127.0.0.2', qa.body.quote_id, 'idem-a', { ...k, ...bearer(ta) });
  const ab = await accept('127.0.0.2', qb.body.quote_id, 'idem-b', { ...k, ...bearer(tb) });
  t.deepEqual([aa.status, ab.status], [200, 200]);
  t.deepEqual([aa.body.quote_id, ab.body.quote_id], [qa.body.quote_id, qb.body.quote_id]);
  const invoice = (machine_id: string) => ({ machine_id, units: 1, network: 'Base', asset: 'USDC' });
  const ia = await post('127.0.0.2', '/api/v1/invoices', invoice('idem-a'), { ...k, ...bearer(ta) });
  const ib = await post('127.0.0.2', '/api/v1/invoices', invoice('idem-b'), { ...k, ...bearer(tb) });
  t.deepEqual([ia.status, ib.status, ia.body.machine_id, ib.body.machine_id], [200, 200, 'idem-a', 'idem-b']);
  t.not(ia.body.invoice_id, ib.body.invoice_id);
});

test.serial('replays show the present state of what they name (quote issued → accepted)', async (t) => {
  const token = await fundMachine(s, 'idem-state', 1);
  const k = { 'idempotency-key': 'state-key' };
  const q = await post('127.0.0.2', '/api/v1/quotes/get-pulse', { machine_id: 'idem-state', bits: 64 }, k);
  t.is(q.body.state, 'issued');
  await accept('127.0.0.2', q.body.quote_id, 'idem-state', bearer(token));
  const replay = await post('127.0.0.2', '/api/v1/quotes/get-pulse', { machine_id: 'idem-state', bits: 64 }, k);
  const seen = [replay.headers['idempotent-replayed'], replay.body.quote_id, replay.body.state];
  t.deepEqual(seen, ['true', q.body.quote_id, 'accepted']);
});

test('expiry: records past their window are deleted by the sweep, a newer record under the same key '
  + 'is kept', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-idem-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open(dir);
  try {
    const k1 = recordKey('m:x', 'QUOTE', 'a'), k2 = recordKey('m:x', 'QUOTE', 'b');
    const rec = (expires: number) => ({ digest: 'd', command: 'QUOTE', result: {}, at_ms: 0, expires_ms: expires });
    await store.write([...recordOps(k1, rec(1000)), ...recordOps(k2, rec(5000))]);
    // k1 is used again after its window: the new record must survive the sweep of the old index entry
    await store.write(recordOps(k1, rec(9000)));
    t.is(await sweepIdempotency(store, 1500), 0);
    t.truthy(await loadRecord(store, k1, 1500));
    t.is(await sweepIdempotency(store, 6000), 1);
    t.is(await loadRecord(store, k2, 0), undefined);
    t.is(await store.get('idempotency', k2), undefined, 'deleted, not just hidden');
    t.is(await sweepIdempotency(store, 10_000), 1);
    let left = 0;
    for await (const _ of store.entries('idempotency_expiry')) left++;
    t.is(left, 0, 'the expiry index is empty too');
  } finally {
    await store.close();
  }
});

test('expiry end to end: after SVC_IDEMPOTENCY_TTL_MS the key is free again (another body is '
  + 'accepted, not 422)', async (t) => {
  const d = await Svcd.start({ SVC_IDEMPOTENCY_TTL_MS: '1000', SVC_SWEEP_INTERVAL_MS: '50' }, ['start']);
  t.teardown(() => { void d.stop().then(() => d.cleanup()); });
  const k = { 'idempotency-key': 'short' };
  const quote = (bits: number) =>
    httpFrom('127.0.0.2', d.ready.http!, 'POST', '/api/v1/quotes/get-pulse', { machine_id: 'ttl', bits }, k);
  const first = await quote(8);
  const clash = await quote(16);
  t.deepEqual([first.status, clash.status], [200, 422]);
  const status = await until('the key is free again', async () => {
    const now = (await quote(16)).status;
    return now !== 422 && now;
  }, { every: 200 });
  t.is(status, 200);
});
