// USDT on TRON through the TRON code path, against a real local EVM node (anvil): TRON's full nodes
// answer the same Ethereum-style JSON-RPC (eth_getLogs, eth_getBlockByNumber), so the rail is
// configured as an operator would (T… addresses, base58check), the watcher converts them to the 20
// bytes the node speaks, and deposits come back in TRON's forms. What anvil cannot stand in for:
// TRON's `finalized` (solidified) tag; the test uses `latest` + 3 confirmations like the EVM tests.
import test from 'ava';
import { hexToTron } from '../../src/core/watchers/tron-address.ts';
import {
  CONFIRMATIONS, admin, balance, invoiceStatus, openInvoice, scannedThrough, startChain, startSvcd, waitSettled,
  type Chain,
} from './harness.ts';

const TRON = { network: 'TRON', asset: 'USDT' };

function tronEnv(chain: Chain, over: Record<string, string> = {}): Record<string, string> {
  return {
    SVC_WALLET_USDT_TRON: hexToTron(chain.railAddress),
    SVC_WATCH_USDT_TRON_RPC: chain.anvil.url,
    SVC_WATCH_USDT_TRON_TOKEN: hexToTron(chain.token),
    SVC_WATCH_USDT_TRON_FINALITY: 'latest',
    SVC_WATCH_USDT_TRON_CONFIRMATIONS: String(CONFIRMATIONS),
    SVC_WATCH_USDT_TRON_FROM_BLOCK: String(chain.fromBlock),
    SVC_WATCH_USDT_TRON_POLL_MS: '100',
    SVC_WATCH_USDT_TRON_MAX_BACKOFF_MS: '400',
    SVC_WATCH_USDT_TRON_MAX_RANGE: '4',
    // every pass reads the whole test chain again: the same transfer is seen on every pass
    SVC_WATCH_USDT_TRON_REORG_WINDOW: '1000',
    ...over,
  };
}

test('tron: a TRON-configured rail pays and settles its invoice exactly once; deposits in TRON forms', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, tronEnv(chain));
  const railT = hexToTron(chain.railAddress);
  t.regex(railT, /^T[1-9A-HJ-NP-Za-km-z]{33}$/);
  const inv = await openInvoice(s, 'tron-pay', 12, undefined, TRON);
  const token = inv.machine_token!;
  t.is(inv.pay_to, railT, 'the invoice names the T… address the operator configured');

  const paid = await chain.anvil.transfer(1, chain.railAddress, BigInt(inv.amount_due));
  const stray = await chain.anvil.transfer(2, chain.railAddress, 5n * 10n ** 6n + 3n);
  await chain.anvil.mine(CONFIRMATIONS);
  const settled = await waitSettled(s, inv, token);
  const txid = paid.hash.slice(2).toLowerCase();
  t.is(settled.settlement_reference, `${txid}:${paid.logIndex}`, 'TRON writes transaction ids as 64 hex, no 0x');
  t.is(await balance(s, inv.machine_id, token), BigInt(inv.credit_units));

  // more passes over the same blocks, and a restart: nothing credits twice
  await chain.anvil.mine(3);
  await scannedThrough(s, (await chain.anvil.blockNumber()) - CONFIRMATIONS, 'USDT_TRON');
  await s.stop();
  await s.start();
  await chain.anvil.mine(2);
  const st = await scannedThrough(s, (await chain.anvil.blockNumber()) - CONFIRMATIONS, 'USDT_TRON');
  t.like(st, { rail: 'USDT_TRON', family: 'tron', state: 'ok', finality: 'latest', confirmations: CONFIRMATIONS,
    credited: 0, unmatched: 0, last_error: null });
  t.true(st.cursor >= stray.block);
  const res = await fetch(`${s.ready.http}/api/v1/status`);
  const text = await res.text();
  t.like(JSON.parse(text).edge.watchers.USDT_TRON, { family: 'tron', cursor: st.cursor, chain: 8453 });
  t.false(text.includes(chain.anvil.url), 'the RPC URL is not published');
  t.is(await balance(s, inv.machine_id, token), BigInt(inv.credit_units), 'credited once');
  t.is((await invoiceStatus(s, inv, token)).state, 'settled');

  // the stranger's transfer waits in the queue, its payer and rail address as T…
  const { deposits } = await admin(s, 'UNMATCHED', {});
  t.is(deposits.length, 1);
  t.like(deposits[0], {
    rail: 'USDT_TRON', amount: '5000003', tx_id: stray.hash.slice(2).toLowerCase(), reason: 'unknown_amount',
    from: hexToTron(chain.anvil.account(2).address), to: railT,
  });
  const check = await s.stopAndCheckLedger();
  t.deepEqual([check.exitCode, check.ok, check.problems], [0, true, []]);
});
