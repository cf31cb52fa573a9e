// x402 settlements around the happy path (docs/x402.md "Exactly once"): svcd killed with the settlement
// on its way, or before it left; a settlement that reverts; one never mined before the authorization ran
// out. Mining is by hand here (anvil's automine off), so each case stops exactly where it should.
import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseGwei } from 'viem';
import { RpcProxy } from '../support/anvil.ts';
import {
  HELD, PAYERS, auditClean, executePulse, pricedQuote, signPayment, startChain, startSvcd, type Chain,
} from './harness.ts';

/** Resolves once the chain's pool holds `n` transactions not yet mined. */
async function pooled(chain: Chain, n = 1): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if ((await chain.anvil.test.getTxpoolStatus()).pending >= n) return;
    await sleep(20);
  }
  throw new Error('no transaction reached the pool');
}

test('kill -9 with the settlement in the pool: settled once at restart; the retry gets the result', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, chain);
  const { q, req } = await pricedQuote(s, 'crash-agent');
  const header = await signPayment(chain, PAYERS[0]!, req);
  await chain.anvil.test.setAutomine(false);
  const lost = executePulse(s, 'crash-agent', q.quote_id, { 'payment-signature': header }).catch((e: unknown) => e);
  await pooled(chain);
  await s.kill9();
  t.true((await lost) instanceof Error, 'the request died with svcd');
  await chain.anvil.mine(1);
  await chain.anvil.test.setAutomine(true);
  await s.start(['start']);
  const retry = await executePulse(s, 'crash-agent', q.quote_id, { 'payment-signature': header });
  t.is(retry.status, 200, await retry.clone().text());
  const again = await executePulse(s, 'crash-agent', q.quote_id, { 'payment-signature': header });
  const id = async (r: Response) => (await r.json() as { receipt_id: string }).receipt_id;
  t.is(await id(again), await id(retry));
  t.is(await chain.anvil.balanceOf(chain.anvil.account(PAYERS[0]!).address), HELD - BigInt(req.amount));
  await auditClean(t, s);
});

test('kill -9 after the hash was recorded, before the transaction left: sent at restart, settled once', async (t) => {
  const chain = await startChain(t);
  const proxy = await RpcProxy.start(chain.anvil.url);
  t.teardown(() => proxy.close());
  const s = await startSvcd(t, chain, {}, proxy.url);
  const { q, req } = await pricedQuote(s, 'unsent-agent');
  const header = await signPayment(chain, PAYERS[1]!, req);
  let sent!: () => void;
  const sending = new Promise<void>((r) => { sent = r; });
  proxy.onCall = (c) => {
    if (c.method !== 'eth_sendRawTransaction') return undefined;
    sent();
    return 'drop';
  };
  const lost = executePulse(s, 'unsent-agent', q.quote_id, { 'payment-signature': header }).catch((e: unknown) => e);
  await sending;
  await s.kill9();
  await lost;
  t.is((await chain.anvil.test.getTxpoolStatus()).pending, 0, 'nothing reached the chain');
  proxy.onCall = null;
  await s.start(['start']);
  const retry = await executePulse(s, 'unsent-agent', q.quote_id, { 'payment-signature': header });
  t.is(retry.status, 200, await retry.clone().text());
  t.is(await chain.anvil.balanceOf(chain.anvil.account(PAYERS[1]!).address), HELD - BigInt(req.amount));
  await auditClean(t, s);
});

test('a settlement that reverts (the payer moved the funds first): 402 payment_failed, nothing charged', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, chain);
  const { q, req } = await pricedQuote(s, 'revert-agent');
  const payer = PAYERS[2]!;
  const header = await signPayment(chain, payer, req);
  await chain.anvil.test.setAutomine(false);
  const answer = executePulse(s, 'revert-agent', q.quote_id, { 'payment-signature': header });
  await pooled(chain);
  // the payer empties its account ahead of the settlement, in the same block
  await chain.anvil.wallet(payer).writeContract({
    address: chain.token, abi: TRANSFER_ABI, functionName: 'transfer', args: [chain.anvil.account(7).address, HELD],
    account: chain.anvil.account(payer), chain: null,
    maxPriorityFeePerGas: parseGwei('100'), maxFeePerGas: parseGwei('200'),
    gas: 100_000n,
  });
  await pooled(chain, 2);
  await chain.anvil.mine(1);
  await chain.anvil.test.setAutomine(true);
  const r = await answer;
  t.is(r.status, 402);
  const body = await r.json() as { error: { code: string; details: { payment_required: { error: string } } } };
  t.like(body, { error: { code: 'payment_failed', details: { payment_required: { error: 'settlement_reverted' } } } });
  t.is(await chain.anvil.balanceOf(chain.payTo), 0n);
  const audit = await auditClean(t, s);
  t.is((audit.totals as { credited_units: string }).credited_units, '0');
});

test('a settlement never mined before the authorization ran out: 402 payment_failed, nothing charged', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, chain);
  const { q, req } = await pricedQuote(s, 'stuck-agent');
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + 9);
  const header = await signPayment(chain, PAYERS[3]!, req, { validBefore });
  await chain.anvil.test.setAutomine(false);
  const answer = executePulse(s, 'stuck-agent', q.quote_id, { 'payment-signature': header });
  // every settlement the node sends is dropped from the pool until the authorization has run out
  let dropping = true;
  const dropper = (async () => {
    while (dropping) {
      await chain.anvil.test.request({ method: 'anvil_dropAllTransactions' } as never).catch(() => undefined);
      await sleep(20);
    }
  })();
  const r = await answer;
  dropping = false;
  await dropper;
  await chain.anvil.test.setAutomine(true);
  t.is(r.status, 402);
  t.like(await r.json(),
    { error: { code: 'payment_failed', details: { payment_required: { error: 'authorization_expired' } } } });
  t.is(await chain.anvil.balanceOf(chain.anvil.account(PAYERS[3]!).address), HELD);
  await auditClean(t, s);
});

test('a settlement not yet deep enough: 409 payment_pending; the same request once it is runs it', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, chain, { SVC_X402_CONFIRMATIONS: '3', SVC_X402_MAX_TIMEOUT_S: '10' });
  const { q, req } = await pricedQuote(s, 'deep-agent', 256);
  const header = await signPayment(chain, PAYERS[0]!, req);
  // mined at once (automine), then no block on top of it: not 3 deep before the request stops waiting
  const early = await executePulse(s, 'deep-agent', q.quote_id, { 'payment-signature': header });
  t.is(early.status, 409);
  t.like(await early.json(), { error: { code: 'payment_pending' } });
  t.is(await chain.anvil.balanceOf(chain.payTo), BigInt(req.amount), 'paid on chain, not executed yet');
  await chain.anvil.mine(3);
  const done = await executePulse(s, 'deep-agent', q.quote_id, { 'payment-signature': header });
  t.is(done.status, 200, await done.clone().text());
  await auditClean(t, s);
});

const TRANSFER_ABI = [{
  type: 'function', name: 'transfer', stateMutability: 'nonpayable',
  inputs: [{ name: 'to', type: 'address' }, { name: 'value', type: 'uint256' }], outputs: [{ type: 'bool' }],
}] as const;
