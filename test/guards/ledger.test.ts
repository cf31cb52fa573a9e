// Guards of the ledger (src/core/ledger.ts): change() never builds a negative balance, and verify()
// names every kind of broken invariant — available or reserved not the sum of their journal, a
// negative balance, a gap in the journal, an account whose seq is not its journal's last, an orphan.
import test from 'ava';
import { Ledger, type Account } from '../../src/core/ledger.ts';
import { ServiceError } from '../../src/errors.ts';
import { idPart, key, numPart } from '../../src/store/key-codec.ts';
import { put, type Range, type Store, type SublevelName } from '../../src/store/store.ts';
import { coreFixture } from '../support/core-fixture.ts';

async function funded(t: Parameters<typeof coreFixture>[0]) {
  const f = await coreFixture(t);
  const ledger = f.ctx.ledger;
  let acct: Account = await ledger.account('m-1');
  for (const [kind, da, dr] of [['credit', 1000n, 0n], ['reserve', -300n, 300n], ['capture', 0n, -100n]] as const) {
    const c = ledger.change('m-1', acct, kind, da, dr, { ref: kind }, f.clock.now());
    await f.store.write(c.ops);
    acct = c.next;
  }
  return { f, ledger, acct };
}

test('ledger guard: change() refuses a change that would make available or reserved negative', async (t) => {
  const { f, ledger, acct } = await funded(t);
  t.deepEqual(acct, { available: 700n, reserved: 200n, seq: 3 });
  const now = f.clock.now();
  const avail = t.throws(() => ledger.change('m-1', acct, 'reserve', -701n, 701n, {}, now)) as ServiceError;
  t.is(avail.code, 'internal');
  t.regex(avail.message, /would go negative \(reserve on m-1\)/);
  t.throws(() => ledger.change('m-1', acct, 'capture', 0n, -201n, {}, now), { message: /would go negative/ });
  t.notThrows(() => ledger.change('m-1', acct, 'reserve', -700n, 700n, {}, now), 'down to exactly zero is fine');
  t.notThrows(() => ledger.change('m-1', acct, 'capture', 0n, -200n, {}, now));
  t.deepEqual(await ledger.verify(), { ok: true, accounts: 1, entries: 3, problems: [] });
});

test('ledger guard: verify() names a reserved balance that is not the sum of its journal', async (t) => {
  const { f, ledger } = await funded(t);
  await f.store.write([put('accounts', idPart('m-1'), { available: '700', reserved: '201', seq: 3 })]);
  t.deepEqual(await ledger.verify(), {
    ok: false, accounts: 1, entries: 3, problems: ['m-1: reserved 201 but journal sums to 200'],
  });
});

test('ledger guard: verify() names an available balance that is not the sum of its journal', async (t) => {
  const { f, ledger } = await funded(t);
  await f.store.write([put('accounts', idPart('m-1'), { available: '699', reserved: '200', seq: 3 })]);
  t.deepEqual((await ledger.verify()).problems, ['m-1: available 699 but journal sums to 700']);
});

test('ledger guard: verify() names a negative balance even when the journal agrees with it', async (t) => {
  const f = await coreFixture(t);
  const entry = { seq: 1, kind: 'credit', d_available: '-5', d_reserved: '0' };
  await f.store.write([
    put('journal', key(idPart('m-neg'), numPart(1)), entry),
    put('accounts', idPart('m-neg'), { available: '-5', reserved: '0', seq: 1 }),
  ]);
  t.deepEqual((await f.ctx.ledger.verify()).problems, ['m-neg: negative balance']);
  await f.store.write([
    put('journal', key(idPart('m-neg'), numPart(1)), { ...entry, d_available: '0', d_reserved: '-1' }),
    put('accounts', idPart('m-neg'), { available: '0', reserved: '-1', seq: 1 }),
  ]);
  t.deepEqual((await f.ctx.ledger.verify()).problems, ['m-neg: negative balance'], 'reserved too');
});

test('ledger guard: verify() names a journal gap, an account seq that is not the journal\'s last, ' +
  'and journal entries without an account', async (t) => {
  const { f, ledger } = await funded(t);
  const m = idPart('m-1');
  await f.store.write([put('accounts', m, { available: '700', reserved: '200', seq: 4 })]);
  t.deepEqual((await ledger.verify()).problems, ['m-1: account seq 4 but journal ends at 3']);
  await f.store.write([
    put('accounts', m, { available: '700', reserved: '200', seq: 5 }),
    put('journal', key(m, numPart(5)), { seq: 5, kind: 'credit', d_available: '0', d_reserved: '0' }),
  ]);
  t.deepEqual((await ledger.verify()).problems, ['m-1: journal seq 5 follows 3']);
  await f.store.write([
    put('accounts', m, { available: '700', reserved: '200', seq: 3 }),
    put('journal', key(m, numPart(5)), { seq: 4, kind: 'credit', d_available: '0', d_reserved: '0' }),
  ]);
  t.deepEqual((await ledger.verify()).problems, ['m-1: account seq 3 but journal ends at 4']);
  const ghost = { seq: 1, kind: 'credit', d_available: '1', d_reserved: '0' };
  await f.store.write([
    put('accounts', m, { available: '700', reserved: '200', seq: 4 }),
    put('journal', key(idPart('ghost'), numPart(1)), ghost),
  ]);
  const r = await ledger.verify();
  t.deepEqual([r.ok, r.accounts, r.entries, r.problems], [false, 1, 5, ['ghost: journal entries without an account']]);
});

test('ledger guard: journal() gives one machine\'s entries in order, each with its deltas, the balances after, '
  + 'its time and reference', async (t) => {
  const { f, ledger } = await funded(t);
  // a machine whose id extends m-1's, and one before it: neither may show in m-1's journal
  for (const other of ['m-10', 'm-0']) {
    await f.store.write(ledger.change(other, await ledger.account(other), 'credit', 5n, 0n, {}, f.clock.now()).ops);
  }
  const at = f.clock.now().toISOString();
  t.deepEqual(await ledger.journal('m-1'), [
    { seq: 1, at, kind: 'credit', d_available: '1000', d_reserved: '0', available_after: '1000', reserved_after: '0',
      ref: { ref: 'credit' } },
    { seq: 2, at, kind: 'reserve', d_available: '-300', d_reserved: '300', available_after: '700',
      reserved_after: '300', ref: { ref: 'reserve' } },
    { seq: 3, at, kind: 'capture', d_available: '0', d_reserved: '-100', available_after: '700',
      reserved_after: '200', ref: { ref: 'capture' } },
  ]);
  t.deepEqual(await ledger.account('m-1'), { available: 700n, reserved: 200n, seq: 3 });
  t.deepEqual(await ledger.account('nobody'), { available: 0n, reserved: 0n, seq: 0 }, 'no account: all zero');
  t.deepEqual(await ledger.journal('nobody'), []);
  t.deepEqual(await ledger.verify(), { ok: true, accounts: 3, entries: 5, problems: [] });
  // verify() as of a snapshot the caller holds: what was written after it is not seen
  const snap = await f.store.snapshot();
  t.teardown(() => snap.close());
  await f.store.write([put('accounts', idPart('m-1'), { available: '1', reserved: '200', seq: 3 })]);
  t.deepEqual(await ledger.verify(snap), { ok: true, accounts: 3, entries: 5, problems: [] });
  t.deepEqual((await ledger.verify()).problems, ['m-1: available 1 but journal sums to 700']);
});

test('ledger guard: withMachine runs one operation per machine at a time, machines apart, and gives its result',
  async (t) => {
  const { ledger } = await funded(t);
  const order: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => { release = r; });
  const a = ledger.withMachine('m-1', async () => {
    order.push('a start');
    await held;
    order.push('a end');
    return 'a';
  });
  const c = ledger.withMachine('m-1', async () => { order.push('c'); return 'c'; });
  t.is(await ledger.withMachine('m-2', async () => { order.push('b'); return 'b'; }), 'b', 'another machine runs');
  release();
  t.deepEqual([await a, await c], ['a', 'c']);
  t.deepEqual(order, ['a start', 'b', 'a end', 'c'], 'the same machine waited for the first operation');
});

test('ledger guard: verify() passes a balance of exactly zero, and an account with no journal at zero', async (t) => {
  const f = await coreFixture(t);
  const ledger = f.ctx.ledger;
  let acct = await ledger.account('m-z');
  for (const [kind, da, dr] of [['credit', 100n, 0n], ['reserve', -100n, 100n]] as const) {
    const c = ledger.change('m-z', acct, kind, da, dr, {}, f.clock.now());
    await f.store.write(c.ops);
    acct = c.next;
  }
  t.deepEqual(acct, { available: 0n, reserved: 100n, seq: 2 });
  t.deepEqual(await ledger.verify(), { ok: true, accounts: 1, entries: 2, problems: [] },
    'available 0 is not negative');
  await f.store.write([put('accounts', idPart('m-empty'), { available: '0', reserved: '0', seq: 0 })]);
  t.deepEqual(await ledger.verify(), { ok: true, accounts: 2, entries: 2, problems: [] }, 'no journal sums to zero');
});

/**
 * The fixture's real store, seen through a proxy that runs `between` once, when verify() turns from the
 * journal to the accounts (a write landing between its two scans), and counts snapshots taken and closed.
 */
function watchedStore(store: Store, between: () => Promise<void>) {
  const seen = { taken: 0, closed: 0 };
  let ran = false;
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'entries') {
        return async function* (name: SublevelName, range?: Range) {
          if (name === 'accounts' && !ran) { ran = true; await between(); }
          yield* target.entries(name, range);
        };
      }
      if (prop === 'snapshot') {
        return async () => {
          const s = await target.snapshot();
          const close = s.close.bind(s);
          seen.taken++;
          s.close = async () => { seen.closed++; await close(); };
          return s;
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { proxy, seen };
}

test('ledger guard: verify() reads the journal and the accounts from one snapshot, which it closes: a credit ' +
  'landing between its two scans is not a mismatch', async (t) => {
  const { f, acct } = await funded(t);
  const credit = async () => {
    const c = f.ctx.ledger.change('m-1', acct, 'credit', 50n, 0n, { ref: 'between' }, f.clock.now());
    await f.store.write(c.ops);
  };
  const { proxy, seen } = watchedStore(f.store, credit);
  const ledger = new Ledger(proxy);
  t.deepEqual(await ledger.verify(), { ok: true, accounts: 1, entries: 3, problems: [] }, 'the state before');
  t.deepEqual(seen, { taken: 1, closed: 1 }, 'its own snapshot, closed');
  t.deepEqual(await ledger.verify(), { ok: true, accounts: 1, entries: 4, problems: [] }, 'the state after');
  t.deepEqual(seen, { taken: 2, closed: 2 });
});
