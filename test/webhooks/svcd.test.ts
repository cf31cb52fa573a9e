// Webhooks end to end on a real svcd: SVC_WEBHOOK_URLS and SVC_WEBHOOK_SECRET, an invoice settled with
// svc-admin, a receiver that is down (the delivery waits, retried), svcd killed with kill -9 meanwhile and
// started again (the event is neither lost nor made twice), delivered once the receiver is back, listed
// and sent again with svc-admin. The secret never appears in svcd's output.
import test from 'ava';
import { cliJson, Svcd } from '../support/svcd.ts';
import { txRef } from '../support/references.ts';
import { until } from '../support/until.ts';
import { receiver } from '../support/webhook-receiver.ts';

const SECRET = 'whsec-svcd-0123456789abcdef0123456789abcdef';

test('a settlement reaches the receiver across a kill -9 of svcd: one event, delivered, resent on request',
  async (t) => {
    const r = await receiver();
    t.teardown(() => r.close());
    r.answer(503);
    const s = new Svcd({ SVC_WEBHOOK_URLS: r.url, SVC_WEBHOOK_SECRET: SECRET });
    t.teardown(() => { void s.stop().catch(() => {}); s.cleanup(); });
    await s.start(['core']);
    const c = await s.edge();
    const inv = await c.request('FUND_ACCOUNT', { machine_id: 'hooked', units: 1, network: 'Base', asset: 'USDC' });
    c.close();
    const settled = await s.svcAdmin(['--json', 'settle-invoice', inv.invoice_id as string,
      '--reference', txRef('svcd-hook')]);
    t.is(settled.code, 0, settled.stderr);
    const list = async (...filter: string[]) => cliJson(await s.svcAdmin(['--json', 'webhooks', ...filter]));
    await until('a first attempt (refused: 503)', async () => (await list()).deliveries[0]?.attempts >= 1,
      { every: 200 });
    const [tried] = (await list()).deliveries;
    t.like(tried, { type: 'invoice.settled', state: 'pending', last_status: 503, endpoint: r.url });

    await s.kill9();
    r.answer(200);
    await s.start(['core']);
    await until('delivered after the restart', async () => (await list()).deliveries[0]?.state === 'delivered',
      { every: 200 });
    const ids = new Set(r.requests.map((q) => JSON.parse(q.body).id));
    t.deepEqual([...ids], [tried.event_id], 'the one event, neither lost nor made again');
    const delivered = await list('--state', 'delivered');
    t.is(delivered.deliveries.length, 1);

    const before = r.requests.length;
    const resent = await s.svcAdmin(['--json', 'resend-webhook', tried.event_id]);
    t.is(resent.code, 0, resent.stderr);
    t.like(cliJson(resent), { event_id: tried.event_id, scheduled: 1 });
    await until('sent again', () => r.requests.length > before);
    t.is(JSON.parse(r.requests.at(-1)!.body).id, tried.event_id);
    t.false(s.stdout.includes(SECRET) || s.stderr.includes(SECRET), 'the secret is never logged');
  });

test('a webhook secret without URLs, or a short one, stops svcd at start naming the variable', async (t) => {
  const alone = new Svcd({ SVC_WEBHOOK_SECRET: SECRET });
  t.teardown(() => alone.cleanup());
  const a = await alone.startExpectingFailure();
  t.not(a.code, 0);
  t.regex(a.output, /SVC_WEBHOOK_SECRET is set but SVC_WEBHOOK_URLS is not/);
  const short = new Svcd({ SVC_WEBHOOK_URLS: 'http://127.0.0.1:9/hooks', SVC_WEBHOOK_SECRET: 'short' });
  t.teardown(() => short.cleanup());
  const b = await short.startExpectingFailure();
  t.regex(b.output, /SVC_WEBHOOK_SECRET must be at least 32 characters/);
  t.false(b.output.includes('short\n'));
});
