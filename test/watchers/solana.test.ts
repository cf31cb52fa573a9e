// The Solana watcher end to end: the real svcd, its USDC/Solana watcher pointed at a stand-in RPC on
// loopback (solana-chain.ts: real HTTP JSON-RPC answering getGenesisHash, getSlot,
// getSignaturesForAddress and getTransaction) that serves transactions really executed by litesvm,
// with finality moved by hand. An exact payment is shown while confirmed and settles once it is
// finalized, never before; the same signature listed again (a node ignoring the cursor, a restart)
// credits once; a wrong amount waits in the unmatched queue.
import test, { type ExecutionContext } from 'ava';
import { AccountRole, address, generateKeyPairSigner } from '@solana/kit';
import {
  admin, balance, invoiceStatus, openInvoice, scannedThrough, startSvcd, waitFor, waitSettled, watcherStatus,
} from './harness.ts';
import { SolanaChain, SolanaRpcStandIn } from './solana-chain.ts';

const UNIT = 10n ** 6n;
const SOLANA_USDC = { network: 'Solana', asset: 'USDC' };

/**
 * litesvm behind the RPC stand-in, the rail's wallet with its token account (made and finalized before the watcher
 * starts: its history is not read), a payer holding 1,000 tokens, and svcd watching the rail (`env` added).
 */
async function watched(t: ExecutionContext, env: Record<string, string> = {}) {
  t.timeout(5 * 60_000);
  const chain = await SolanaChain.start();
  const rpc = await SolanaRpcStandIn.start();
  t.teardown(() => rpc.close());
  const rail = await generateKeyPairSigner();
  const railAta = await chain.ata(rail.address);
  rpc.add(await chain.execute([chain.createAtaIx(rail.address, chain.mint, railAta)]));
  rpc.finalizeAll();
  const payer = await chain.fundedWallet(1_000n * UNIT);
  const s = await startSvcd(t, {
    SVC_WALLET_USDC_SOLANA: rail.address, SVC_WATCH_USDC_SOLANA_RPC: rpc.url,
    SVC_WATCH_USDC_SOLANA_MINT: chain.mint, SVC_WATCH_USDC_SOLANA_POLL_MS: '100', ...env,
  });
  return { chain, rpc, rail, railAta, payer, s };
}

test('solana watcher: settles once at finality; a signature seen again credits once; wrong amount queues',
  async (t) => {
    const { chain, rpc, rail, railAta, payer, s } = await watched(t, {
      SVC_WATCH_USDC_SOLANA_MAX_BACKOFF_MS: '400',
      // two signatures a page: the account's three transactions take paging
      SVC_WATCH_USDC_SOLANA_PAGE_SIZE: '2',
    });
    const st0 = await scannedThrough(s, rpc.finalizedSlot, 'USDC_SOLANA');
    t.like(st0, { rail: 'USDC_SOLANA', family: 'solana', state: 'ok', finality: 'finalized', chain: rpc.genesis,
      last_error: null });
    t.deepEqual(st0.accounts, [{ address: railAta, last_signature: null }], 'the ATA derived from wallet and mint');

    const inv = await openInvoice(s, 'sol-pay', 9, undefined, SOLANA_USDC);
    const token = inv.machine_token!;
    t.is(inv.pay_to, rail.address);
    const paid = await chain.execute([chain.transferIx(payer, railAta, BigInt(inv.amount_due))], payer.signer);
    const sig = paid.transaction.signatures[0]!;
    rpc.add(paid);
    // confirmed, not finalized: INVOICE_STATUS shows the payment, nothing is credited
    const seen = await waitFor('the payment to be seen', async () => {
      const cur = await invoiceStatus(s, inv, token);
      return cur.payment_seen ? cur : undefined;
    });
    t.is(seen.state, 'pending');
    t.like(seen.payment_seen, { tx_id: sig, block_number: Number(paid.slot) });
    t.is(await balance(s, inv.machine_id, token), 0n);
    // the pass that saw the payment publishes its status at its end: wait for it, not for a time
    const lagging = await waitFor('the status to show the unfinalized slots as lag', async () => {
      const st = await watcherStatus(s, 'USDC_SOLANA');
      return st.lag_blocks > 0 ? st : undefined;
    });
    t.true(lagging.lag_blocks > 0);

    rpc.finalizeAll();
    const settled = await waitSettled(s, inv, token);
    const index = paid.transaction.message.accountKeys.indexOf(railAta);
    t.is(settled.settlement_reference, `${sig}:${index}`, 'the signature as Solana writes it (case kept)');
    t.is(settled.payment_seen, undefined);
    t.is(await balance(s, inv.machine_id, token), BigInt(inv.credit_units));

    // a wrong amount: queued, naming the open invoice it most likely meant
    const inv2 = await openInvoice(s, 'sol-wrong', 4, undefined, SOLANA_USDC);
    const wrong = await chain.execute([chain.transferIx(payer, railAta, BigInt(inv2.amount_due) + 1n)],
      payer.signer);
    rpc.add(wrong);
    rpc.finalizeAll();
    const st1 = await scannedThrough(s, rpc.finalizedSlot, 'USDC_SOLANA');
    t.deepEqual(st1.accounts, [{ address: railAta, last_signature: wrong.transaction.signatures[0] }]);
    t.like(st1, { credited: 1, unmatched: 1, lag_blocks: 0 });
    // the public status document carries the same, never the RPC URL
    const res = await fetch(`${s.ready.http}/api/v1/status`);
    const text = await res.text();
    t.like(JSON.parse(text).edge.watchers.USDC_SOLANA, { family: 'solana', cursor: rpc.finalizedSlot, lag_blocks: 0,
      head: rpc.finalizedSlot, last_error: null });
    t.false(text.includes(rpc.url), 'the RPC URL is not published');
    const { deposits } = await admin(s, 'UNMATCHED', {});
    t.is(deposits.length, 1);
    t.like(deposits[0], {
      rail: 'USDC_SOLANA', tx_id: wrong.transaction.signatures[0], amount: (BigInt(inv2.amount_due) + 1n).toString(),
      reason: 'amount_mismatch', nearest_invoice_id: inv2.invoice_id, from: payer.signer.address, to: railAta,
      block_number: Number(wrong.slot),
    });
    t.is((await invoiceStatus(s, inv2, inv2.machine_token!)).state, 'pending');

    // the RPC down: the status says so (no URL), and the watcher recovers when it is back
    rpc.down = true;
    const down = await waitFor('the watcher to report the RPC down', async () => {
      const st = await watcherStatus(s, 'USDC_SOLANA');
      return st.state === 'error' ? st : undefined;
    });
    t.true(down.errors_in_a_row >= 1);
    t.truthy(down.last_error);
    t.false(JSON.stringify(down).includes(rpc.url));
    rpc.down = false;
    await waitFor('the watcher to recover', async () =>
      ((await watcherStatus(s, 'USDC_SOLANA')).state === 'ok' ? true : undefined));

    // the node lists every signature again whatever the cursor, and svcd restarts: nothing credits twice
    rpc.ignoreUntil = true;
    const reads = () => rpc.calls.filter((m) => m === 'getTransaction').length;
    const before = reads();
    await waitFor('the watcher to read the old transactions again',
      async () => (reads() >= before + 4 ? true : undefined));
    await s.stop();
    await s.start();
    const again = reads();
    await waitFor('the restarted watcher to read them again', async () => (reads() >= again + 4 ? true : undefined));
    const st2 = await watcherStatus(s, 'USDC_SOLANA');
    t.like(st2, { state: 'ok', credited: 0, unmatched: 0 }, 'nothing fresh after the restart');
    t.is(await balance(s, inv.machine_id, token), BigInt(inv.credit_units), 'credited once');
    t.is((await admin(s, 'UNMATCHED', {})).deposits.length, 1);
    const check = await s.stopAndCheckLedger();
    t.deepEqual([check.exitCode, check.ok, check.problems], [0, true, []]);
    const { Store } = await import('../../src/store/store.ts');
    const { Ledger } = await import('../../src/core/ledger.ts');
    const store = await Store.open(s.dataDir);
    try {
      const credits = (await new Ledger(store).journal(inv.machine_id)).filter((e) => e.kind === 'credit');
      t.is(credits.length, 1, 'one journal credit for one transfer');
    } finally {
      await store.close();
    }
  });

test('solana watcher: a Solana Pay transfer naming its invoice\'s reference settles that invoice, whatever the amount '
  + 'index says', async (t) => {
  const { chain, rpc, rail, railAta, payer, s } = await watched(t);
  await scannedThrough(s, rpc.finalizedSlot, 'USDC_SOLANA');
  const a = await openInvoice(s, 'sol-ref-a', 3, undefined, SOLANA_USDC);
  const b = await openInvoice(s, 'sol-ref-b', 3, undefined, SOLANA_USDC);
  const uri = new URL(a.payment_uri!);
  t.deepEqual([uri.pathname, uri.searchParams.get('spl-token'), uri.searchParams.get('reference')],
    [rail.address, chain.mint, a.reference], 'the transfer request names the wallet, the watched mint, the reference');
  // as a Solana Pay wallet pays: the reference appended to the transfer as a read-only account
  const solanaPay = (amount: bigint, reference: string) => {
    const ix = chain.transferIx(payer, railAta, amount);
    return { ...ix, accounts: [...ix.accounts!, { address: address(reference), role: AccountRole.READONLY }] };
  };
  // b's exact amount, naming a's reference: a's payment (short of a's amount: queued naming a, b untouched)
  const crossed = await chain.execute([solanaPay(BigInt(b.amount_due), a.reference!)], payer.signer);
  rpc.add(crossed);
  const paid = await chain.execute([solanaPay(BigInt(a.amount_due), a.reference!)], payer.signer);
  rpc.add(paid);
  rpc.finalizeAll();
  const settled = await waitSettled(s, a, a.machine_token!);
  t.is(settled.settlement_reference, `${paid.transaction.signatures[0]}:${paid.transaction.message.accountKeys
    .indexOf(railAta)}`);
  const { deposits } = await admin(s, 'UNMATCHED', {});
  t.like(deposits, [{ tx_id: crossed.transaction.signatures[0], reason: 'amount_mismatch',
    nearest_invoice_id: a.invoice_id, reference: a.reference }]);
  t.is((await invoiceStatus(s, b, b.machine_token!)).state, 'pending');
  const check = await s.stopAndCheckLedger();
  t.deepEqual([check.exitCode, check.ok, check.problems], [0, true, []]);
});
