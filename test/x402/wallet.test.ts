// x402 and the USDC on Base watcher on one wallet (docs/x402.md "One wallet"): an x402 settlement is its
// payment's money, so the watcher queues no deposit for it; a transfer paying an invoice still settles it.
import test from 'ava';
import { admin, openInvoice, scannedThrough, waitSettled, watcherEnv } from '../watchers/harness.ts';
import { PAYERS, auditClean, executePulse, pricedQuote, signPayment, startChain, startSvcd } from './harness.ts';

test('an x402 settlement to the watched wallet is no unmatched deposit; an invoice on it still settles', async (t) => {
  const chain = await startChain(t);
  const fromBlock = await chain.anvil.blockNumber();
  const s = await startSvcd(t, chain, watcherEnv({ ...chain, railAddress: chain.payTo, fromBlock }, chain.anvil.url));
  const { q, req } = await pricedQuote(s, 'wallet-agent');
  const paid = await executePulse(s, 'wallet-agent', q.quote_id,
    { 'payment-signature': await signPayment(chain, PAYERS[0]!, req) });
  t.is(paid.status, 200);
  const inv = await openInvoice(s, 'wallet-funder', 5);
  const sent = await chain.anvil.transfer(PAYERS[1]!, chain.payTo, BigInt(inv.amount_due));
  await chain.anvil.mine(3);
  await scannedThrough(s, sent.block);
  t.is((await waitSettled(s, inv, inv.machine_token!)).state, 'settled');
  const { deposits } = await admin(s, 'UNMATCHED', {});
  t.deepEqual(deposits, [], 'the x402 settlement is in no queue');
  await auditClean(t, s);
});
