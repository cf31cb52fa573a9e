// Records read ahead of a machine's lock (src/core/read-ahead.ts, Ledger.readAhead): the locked operation
// starts from them only while no operation on that machine ended in this process since they were read,
// only once kept (an authenticated caller), and once; a stale account is never built on.
import test from 'ava';
import { ReadAhead, recordKey } from '../../src/core/read-ahead.ts';
import { coreFixture, type Fixture } from '../support/core-fixture.ts';
import { credit } from '../support/money.ts';

/** Runs one locked operation on `m`; what it started from, and how many runs it took. */
async function locked(f: Fixture, m: string) {
  let runs = 0;
  let seen: { seq: number; quote: unknown } | undefined;
  await f.ctx.ledger.withMachine(m, async (_held, acct, reads) => {
    runs++;
    seen = { seq: acct.seq, quote: await reads.get('quotes', 'q-ahead') };
    const { ops } = f.ctx.ledger.change(m, acct, 'credit', 1n, 0n, { test: 'ahead' }, f.clock.now());
    await f.store.write(ops);
  });
  return { runs, ...seen! };
}

test('a read ahead is used by the next locked operation once, and only once kept', async (t) => {
  const f = await coreFixture(t);
  await credit(f, 'm-ahead', 5n); // seq 1
  const before = f.store.stats.reads + f.store.stats.cacheHits;
  const ahead = await f.ctx.ledger.readAhead('m-ahead', [{ sub: 'quotes', key: 'q-ahead' }]);
  t.is(ahead.machine, undefined, 'no machine record was ever written here');
  const read = f.store.stats.reads + f.store.stats.cacheHits - before;
  const first = await locked(f, 'm-ahead');
  t.is(read, 3, 'the machine record, the account and the quote');
  t.is(f.store.stats.reads + f.store.stats.cacheHits - before, read + 2, 'not kept: the operation read again');
  t.deepEqual(first, { runs: 1, seq: 1, quote: undefined });

  (await f.ctx.ledger.readAhead('m-ahead', [{ sub: 'quotes', key: 'q-ahead' }])).keep();
  const kept = f.store.stats.reads + f.store.stats.cacheHits;
  t.deepEqual(await locked(f, 'm-ahead'), { runs: 1, seq: 2, quote: undefined });
  t.is(f.store.stats.reads + f.store.stats.cacheHits, kept, 'kept: the account and quote came from it');
  await locked(f, 'm-ahead');
  t.true(f.store.stats.reads + f.store.stats.cacheHits > kept, 'taken once: the next operation reads');
  t.true((await f.ctx.ledger.verify()).ok);
});

test('a read ahead that an operation on its machine outlived is not used; other machines\' are', async (t) => {
  const f = await coreFixture(t);
  await credit(f, 'm-stale', 5n);
  await credit(f, 'm-other', 5n);
  const stale = await f.ctx.ledger.readAhead('m-stale', []);
  const other = await f.ctx.ledger.readAhead('m-other', [{ sub: 'quotes', key: 'q-ahead' }]);
  await locked(f, 'm-stale'); // seq 2, written after the read above
  stale.keep();
  other.keep();
  const reads = f.store.stats.reads + f.store.stats.cacheHits;
  t.deepEqual(await locked(f, 'm-stale'), { runs: 1, seq: 2, quote: undefined },
    'read again under the lock: seq 2, not the 1 read ahead (which would have cost a refused batch and a run)');
  t.true(f.store.stats.reads + f.store.stats.cacheHits > reads);
  const after = f.store.stats.reads + f.store.stats.cacheHits;
  t.deepEqual(await locked(f, 'm-other'), { runs: 1, seq: 1, quote: undefined });
  t.is(f.store.stats.reads + f.store.stats.cacheHits, after, 'another machine\'s operation does not spoil it');
  t.true((await f.ctx.ledger.verify()).ok);
});

test('ReadAhead: valid until an operation on the machine ends; forgotten machines count as just ended', (t) => {
  const r = new ReadAhead();
  const records = new Map([[recordKey('accounts', 'a'), { seq: 1 }]]);
  const at = r.now();
  r.ended('b');
  r.keep('a', at, records);
  t.is(r.take('a'), records, 'another machine ended: still valid');
  t.is(r.take('a'), undefined, 'taken once');
  r.keep('a', at, records);
  r.ended('a');
  t.is(r.take('a'), undefined, 'its own machine ended after the read');
  const later = r.now();
  r.keep('a', later, records);
  t.is(r.take('a'), records, 'read after that end: valid');
  const old = r.now();
  for (let i = 0; i <= 65_536; i++) r.ended(`x${i}`);
  r.keep('x0', old, records);
  t.is(r.take('x0'), undefined, 'x0 is forgotten, but ended after the read: the forgotten count as ended');
  r.keep('never', old, records);
  t.is(r.take('never'), undefined, 'a machine never seen counts as ended when the last forgotten one did');
  r.keep('never', r.now(), records);
  t.is(r.take('never'), records);
});
