// x402, one authorization → one settlement → one execution (docs/x402.md "Exactly once"): the same payment
// sent again gets the first result, twenty copies at once settle and execute once, and an authorization that
// paid one quote pays no other. Money is counted on the chain and in the audit.
import test from 'ava';
import {
  HELD, PAYERS, auditClean, executePulse, pricedQuote, quotePulse, requirementsOf, signPayment, startChain, startSvcd,
} from './harness.ts';

test('the same payment sent again: the first result, replayed; the chain moved once', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, chain);
  const { q, req } = await pricedQuote(s, 'replay-agent');
  const header = await signPayment(chain, PAYERS[0]!, req);
  const first = await executePulse(s, 'replay-agent', q.quote_id, { 'payment-signature': header });
  t.is(first.status, 200, await first.clone().text());
  const a = await first.json() as Record<string, unknown>;
  const again = await executePulse(s, 'replay-agent', q.quote_id, { 'payment-signature': header });
  t.is(again.status, 200);
  const b = await again.json() as Record<string, unknown>;
  t.is(b.receipt_id, a.receipt_id);
  t.is(b.replayed, true);
  t.truthy(first.headers.get('payment-response'));
  t.is(again.headers.get('payment-response'), first.headers.get('payment-response'));
  t.is(await chain.anvil.balanceOf(chain.anvil.account(PAYERS[0]!).address), HELD - BigInt(req.amount));
  await auditClean(t, s);
});

test('twenty copies of one payment at once: one settlement, one execution, twenty times the same result', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, chain);
  const { q, req } = await pricedQuote(s, 'crowd-agent');
  const header = await signPayment(chain, PAYERS[1]!, req);
  const answers = await Promise.all(Array.from({ length: 20 }, () =>
    executePulse(s, 'crowd-agent', q.quote_id, { 'payment-signature': header })));
  const bodies = await Promise.all(answers.map((r) => r.json() as Promise<Record<string, unknown>>));
  t.deepEqual(answers.map((r) => r.status), Array(20).fill(200), JSON.stringify(bodies.find((b) => !b.ok)));
  t.is(new Set(bodies.map((b) => b.receipt_id)).size, 1);
  t.is(bodies.filter((b) => !b.replayed).length, 1, 'one ran, nineteen replayed it');
  t.is(await chain.anvil.balanceOf(chain.anvil.account(PAYERS[1]!).address), HELD - BigInt(req.amount));
  t.is(await chain.anvil.balanceOf(chain.payTo), BigInt(req.amount));
  await auditClean(t, s);
});

test('an authorization that paid one quote pays no other (409 payment_used); the other stays unpaid', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, chain);
  const q1 = await quotePulse(s, 'reuse-agent');
  const q2 = await quotePulse(s, 'reuse-agent');
  const req = await requirementsOf(await executePulse(s, 'reuse-agent', q1.quote_id));
  const header = await signPayment(chain, PAYERS[2]!, req);
  t.is((await executePulse(s, 'reuse-agent', q1.quote_id, { 'payment-signature': header })).status, 200);
  const other = await executePulse(s, 'reuse-agent', q2.quote_id, { 'payment-signature': header });
  t.is(other.status, 409);
  t.like(await other.json(), { ok: false, error: { code: 'payment_used' } });
  t.is((await executePulse(s, 'reuse-agent', q2.quote_id)).status, 402, 'the second quote is still to be paid');
  t.is(await chain.anvil.balanceOf(chain.anvil.account(PAYERS[2]!).address), HELD - BigInt(req.amount));
});
