// Only rails that can take money are offered (the real svcd over HTTP): on its default (SVC_PAYMENTS=live)
// an invoice on a rail without a receiving address is 400 unsupported_rail naming SVC_WALLET_<RAIL>,
// one with an address opens; GET /api/v1/payment says per rail whether it takes payments and who settles
// them; local mode (the README's quick start) opens invoices everywhere and says so in its start-up log.
import test from 'ava';
import { Svcd } from '../support/svcd.ts';

const BASE_WALLET = '0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc';
const invoice = (network: string, asset: string) =>
  ({ machine_id: `rails-${network}-${asset}`, units: 1, network, asset });

async function post(base: string, body: Record<string, unknown>) {
  const r = await fetch(`${base}/api/v1/invoices`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() as Record<string, any> };
}

test('live payments: a rail without a receiving address takes no invoice; the payment document says which do',
  async (t) => {
    const s = await Svcd.start({ SVC_PAYMENTS: 'live', SVC_WALLET_USDC_BASE: BASE_WALLET, SVC_LOG_LEVEL: 'info' },
      ['start']);
    t.teardown(async () => { await s.stop(); s.cleanup(); });
    const base = s.ready.http!;
    const tron = await post(base, invoice('TRON', 'USDT'));
    t.is(tron.status, 400, JSON.stringify(tron.body));
    t.is(tron.body.error.code, 'unsupported_rail');
    t.regex(tron.body.error.message, /takes no payments in USDT on TRON.*SVC_WALLET_USDT_TRON.*USDC\/Base/);
    const paid = await post(base, invoice('Base', 'USDC'));
    t.is(paid.status, 200, JSON.stringify(paid.body));
    t.is(paid.body.result?.pay_to ?? paid.body.pay_to, BASE_WALLET);
    const doc = await (await fetch(`${base}/api/v1/payment`)).json() as { rails: Record<string, unknown>[] };
    const byRail = Object.fromEntries(doc.rails.map((r) => [r.rail, r]));
    t.like(byRail.USDC_BASE, { takes_payments: true, settled_by: 'operator', address: BASE_WALLET });
    t.like(byRail.USDT_TRON, { takes_payments: false, address: '<WALLET_ADDRESS>' });
    t.regex(s.stdout, /rails without a receiving address.*take no payments/);
  });

test('local payments: every rail opens invoices, settled by hand, and the start-up log says so', async (t) => {
  const s = await Svcd.start({ SVC_PAYMENTS: 'local', SVC_LOG_LEVEL: 'info' }, ['start']);
  t.teardown(async () => { await s.stop(); s.cleanup(); });
  const tron = await post(s.ready.http!, invoice('TRON', 'USDT'));
  t.is(tron.status, 200, JSON.stringify(tron.body));
  t.regex(s.stdout, /local payments mode \(SVC_PAYMENTS=local\)/);
  const doc = await (await fetch(`${s.ready.http!}/api/v1/payment`)).json() as { rails: Record<string, unknown>[] };
  t.is(doc.rails.length, 4);
  for (const r of doc.rails) t.like(r, { takes_payments: true, settled_by: 'operator', address: '<WALLET_ADDRESS>' });
});

test('open invoices per client address: the cap holds over HTTP, across machine_ids, through gateway workers',
  async (t) => {
    const s = await Svcd.start({ SVC_MAX_OPEN_INVOICES_PER_ADDRESS: '2', SVC_GATEWAY_PROCESSES: '1' }, ['start']);
    t.teardown(async () => { await s.stop(); s.cleanup(); });
    const outcomes = [];
    for (let i = 0; i < 3; i++) {
      const r = await post(s.ready.http!, { machine_id: `cap-${i}`, units: 1, network: 'TRON', asset: 'USDT' });
      outcomes.push(r.status === 200 ? 'ok' : `${r.status} ${r.body.error.code}`);
    }
    t.deepEqual(outcomes, ['ok', 'ok', '409 too_many_open_invoices']);
  });
