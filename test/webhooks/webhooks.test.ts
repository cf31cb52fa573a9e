// Webhooks (src/core/webhooks.ts, webhook-deliverer.ts) against a real HTTP receiver on loopback, on both
// stores, with a clock the test moves: each event is recorded in the batch of what it reports (settled,
// expired by the sweep, unmatched, reorged), signed as documented, retried with backoff while the receiver
// fails, given up after a day, and sent again on RESEND_WEBHOOK. Deliveries are driven pass by pass here
// (deliverDue); the running loop is svcd's, tested end to end in svcd.test.ts.
import test, { type ExecutionContext } from 'ava';
import { deliverDue } from '../../src/core/webhook-deliverer.ts';
import { verifyWebhook } from '../../src/kit/verify-api.ts';
import { RETRY_FOR_MS, listDeliveries, resendEvent, type WebhookEvent } from '../../src/core/webhooks.ts';
import { fundAccount, settleInvoice } from '../../src/core/invoices.ts';
import { markReorged, recordDeposit } from '../../src/core/deposits.ts';
import { sweepLease, sweepRound } from '../../src/core/sweeps.ts';
import type { Config } from '../../src/core/config.ts';
import { coreFixture, type Fixture } from '../support/core-fixture.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';
import { txId, txRef } from '../support/references.ts';
import { receiver, type Receiver } from '../support/webhook-receiver.ts';

const postgres = postgresForFile(test);
const SECRET = 'whsec-test-0123456789abcdef0123456789abcdef';

type Open = (over?: Partial<Config>) => Promise<Fixture>;
function onBothStores(title: string, impl: (t: ExecutionContext, open: Open, r: Receiver) => Promise<void>) {
  const run = async (t: ExecutionContext, make: (over: Partial<Config>) => Promise<Fixture>) => {
    const r = await receiver();
    t.teardown(() => r.close());
    await impl(t, (over = {}) => make({ webhooks: { urls: [r.url], secret: SECRET }, ...over }), r);
  };
  test(`${title} (LevelDB)`, (t) => run(t, (over) => coreFixture(t, over)));
  testNeeding(test, `${title} (PostgreSQL)`, POSTGRES, async (t) => {
    const url = await (await postgres()).freshDatabase();
    await run(t, (over) => coreFixture(t, over, { postgres: url }));
  });
}

const fund = async (f: Fixture, machine: string) =>
  (await fundAccount(f.ctx, { machine_id: machine, units: 1, network: 'Base', asset: 'USDC' }, undefined)).invoice;

onBothStores('invoice.settled: recorded with the credit, delivered signed; a failing receiver is tried again '
  + 'after its backoff', async (t, open, r) => {
  const f = await open();
  const inv = await fund(f, 'hooked');
  t.deepEqual((await listDeliveries(f.ctx, { limit: 10 })).deliveries, [], 'creating an invoice reports nothing');
  await settleInvoice(f.ctx, inv.invoice_id, txRef('hook-1'), 'open');
  const [pending] = (await listDeliveries(f.ctx, { limit: 10 })).deliveries;
  t.like(pending, { type: 'invoice.settled', endpoint: r.url, state: 'pending', attempts: 0 });

  r.answer(503, 'down for a moment');
  t.deepEqual(await deliverDue(f.ctx), { delivered: 0, retried: 1, failed: 0 });
  const [retrying] = (await listDeliveries(f.ctx, { limit: 10 })).deliveries;
  t.like(retrying, { state: 'pending', attempts: 1, last_status: 503, last_error: 'HTTP 503: down for a moment' });
  t.is(retrying!.next_ms, f.clock.ms + 10_000, 'the first retry 10 s later');
  t.deepEqual(await deliverDue(f.ctx), { delivered: 0, retried: 0, failed: 0 }, 'not due yet: nothing sent');
  t.is(r.requests.length, 1);

  r.answer(200);
  f.clock.advance(10_000);
  t.deepEqual(await deliverDue(f.ctx), { delivered: 1, retried: 0, failed: 0 });
  const sent = r.requests.at(-1)!;
  const event = JSON.parse(sent.body) as WebhookEvent;
  t.like(event, {
    type: 'invoice.settled', api_version: 'v1.0.5', data: { invoice_id: inv.invoice_id, state: 'settled' },
  });
  t.regex(event.id, /^evt_[A-Za-z0-9_-]{20}$/);
  t.is(sent.headers['svc-event-id'], event.id);
  t.is(sent.headers['svc-event-type'], 'invoice.settled');
  t.is(sent.headers['content-type'], 'application/json');
  // the receiver's check, as docs/settlement.md gives it: the kit's verifyWebhook, over the raw body
  const header = sent.headers['svc-signature']!;
  const check = (body: string, secret = SECRET, now = f.clock.ms) => verifyWebhook(header, body, secret, { now });
  t.like(await check(sent.body), { valid: true, reason: null });
  t.like(await check(sent.body.replace('settled', 'expired')), { valid: false, reason: 'bad_signature' });
  t.like(await check(sent.body, `${SECRET}x`), { valid: false, reason: 'bad_signature' }, 'another secret');
  t.like(await check(sent.body, SECRET, f.clock.ms + 301_000), { valid: false, reason: 'stale_signature' },
    'a signature over 5 min old (a replay)');
  t.like(await verifyWebhook('t=1', sent.body, SECRET), { valid: false, reason: 'malformed' });
  t.like(await verifyWebhook(undefined, sent.body, SECRET), { valid: false, reason: 'malformed' });
  const [delivered] = (await listDeliveries(f.ctx, { limit: 10 })).deliveries;
  t.like(delivered, { state: 'delivered', attempts: 2, last_status: 200 });
  t.deepEqual(await deliverDue(f.ctx), { delivered: 0, retried: 0, failed: 0 }, 'delivered once');
});

onBothStores('a receiver that never answers 2xx: tried for a day with growing waits, then failed; resent on '
  + 'request', async (t, open, r) => {
  const f = await open();
  const inv = await fund(f, 'unreachable');
  await settleInvoice(f.ctx, inv.invoice_id, txRef('hook-2'), 'open');
  r.answer(500);
  const start = f.clock.ms;
  const waits: number[] = [];
  for (let i = 0; i < 100; i++) {
    const before = f.clock.ms;
    const pass = await deliverDue(f.ctx);
    if (pass.failed) break;
    const [d] = (await listDeliveries(f.ctx, { limit: 1 })).deliveries;
    waits.push(d!.next_ms! - before);
    f.clock.set(d!.next_ms!);
  }
  t.deepEqual(waits.slice(0, 5), [10_000, 20_000, 40_000, 80_000, 160_000]);
  t.true(waits.every((w) => w <= 3_600_000), 'at most an hour apart');
  const [failed] = (await listDeliveries(f.ctx, { limit: 1 })).deliveries;
  t.like(failed, { state: 'failed', last_status: 500, queue_key: null });
  t.true(f.clock.ms - start < RETRY_FOR_MS && f.clock.ms + 3_600_000 >= start + RETRY_FOR_MS, 'given up after a day');
  t.is(r.requests.length, failed!.attempts);
  const ids = new Set(r.requests.map((q) => JSON.parse(q.body).id));
  t.is(ids.size, 1, 'every try carries the one event id');

  r.answer(200);
  t.like(await resendEvent(f.ctx, failed!.event_id), { scheduled: 1 });
  t.deepEqual(await deliverDue(f.ctx), { delivered: 1, retried: 0, failed: 0 });
  t.like((await listDeliveries(f.ctx, { state: 'delivered', limit: 5 })).deliveries[0], { attempts: 1 });
  await t.throwsAsync(resendEvent(f.ctx, 'evt_nope'), { message: /no webhook event evt_nope/ });
});

onBothStores('invoice.expired by the sweep (nobody reads it), deposit.unmatched, deposit.reorged; no endpoint: '
  + 'no event kept', async (t, open, r) => {
  const f = await open({ invoiceTtlMs: 60_000 });
  const inv = await fund(f, 'expiring');
  f.clock.advance(60_000);
  const round = await sweepRound(f.ctx, sweepLease(f.ctx));
  t.is(round.invoices, 1);
  t.is((await f.store.get('invoices', inv.invoice_id))?.state, 'expired');
  const { deposit } = await recordDeposit(f.ctx, {
    rail: 'USDC_BASE', tx_id: txId('stranger'), log_index: 0, amount: '7123456', from: '0xpayer', to: 'addr-USDC_BASE',
    block_number: 10, block_hash: `0x${'bb'.repeat(32)}`, confirmations: 4,
    block_time: new Date(f.clock.ms).toISOString(),
  });
  t.is(deposit.state, 'unmatched');
  await markReorged(f.ctx, deposit.deposit_id);
  r.answer(204);
  t.deepEqual(await deliverDue(f.ctx), { delivered: 3, retried: 0, failed: 0 });
  const types = r.requests.map((q) => JSON.parse(q.body)).map((e) => [e.type, e.data.invoice_id ?? e.data.deposit_id]);
  t.deepEqual(types.sort(), [
    ['deposit.reorged', deposit.deposit_id], ['deposit.unmatched', deposit.deposit_id],
    ['invoice.expired', inv.invoice_id],
  ]);
  t.is((await sweepRound(f.ctx, sweepLease(f.ctx))).invoices, 0, 'expired once');

  // (on PostgreSQL the second fixture shares the first's database: count what it adds)
  const events = async (store: Fixture['store']) => {
    let n = 0;
    for await (const _ of store.keys('webhook_events')) n++;
    return n;
  };
  const quiet = await open({ webhooks: null });
  const before = await events(quiet.store);
  const other = await fund(quiet, 'quiet');
  await settleInvoice(quiet.ctx, other.invoice_id, txRef('hook-3'), 'open');
  t.is(await events(quiet.store), before);
});
