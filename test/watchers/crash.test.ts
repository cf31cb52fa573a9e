// Operations: svcd killed -9 between seeing a payment's log and crediting it, ten times, ends with
// every payment credited exactly once and the ledger invariant holding; an RPC that is down is
// retried with backoff, reported in status without its URL, and never blocks requests.
import test from 'ava';
import { toHex } from 'viem';
import { Store } from '../../src/store/store.ts';
import { Ledger } from '../../src/core/ledger.ts';
import { RpcProxy } from '../support/anvil.ts';
import {
  CONFIRMATIONS, balance, invoiceStatus, openInvoice, startChain, startSvcd, waitFor, waitSettled, watcherEnv,
  watcherStatus, type Invoice,
} from './harness.ts';

const ROUNDS = 10;

test('crash: kill -9 between seeing a log and crediting it, 10 times: each credited exactly once', async (t) => {
  const chain = await startChain(t, 12 * 60_000);
  const proxy = await RpcProxy.start(chain.anvil.url);
  t.teardown(() => proxy.close());
  const s = await startSvcd(t, watcherEnv(chain, proxy.url, { SVC_WATCH_USDC_BASE_REORG_WINDOW: '64' }), ['core']);
  const first = await openInvoice(s, 'crash-m', 1);
  const token = first.machine_token!;
  const invoices: Invoice[] = [first];
  for (let i = 1; i < ROUNDS; i++) invoices.push(await openInvoice(s, 'crash-m', 1 + i, token));
  let expected = 0n;
  for (const [i, inv] of invoices.entries()) {
    const paid = await chain.anvil.transfer(1 + (i % 4), chain.railAddress, BigInt(inv.amount_due));
    // the watcher has the log (eth_getLogs answered) and now asks for its block, which it checks
    // before crediting: svcd dies right there, the credit not yet written
    const killed = new Promise<void>((resolve) => {
      proxy.onCall = (c) => {
        if (c.method !== 'eth_getBlockByNumber' || c.params[0] !== toHex(paid.block)) return;
        proxy.onCall = null;
        s.proc!.kill('SIGKILL');
        resolve();
        return 'drop';
      };
    });
    await chain.anvil.mine(CONFIRMATIONS);
    await killed;
    await s.kill9();
    const store = await Store.open(s.dataDir);
    try {
      const rec = await store.get('invoices', inv.invoice_id);
      t.is(rec!.state, 'pending', `round ${i}: killed after seeing the log, before crediting it`);
      t.deepEqual((await new Ledger(store).verify()).problems, []);
    } finally {
      await store.close();
    }
    await s.start();
    const settled = await waitSettled(s, inv, token);
    t.is(settled.settlement_reference, `${paid.hash.toLowerCase()}:${paid.logIndex}`);
    expected += BigInt(inv.credit_units);
    t.is(await balance(s, inv.machine_id, token), expected, `round ${i}: credited once`);
  }
  for (const inv of invoices) t.is((await invoiceStatus(s, inv, token)).state, 'settled');
  const check = await s.stopAndCheckLedger();
  t.deepEqual([check.exitCode, check.ok, check.problems], [0, true, []]);
  const store = await Store.open(s.dataDir);
  try {
    const credits = (await new Ledger(store).journal('crash-m')).filter((e) => e.kind === 'credit');
    t.is(credits.length, ROUNDS, 'one journal credit per payment');
    t.is(new Set(credits.map((e) => e.ref.deposit_id)).size, ROUNDS);
  } finally {
    await store.close();
  }
});

test('crash: a down RPC is retried with backoff, shown in status without its URL; requests go on', async (t) => {
  const chain = await startChain(t);
  const proxy = await RpcProxy.start(chain.anvil.url);
  t.teardown(() => proxy.close());
  // a provider key in the URL: it must appear nowhere public
  const rpc = `${proxy.url}/v2/SECRET-PROVIDER-KEY`;
  const s = await startSvcd(t, watcherEnv(chain, rpc));
  const inv = await openInvoice(s, 'rpc-down', 2);
  const token = inv.machine_token!;
  await waitFor('a first good pass', async () => ((await watcherStatus(s)).state === 'ok' ? true : undefined));
  proxy.down = true;
  const paid = await chain.anvil.transfer(1, chain.railAddress, BigInt(inv.amount_due));
  await chain.anvil.mine(CONFIRMATIONS);
  const st = await waitFor('errors to pile up', async () => {
    const cur = await watcherStatus(s);
    return cur.errors_in_a_row >= 3 ? cur : undefined;
  });
  t.is(st.state, 'error');
  t.regex(st.last_error, /HTTP 503/, 'the cause is named');
  t.is(await balance(s, inv.machine_id, token), 0n, 'the request path answers while the RPC is down');
  const res = await fetch(`${s.ready.http}/api/v1/status`);
  const text = await res.text();
  t.true(text.includes('"errors_in_a_row"'), text);
  t.false(text.includes('SECRET-PROVIDER-KEY'), 'no provider key in the status document');
  t.false(text.includes(proxy.url), 'no RPC URL in the status document');
  t.false((s.stderr + s.stdout).includes('SECRET-PROVIDER-KEY'), 'nor in the logs');

  proxy.down = false;
  await waitSettled(s, inv, token);
  t.is((await invoiceStatus(s, inv, token)).settlement_reference, `${paid.hash.toLowerCase()}:${paid.logIndex}`);
  t.like(await watcherStatus(s), { state: 'ok', errors_in_a_row: 0 });
  const check = await s.stopAndCheckLedger();
  t.deepEqual([check.exitCode, check.ok, check.problems], [0, true, []]);
});
