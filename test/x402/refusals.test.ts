// x402 payments that do not pay the quote are refused before anything is sent (docs/x402.md "What is
// checked"): 402 payment_invalid with fresh requirements and x402's reason, nothing moved on chain, nothing
// recorded; and who may pay what: a claimed machine's quote needs its token, a token holder who can pay
// from the balance accepts the quote as before.
import test from 'ava';
import { fundMachine } from '../support/svcd.ts';
import {
  HELD, PAYERS, auditClean, executePulse, pricedQuote, quotePulse, requirementsOf, signPayment, startChain, startSvcd,
} from './harness.ts';

test('payments that do not pay the quote: 402 payment_invalid naming why; nothing moves', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, chain);
  const { q, req } = await pricedQuote(s, 'refused-agent');
  const now = BigInt(Math.floor(Date.now() / 1000));
  const payer = PAYERS[0]!;
  const cases: [string, Promise<string> | string, string][] = [
    ['expired', signPayment(chain, payer, req, { validBefore: now - 1n }),
      'invalid_exact_evm_payload_authorization_valid_before'],
    ['not valid yet', signPayment(chain, payer, req, { validAfter: now + 3600n }),
      'invalid_exact_evm_payload_authorization_valid_after'],
    ['wrong payee', signPayment(chain, payer, req, { to: chain.anvil.account(7).address }),
      'invalid_exact_evm_payload_recipient_mismatch'],
    ['less than the price', signPayment(chain, payer, req, { value: String(BigInt(req.amount) - 1n) }),
      'invalid_exact_evm_payload_authorization_value'],
    ['another chain named', signPayment(chain, payer, req, { network: 'eip155:1' }), 'invalid_network'],
    ['signed for another chain', signPayment(chain, payer, req, { chainId: 1 }), 'invalid_exact_evm_payload_signature'],
    ['signed by another key', signPayment(chain, payer, req, { signer: 5 }), 'invalid_exact_evm_payload_signature'],
    ['a payer without the funds', signPayment(chain, 6, req), 'insufficient_funds'],
    ['not a payment', Buffer.from('{"x402Version":2}').toString('base64'), 'invalid_payload'],
    ['not base64 JSON', '!!!', 'invalid_payload'],
  ];
  for (const [what, header, reason] of cases) {
    const r = await executePulse(s, 'refused-agent', q.quote_id, { 'payment-signature': await header });
    t.is(r.status, 402, what);
    const again = await requirementsOf(r.clone());
    t.is(again.amount, req.amount, `${what}: the requirements to pay with come back`);
    const body = await r.json() as { error: { code: string; details: { payment_required: { error: string } } } };
    t.is(body.error.code, 'payment_invalid', what);
    t.is(body.error.details.payment_required.error, reason, what);
  }
  t.is(await chain.anvil.balanceOf(chain.anvil.account(payer).address), HELD);
  t.is(await chain.anvil.balanceOf(chain.payTo), 0n);
  // the quote is still payable, by a good payment
  const good = await executePulse(s, 'refused-agent', q.quote_id,
    { 'payment-signature': await signPayment(chain, payer, req) });
  t.is(good.status, 200);
  await auditClean(t, s);
});

test('who pays: a claimed machine needs its token; a balance that covers the quote accepts it as before', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, chain);
  const token = await fundMachine(s, 'funded-agent', 1_000_000);
  const q = await quotePulse(s, 'funded-agent');
  // no token for a claimed machine: 401, with or without a payment
  t.is((await executePulse(s, 'funded-agent', q.quote_id)).status, 401);
  const bearer = { authorization: `Bearer ${token}` };
  // with its token and a balance that covers it: the contract's 409, accept first
  const covered = await executePulse(s, 'funded-agent', q.quote_id, bearer);
  t.is(covered.status, 409);
  t.like(await covered.json(), { error: { code: 'quote_not_accepted' } });

  // a token holder whose balance is short (an invoice opened, never paid) gets the 402 and may pay with x402
  const c = await s.edge();
  const invoice = await c.request('FUND_ACCOUNT',
    { machine_id: 'poor-agent', units: 1, network: 'TRON', asset: 'USDT' });
  c.close();
  const poor = invoice.machine_token as string;
  const q2 = await quotePulse(s, 'poor-agent');
  const short = await executePulse(s, 'poor-agent', q2.quote_id, { authorization: `Bearer ${poor}` });
  const req = await requirementsOf(short);
  const paid = await executePulse(s, 'poor-agent', q2.quote_id,
    { authorization: `Bearer ${poor}`, 'payment-signature': await signPayment(chain, PAYERS[1]!, req) });
  t.is(paid.status, 200, await paid.clone().text());
  // the payment paid the quote, rounded up to a whole token unit: the rest is the machine's
  const balance = await (await fetch(`${s.ready.http}/api/v1/balance`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${poor}` },
    body: JSON.stringify({ machine_id: 'poor-agent' }),
  })).json() as { available_units: string };
  t.is(BigInt(balance.available_units), BigInt(req.amount) * 100n - BigInt(q2.quote_units));
  await auditClean(t, s);
});
