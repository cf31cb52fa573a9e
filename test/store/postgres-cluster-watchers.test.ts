// Two real svcd nodes on one PostgreSQL database, both configured to watch the same rail of a real local
// chain (anvil): one watches (it holds the rail's watcher lease), the other stands by; a payment credits
// its invoice once, whichever node's client asks; when the watching node stops, the other takes the rail
// over and credits the next payment. The ledger recomputes from the database after both stop.
import test from 'ava';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';
import { stopCheckingLedger } from '../support/start-svcd.ts';
import { Svcd } from '../support/svcd.ts';
import {
  CONFIRMATIONS, admin, balance, openInvoice, startChain, waitFor, waitSettled, watcherEnv, watcherStatus,
} from '../watchers/harness.ts';

const postgres = postgresForFile(test);
const SHARED_KEYS = ['quote-key.bin', 'result-key.bin', 'bct-key.bin'];

testNeeding(test, 'watchers: two nodes, one rail: one watches, the other stands by; a payment credits once; '
  + 'the other takes over when the first stops', POSTGRES, async (t) => {
  const chain = await startChain(t);
  const url = await (await postgres()).freshDatabase();
  // every pass reads the whole chain again: a second watcher would meet every transfer again too
  const env = { ...watcherEnv(chain, chain.anvil.url, { SVC_WATCH_USDC_BASE_REORG_WINDOW: '1000' }), SVC_STORE: url };
  const one = new Svcd(env);
  const dir2 = mkdtempSync(join(tmpdir(), 'svcd-test-'));
  const two = new Svcd(env, dir2);
  t.teardown(async () => {
    await one.kill9(); await two.kill9();
    one.cleanup(); two.cleanup();
  });
  await one.start(['core']);
  mkdirSync(dir2, { recursive: true, mode: 0o700 });
  for (const f of SHARED_KEYS) copyFileSync(join(one.dataDir, f), join(dir2, f));
  await two.start(['core']);

  const states = await waitFor('one watcher watching and the other standing by', async () => {
    const s = [(await watcherStatus(one)).state, (await watcherStatus(two)).state];
    return s.includes('ok') && s.includes('standby') ? s : undefined;
  });
  const [watching, standing] = states[0] === 'ok' ? [one, two] : [two, one];

  // an invoice opened on the standing node, paid, credited by the watching one: once
  const inv = await openInvoice(standing, 'cluster-watch', 4);
  const token = inv.machine_token!;
  await chain.anvil.transfer(1, chain.railAddress, BigInt(inv.amount_due));
  await chain.anvil.mine(CONFIRMATIONS);
  const settled = await waitSettled(standing, inv, token);
  t.truthy(settled.deposit_id);
  // more passes of the watcher over the same transfer: nothing more
  await chain.anvil.mine(3);
  await waitFor('the watching node to pass over the transfer again', async () => {
    const st = await watcherStatus(watching);
    return st.cursor >= (await chain.anvil.blockNumber()) - CONFIRMATIONS ? st : undefined;
  });
  t.is(await balance(watching, inv.machine_id, token), BigInt(inv.credit_units), 'credited once');
  t.is((await watcherStatus(standing)).credited, 0, 'the standing node recorded nothing');
  t.is((await watcherStatus(standing)).state, 'standby');

  // the watching node stops (its lease released): the other takes the rail over
  await stopCheckingLedger(watching);
  await waitFor('the other node to take the rail over', async () =>
    ((await watcherStatus(standing)).state === 'ok' ? true : undefined));
  const next = await openInvoice(standing, 'cluster-watch', 2, token);
  await chain.anvil.transfer(2, chain.railAddress, BigInt(next.amount_due));
  await chain.anvil.mine(CONFIRMATIONS);
  await waitSettled(standing, next, token);
  t.is(await balance(standing, inv.machine_id, token), BigInt(inv.credit_units) + BigInt(next.credit_units),
    'the first payment not credited again by the node that took over');
  t.deepEqual((await admin(standing, 'UNMATCHED', {})).deposits, []);
  await stopCheckingLedger(standing);
});
