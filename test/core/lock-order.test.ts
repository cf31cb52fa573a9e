// The node's locks are taken in one order (src/core/lock-order.ts): deposit → machine → client → rail →
// reference. A lock taken under one of the same or a later kind is refused at once, before it waits.
import test from 'ava';
import { checkOrder, lockTable, LOCK_ORDER, type Held } from '../../src/core/lock-order.ts';
import { coreFixture } from '../support/core-fixture.ts';

test('the order, outermost first', (t) => {
  t.deepEqual([...LOCK_ORDER], ['payment', 'deposit', 'machine', 'client', 'rail', 'reference']);
});

test('a lock taken under a later one, or under its own kind, is refused naming both', async (t) => {
  const owner = {};
  const rail = lockTable('rail');
  const client = lockTable('client');
  // in order: a rail lock under a client lock
  t.is(await client(owner, 'a', null, (held) => rail(owner, 'r', held, async (inner) => inner.outer?.kind)), 'client');
  // out of order: a client lock under a rail lock
  const e = await t.throwsAsync(rail(owner, 'r', null, (held) => client(owner, 'a', held, async () => 'ran')));
  t.regex(e.message, /lock order: a client lock taken under a rail lock/);
  // its own kind: a second rail lock under the first (two rails at once could deadlock against another order)
  await t.throwsAsync(rail(owner, 'r1', null, (held) => rail(owner, 'r2', held, async () => 'ran')),
    { message: /a rail lock taken under a rail lock/ });
  const deposit: Held = { kind: 'deposit', outer: null };
  t.notThrows(() => checkOrder('reference', { kind: 'machine', outer: deposit }));
  t.throws(() => checkOrder('deposit', { kind: 'machine', outer: null }),
    { message: /deposit lock taken under a machine/ });
});

test('the machine lock takes its place: under a deposit, never under a rail', async (t) => {
  const f = await coreFixture(t);
  const deposit = lockTable('deposit');
  const rail = lockTable('rail');
  const seen = await deposit(f.store, 'd', null, (held) =>
    f.ctx.ledger.withMachine('m', async (m) => [m.kind, m.outer?.kind], held));
  t.deepEqual(seen, ['machine', 'deposit']);
  await t.throwsAsync(rail(f.store, 'r', null, (held) => f.ctx.ledger.withMachine('m', async () => 'ran', held)),
    { message: /a machine lock taken under a rail lock/ });
});
