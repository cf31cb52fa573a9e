// x402 end to end (docs/x402.md): the official client (@x402/fetch with @x402/evm, unmodified) pays for a
// GET_PULSE against svcd on anvil with an EIP-3009 token (a port of USDC, fixtures/); the node verifies,
// settles through its relayer and executes; the receipt names the payment and verifies offline.
import test from 'ava';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { verifyReceipt } from '../../src/kit/verify-api.ts';
import { HELD, NETWORK, PAYERS, auditClean, payingFetch, quotePulse, startChain, startSvcd } from './harness.ts';

test('the official x402 client pays for a pulse: 402, payment, result; paid once; the receipt verifies', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, chain, { SVC_METRICS_PORT: '0' });
  const payer = chain.anvil.account(PAYERS[0]!).address;
  // discoverable: the payment policy says how to pay per request
  const policy = await (await fetch(`${s.ready.http}/api/v1/payment`)).json() as { x402: Record<string, any> };
  t.like(policy.x402, { scheme: 'exact', x402_version: 2 });
  t.deepEqual(policy.x402.networks, [{
    network: NETWORK, asset: chain.token.toLowerCase(), pay_to: chain.payTo.toLowerCase(),
    settlement: { by: 'node relayer', finality: 'latest', confirmations: 0 },
  }]);
  const q = await quotePulse(s, 'agent-x402-1');
  const url = `${s.ready.http}/api/v1/executions/get-pulse`;
  const body = JSON.stringify({ machine_id: 'agent-x402-1', quote_id: q.quote_id });
  const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body };

  // unpaid: 402, the requirements in the header the client reads and in the ApiError body
  const unpaid = await fetch(url, init);
  t.is(unpaid.status, 402);
  const required = decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!);
  const amount = BigInt(Math.ceil(q.quote_units / 100));
  t.like(required, { x402Version: 2, resource: { url } });
  t.like(required.accepts[0], {
    scheme: 'exact', network: NETWORK, asset: chain.token.toLowerCase(), amount: amount.toString(),
    payTo: chain.payTo.toLowerCase(), extra: { name: 'USD Coin', version: '2', quote_id: q.quote_id },
  });
  const apiError = await unpaid.json() as { ok: boolean; error: { code: string } };
  t.like(apiError, { ok: false, error: { code: 'payment_required' } });

  const paid = await payingFetch(chain, PAYERS[0]!)(url, init);
  t.is(paid.status, 200, await paid.clone().text());
  const result = await paid.json() as Record<string, unknown> & { payment: Record<string, string> };
  const settled = decodePaymentResponseHeader(paid.headers.get('payment-response')!);
  t.like(settled, { success: true, network: NETWORK, payer: payer.toLowerCase() });
  t.regex(settled.transaction, /^0x[0-9a-f]{64}$/);
  t.like(result, { ok: true, quote_id: q.quote_id, units_charged: q.quote_units });
  t.like(result.payment, {
    scheme: 'exact', network: NETWORK, transaction: settled.transaction, amount: amount.toString(),
  });

  t.is(await chain.anvil.balanceOf(payer), HELD - amount);
  t.is(await chain.anvil.balanceOf(chain.payTo), amount);

  // the receipt names the payment, under its signature; it verifies with the node's published keys
  const rcpt = await (await fetch(`${s.ready.http}/api/v1/receipts/verify`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ machine_id: 'agent-x402-1', receipt_id: result.receipt_id }),
  })).json() as { receipt: { payment: Record<string, string> } };
  t.like(rcpt.receipt.payment, { transaction: settled.transaction, payer: payer.toLowerCase() });
  const keys = await (await fetch(`${s.ready.http}/.well-known/svc/nodes.json`)).json();
  const verdict = await verifyReceipt(rcpt, keys as never);
  t.true(verdict.valid, JSON.stringify(verdict));

  // the operator sees it: payments by state, and the relayer's gas money
  const metrics = await (await fetch(`http://${s.ready.metrics!}/metrics`)).text();
  t.regex(metrics, /^svc_x402_payments_total\{state="executed"\} 1$/m);
  t.regex(metrics, /^svc_x402_payments_total\{state="settled"\} 1$/m);
  const gas = Number(/^svc_x402_relayer_balance_ether (\S+)$/m.exec(metrics)?.[1]);
  t.true(gas > 0 && gas < 10_000, `relayer balance ${gas}`);
  const audit = await auditClean(t, s);
  t.deepEqual(audit.x402, [{ state: 'executed', network: NETWORK, count: 1, amount: amount.toString() }]);
});
