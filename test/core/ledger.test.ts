// The ledger invariant: verify() recomputes every account from its journal and names the broken
// account; svcd refuses to serve a broken ledger.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store, put } from '../../src/store/store.ts';
import { Ledger } from '../../src/core/ledger.ts';
import { idPart } from '../../src/store/key-codec.ts';
import { Svcd, fundMachine } from '../support/svcd.ts';

test('verify(): journaled changes hold; ' +
  'a tampered balance, a missing entry and an orphan entry are named', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-'));
  const store = await Store.open(dir);
  const ledger = new Ledger(store);
  const now = new Date();
  let acct = await ledger.account('m-1');
  const changes = [
    ['credit', 1000n, 0n], ['reserve', -300n, 300n], ['capture', 0n, -100n], ['release', 200n, -200n],
  ] as const;
  for (const [kind, da, dr] of changes) {
    const c = ledger.change('m-1', acct, kind, da, dr, { ref: kind }, now);
    await store.write(c.ops);
    acct = c.next;
  }
  t.deepEqual(await ledger.account('m-1'), { available: 900n, reserved: 0n, seq: 4 });
  t.deepEqual(await ledger.verify(), { ok: true, accounts: 1, entries: 4, problems: [] });
  t.throws(() => ledger.change('m-1', acct, 'capture', 0n, -1n, {}, now), { message: /would go negative/ });

  await store.write([put('accounts', idPart('m-1'), { available: '901', reserved: '0', seq: 4 })]);
  const bad = await ledger.verify();
  t.false(bad.ok);
  t.deepEqual(bad.problems, ['m-1: available 901 but journal sums to 900']);
  await store.write([
    put('accounts', idPart('m-1'), { available: '900', reserved: '0', seq: 4 }),
    put('journal', `${idPart('ghost')}!0000000000000001`, { seq: 1, d_available: '5', d_reserved: '0' }),
  ]);
  t.deepEqual((await ledger.verify()).problems, ['ghost: journal entries without an account']);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

test('svcd refuses to start on a broken ledger and says which account', async (t) => {
  const s = await Svcd.start();
  await fundMachine(s, 'victim', 1);
  t.is(await s.stop(), 0);
  const store = await Store.open(s.dataDir);
  const credited = BigInt((await store.get('accounts', idPart('victim')))!.available as string);
  await store.write([put('accounts', idPart('victim'), { available: String(credited + 1n), reserved: '0', seq: 1 })]);
  await store.close();
  const r = await s.startExpectingFailure();
  t.is(r.code, 1);
  t.regex(r.output, /ledger invariant broken, refusing to serve/);
  t.true(r.output.includes(`victim: available ${credited + 1n} but journal sums to ${credited}`), r.output);
  s.cleanup();
});

test('SIGTERM: svcd stops accepting, finishes, closes the database and exits 0; data survives a restart', async (t) => {
  const s = await Svcd.start();
  const token = await fundMachine(s, 'persist', 2);
  const before = await s.edge();
  const funded = (await before.request('BALANCE', { machine_id: 'persist' }, { token })).available_units;
  before.close();
  t.regex(funded as string, /^20[0-9]{7}$/, '2 svcC and the invoice suffix');
  t.is(await s.stop(), 0);
  await s.start();
  const c = await s.edge();
  t.is((await c.request('BALANCE', { machine_id: 'persist' }, { token })).available_units, funded);
  c.close();
  t.is(await s.stop(), 0);
  s.cleanup();
});
