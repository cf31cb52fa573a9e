// The EVM watcher against a real local node (anvil) and the real svcd: invoices opened over svc/1,
// paid with real ERC-20 transfers, mined, and settled by the watcher after the configured
// confirmations, exactly once; reorgs before finality never credit, one after credit is reported.
import test from 'ava';
import {
  CONFIRMATIONS, admin, balance, invoiceStatus, openInvoice, scannedThrough, startChain, startSvcd, waitFor,
  waitSettled, watcherEnv, watcherStatus,
} from './harness.ts';

test('watcher: an exact payment settles after the confirmations, not before; status shows it', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, watcherEnv(chain, chain.anvil.url));
  const inv = await openInvoice(s, 'evm-happy', 25);
  const token = inv.machine_token!;
  t.is(inv.pay_to.toLowerCase(), chain.railAddress.toLowerCase());
  const paid = await chain.anvil.transfer(1, chain.railAddress, BigInt(inv.amount_due));

  // seen above the trusted head: INVOICE_STATUS shows the transaction, the invoice stays pending
  const seen = await waitFor('the payment to be seen', async () => {
    const cur = await invoiceStatus(s, inv, token);
    return cur.payment_seen ? cur : undefined;
  });
  t.is(seen.state, 'pending');
  t.is(seen.payment_seen!.tx_id, paid.hash.toLowerCase());
  t.true(seen.payment_seen!.confirmations < CONFIRMATIONS + 1);
  t.is(await balance(s, inv.machine_id, token), 0n);

  await chain.anvil.mine(CONFIRMATIONS);
  const settled = await waitSettled(s, inv, token);
  t.is(settled.settlement_reference, `${paid.hash.toLowerCase()}:${paid.logIndex}`);
  t.truthy(settled.deposit_id);
  t.is(settled.settled_late, undefined);
  t.is(await balance(s, inv.machine_id, token), BigInt(inv.credit_units));

  const st = await scannedThrough(s, paid.block);
  t.like(st, { rail: 'USDC_BASE', family: 'evm', state: 'ok', finality: 'latest', confirmations: CONFIRMATIONS,
    chain: 8453, last_error: null, credited: 1, unmatched: 0 });
  t.true(st.lag_blocks >= CONFIRMATIONS, 'the lag counts the blocks still waiting for confirmations');

  // the public status document carries the same facts, never the RPC URL
  const res = await fetch(`${s.ready.http}/api/v1/status`);
  const text = await res.text();
  t.is(res.status, 200);
  t.true(text.includes('"USDC_BASE"') && text.includes('"cursor"'), text);
  t.false(text.includes(chain.anvil.url), 'the RPC URL is not published');
  t.deepEqual((await admin(s, 'UNMATCHED', {})).deposits, []);

  const check = await s.stopAndCheckLedger();
  t.deepEqual([check.exitCode, check.ok, check.problems], [0, true, []]);
});

test('watcher: the same transfer seen again (overlapping re-scans, restarts) credits once', async (t) => {
  const chain = await startChain(t);
  // a re-scan window over the whole chain: every pass reads every transfer again
  const env = watcherEnv(chain, chain.anvil.url, { SVC_WATCH_USDC_BASE_REORG_WINDOW: '1000' });
  const s = await startSvcd(t, env);
  const inv = await openInvoice(s, 'evm-twice', 3);
  const token = inv.machine_token!;
  const paid = await chain.anvil.transfer(2, chain.railAddress, BigInt(inv.amount_due));
  await chain.anvil.mine(CONFIRMATIONS);
  await waitSettled(s, inv, token);
  for (let round = 0; round < 3; round++) {
    // more passes over the same range, then a restart that starts from the stored cursor's window
    await chain.anvil.mine(2);
    await scannedThrough(s, (await chain.anvil.blockNumber()) - CONFIRMATIONS);
    await s.stop();
    await s.start();
  }
  await chain.anvil.mine(2);
  const st = await scannedThrough(s, (await chain.anvil.blockNumber()) - CONFIRMATIONS);
  t.is(st.credited, 0, 'after the restarts nothing was fresh: the deposit was already recorded');
  t.is(await balance(s, inv.machine_id, token), BigInt(inv.credit_units));
  t.is((await invoiceStatus(s, inv, token)).settlement_reference, `${paid.hash.toLowerCase()}:${paid.logIndex}`);
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

test('watcher: a transfer reorged out before finality never credits', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, watcherEnv(chain, chain.anvil.url));
  const inv = await openInvoice(s, 'evm-reorg-before', 4);
  const token = inv.machine_token!;
  const snap = await chain.anvil.snapshot();
  const gone = await chain.anvil.transfer(3, chain.railAddress, BigInt(inv.amount_due));
  await chain.anvil.mine(CONFIRMATIONS - 2);
  await waitFor('the doomed payment to be seen', async () =>
    (await invoiceStatus(s, inv, token)).payment_seen ? true : undefined);
  await chain.anvil.revert(snap);
  // the replacement chain grows well past the old block: the watcher scans through it
  await chain.anvil.mine(CONFIRMATIONS + 6);
  await scannedThrough(s, gone.block + 2);
  const cur = await invoiceStatus(s, inv, token);
  t.is(cur.state, 'pending');
  t.is(cur.payment_seen, undefined, 'the vanished transaction is no longer shown');
  t.is(await balance(s, inv.machine_id, token), 0n);
  t.deepEqual((await admin(s, 'UNMATCHED', {})).deposits, []);
  t.is((await watcherStatus(s)).credited, 0);

  // the payer still has the tokens on the surviving chain: paying again settles
  await chain.anvil.transfer(3, chain.railAddress, BigInt(inv.amount_due));
  await chain.anvil.mine(CONFIRMATIONS);
  await waitSettled(s, inv, token);
  t.is(await balance(s, inv.machine_id, token), BigInt(inv.credit_units));
  const check = await s.stopAndCheckLedger();
  t.deepEqual([check.exitCode, check.ok, check.problems], [0, true, []]);
});

test('watcher: a credited transfer reorged out later is reported in status, listed by svc-admin reorgs and the '
  + 'audit across a restart; the credit is not reversed', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, watcherEnv(chain, chain.anvil.url));
  const inv = await openInvoice(s, 'evm-reorg-after', 6);
  const token = inv.machine_token!;
  const snap = await chain.anvil.snapshot();
  const paid = await chain.anvil.transfer(4, chain.railAddress, BigInt(inv.amount_due));
  await chain.anvil.mine(CONFIRMATIONS);
  const settled = await waitSettled(s, inv, token);
  await chain.anvil.revert(snap);
  await chain.anvil.mine(CONFIRMATIONS + 6);
  const st = await waitFor('the reorg to be reported', async () => {
    const cur = await watcherStatus(s);
    return cur.reorged_after_credit.length ? cur : undefined;
  });
  t.deepEqual(st.reorged_after_credit, [settled.deposit_id]);
  t.true(paid.block <= st.cursor);
  t.is((await invoiceStatus(s, inv, token)).state, 'settled');
  t.is(await balance(s, inv.machine_id, token), BigInt(inv.credit_units), 'reported, not silently reversed');
  t.regex(s.stderr + s.stdout, /reorged out/);
  // kept, not only in the process: after a restart the status, svc-admin reorgs and the audit name it
  await s.stop();
  await s.start();
  const again = await waitFor('the status after the restart', async () => {
    const cur = await watcherStatus(s);
    return cur.state === 'ok' ? cur : undefined;
  });
  t.deepEqual(again.reorged_after_credit, [settled.deposit_id]);
  const listed = await s.svcAdmin(['--json', 'reorgs', '--rail', 'USDC_BASE']);
  t.is(listed.code, 0, listed.stderr);
  t.like(JSON.parse(listed.stdout).deposits, [{ deposit_id: settled.deposit_id, invoice_id: inv.invoice_id }]);
  const table = await s.svcAdmin(['reorgs']);
  t.regex(table.stdout, new RegExp(`^${settled.deposit_id} +credited `, 'm'));
  const audited = JSON.parse((await s.svcAdmin(['--json', 'audit'])).stdout);
  t.like(audited.reorged, [{ deposit_id: settled.deposit_id, state: 'credited', invoice_id: inv.invoice_id }]);
  const check = await s.stopAndCheckLedger();
  t.deepEqual([check.exitCode, check.ok, check.problems], [0, true, []]);
  const { Store } = await import('../../src/store/store.ts');
  const store = await Store.open(s.dataDir);
  try {
    const dep = await store.get('deposits', settled.deposit_id!);
    t.like(dep, { state: 'credited', invoice_id: inv.invoice_id });
    t.truthy(dep!.reorged_at, 'the deposit record carries the reorg');
  } finally {
    await store.close();
  }
});

test('watcher: svc-admin rescan reads blocks before FROM_BLOCK again; a second rescan credits nothing twice',
  async (t) => {
    const chain = await startChain(t);
    const skipFrom = (await chain.anvil.blockNumber()) + 10; // turned on after the payment below
    const s = await startSvcd(t, watcherEnv(chain, chain.anvil.url, {
      SVC_WATCH_USDC_BASE_FROM_BLOCK: String(skipFrom),
    }));
    const inv = await openInvoice(s, 'evm-rescan', 4);
    const token = inv.machine_token!;
    const paid = await chain.anvil.transfer(1, chain.railAddress, BigInt(inv.amount_due));
    t.true(paid.block < skipFrom);
    await chain.anvil.mine(skipFrom - paid.block + CONFIRMATIONS + 2);
    await scannedThrough(s, skipFrom + 1);
    t.is((await invoiceStatus(s, inv, token)).state, 'pending', 'the payment is before where the watcher reads');
    const r = await s.svcAdmin(['--json', 'rescan', '--rail', 'USDC_BASE', '--from-block', String(paid.block)]);
    t.is(r.code, 0, r.stderr);
    t.like(JSON.parse(r.stdout), { rail: 'USDC_BASE', from_block: paid.block });
    const settled = await waitSettled(s, inv, token);
    t.is(settled.settlement_reference, `${paid.hash.toLowerCase()}:${paid.logIndex}`);
    const first = (await watcherStatus(s)).rescanned;
    t.like(first, { from_block: paid.block });
    // again, over the same blocks: recorded once, credited once
    t.is((await s.svcAdmin(['rescan', '--rail', 'USDC_BASE', '--from-block', String(paid.block)])).code, 0);
    await chain.anvil.mine(2);
    const head = (await chain.anvil.blockNumber()) - CONFIRMATIONS;
    await waitFor('the second rescan read through the head', async () => {
      const w = await watcherStatus(s);
      return w.rescanned?.at !== first.at && w.cursor >= head ? true : undefined;
    });
    t.is(await balance(s, inv.machine_id, token), BigInt(inv.credit_units), 'credited once');
    const other = await s.svcAdmin(['--json', 'rescan', '--rail', 'USDT_TRON', '--from-block', '1']);
    t.is(other.code, 1);
    t.regex(JSON.parse(other.stderr).error.message, /no watcher reads USDT_TRON on this node/);
    const check = await s.stopAndCheckLedger();
    t.deepEqual([check.exitCode, check.ok, check.problems], [0, true, []]);
  });
