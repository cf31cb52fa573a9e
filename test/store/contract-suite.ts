// The store contract suite (src/store/contract.ts): the tests every implementation must pass, registered
// once per engine by contract-leveldb.test.ts (LevelDB in a temp dir, in the quick tier) and
// contract-postgres.test.ts (PostgreSQL on a real server, a fresh database per test). Key order is
// byte-wise UTF-8, ranges, atomic batches, later ops winning, snapshots, concurrent writers.
// PostgreSQL's own behaviour (migrations, guards, retries, two nodes) is test/store/postgres.test.ts.
import type { ExecutionContext } from 'ava';
import { idPart, key, numPart } from '../../src/store/key-codec.ts';
import {
  create, del, delIf, isStoreConflict, put, replace, type Json, type Range, type Store, type SublevelName,
} from '../../src/store/store.ts';
import { prng } from '../helpers.ts';

export interface Backend {
  name: string;
  /** a fresh, empty store, closed (and removed) at the test's teardown; `reopen` opens it again */
  open(t: ExecutionContext): Promise<{ store: Store; reopen(): Promise<Store> }>;
}

/** Registers one contract test for the engine: the suite below calls it once per title. */
export type Contract = (title: string, impl: (t: ExecutionContext, b: Backend) => Promise<void>) => void;

async function all(store: Store, sub: SublevelName, range: Range = {}): Promise<[string, Json][]> {
  const out: [string, Json][] = [];
  for await (const e of store.entries(sub, range)) out.push(e);
  return out;
}
const keysOf = async (store: Store, sub: SublevelName, range: Range = {}) =>
  (await all(store, sub, range)).map(([k]) => k);
/** LevelDB's order: the UTF-8 bytes, compared as unsigned bytes (not JavaScript's UTF-16 order). */
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** Registers every contract test through `contract`. */
export function contractSuite(contract: Contract): void {
  contract('get: absent is undefined; values come back as written (unicode, NUL, escapes, nesting)', async (t, b) => {
    const { store } = await b.open(t);
    t.is(await store.get('meta', 'nothing'), undefined);
    const value = {
      text: 'é ü 中文 😀 "quoted" \\back\\slash\\ \'single\'', nul: 'a\u0000b', lone: '\ud800',
      n: 12345678901234, f: 0.5, neg: -1, yes: true, no: false, none: null,
      list: [1, 'two', { three: [3] }, []], nested: { a: { b: { c: 'deep' } } }, empty: {},
    };
    await store.write([put('meta', 'v', value), put('receipts', 'r', { only: 'receipts' })]);
    t.deepEqual(await store.get('meta', 'v'), value);
    t.deepEqual(await store.get('receipts', 'r'), { only: 'receipts' });
    t.is(await store.get('meta', 'r'), undefined, 'a key lives in its own sublevel only');
  });

  contract('getMany: each record in the order asked, undefined where none, a key twice twice', async (t, b) => {
    const { store } = await b.open(t);
    t.deepEqual(await store.getMany([]), []);
    await store.write([
      put('accounts', 'm é', { v: 1 }), put('quotes', 'q', { v: 2 }), put('machines', 'm é', { v: 3 }),
    ]);
    const got = await store.getMany([
      { sub: 'quotes', key: 'q' }, { sub: 'machines', key: 'absent' }, { sub: 'accounts', key: 'm é' },
      { sub: 'machines', key: 'm é' }, { sub: 'meta', key: 'q' }, { sub: 'quotes', key: 'q' },
    ]);
    t.deepEqual(got, [{ v: 2 }, undefined, { v: 1 }, { v: 3 }, undefined, { v: 2 }]);
    await store.write([put('quotes', 'q', { v: 4 }), del('accounts', 'm é')]);
    const again = await store.getMany([{ sub: 'accounts', key: 'm é' }, { sub: 'quotes', key: 'q' }]);
    t.deepEqual(again, [undefined, { v: 4 }], 'what the last batch left');
  });

  contract('entries: keys in byte-wise UTF-8 order, as the key codec needs', async (t, b) => {
    const { store } = await b.open(t);
    const keys = [
      'a', 'a!', 'a!00', 'a0', 'A', 'b', '!', '~', ' ', 'é', '\u00ff', '\u0100', '\ue000', '\uffff', '😀', 'zz',
      key(idPart('m'), numPart(1)), key(idPart('m'), numPart(2)), key(idPart('m'), numPart(10)),
      key(idPart('m'), numPart(255)), key(idPart('m'), numPart(256)), key(idPart('m!'), numPart(1)),
    ];
    const shuffled = [...keys];
    const rnd = prng(7);
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = rnd.int(i + 1);
      [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
    }
    for (const k of shuffled) await store.write([put('journal', k, { k })]);
    const expected = [...keys].sort(byteOrder);
    t.notDeepEqual(expected, [...keys].sort(), 'the test holds keys whose UTF-8 and UTF-16 orders differ');
    t.deepEqual(await keysOf(store, 'journal'), expected);
    // the bound the core uses for "every key" stops below 4-byte UTF-8, as LevelDB's byte order says
    t.false((await keysOf(store, 'journal', { gte: '', lt: '\uffff' })).includes('😀'));
    const m = idPart('m');
    t.deepEqual(
      await keysOf(store, 'journal', { gte: key(m, ''), lt: key(m, '\uffff') }),
      [1, 2, 10, 255, 256].map((n) => key(m, numPart(n))),
      'one machine\'s journal, in numeric order, and not the machine whose id extends its id',
    );
  });

  contract('entries: gt, gte, lt, lte and limit, alone and together', async (t, b) => {
    const { store } = await b.open(t);
    const k = (i: number) => `k${String(i).padStart(2, '0')}`;
    await store.write(Array.from({ length: 20 }, (_, i) => put('quotes', k(i), { i })));
    await store.write([put('quote_expiry', 'k05', { other: true })]);
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => k(from + i));
    t.deepEqual(await keysOf(store, 'quotes'), range(0, 20));
    t.deepEqual(await keysOf(store, 'quotes', { gte: k(5) }), range(5, 20));
    t.deepEqual(await keysOf(store, 'quotes', { gt: k(5) }), range(6, 20));
    t.deepEqual(await keysOf(store, 'quotes', { lt: k(5) }), range(0, 5));
    t.deepEqual(await keysOf(store, 'quotes', { lte: k(5) }), range(0, 6));
    t.deepEqual(await keysOf(store, 'quotes', { gte: k(3), lt: k(8) }), range(3, 8));
    t.deepEqual(await keysOf(store, 'quotes', { gt: k(3), lte: k(8) }), range(4, 9));
    t.deepEqual(await keysOf(store, 'quotes', { gte: k(3), limit: 4 }), range(3, 7));
    t.deepEqual(await keysOf(store, 'quotes', { limit: 0 }), []);
    t.deepEqual(await keysOf(store, 'quotes', { gte: 'k5', lt: 'k9' }), [], 'bounds between keys');
    t.deepEqual(await keysOf(store, 'quotes', { gte: k(8), lt: k(3) }), [], 'an empty range');
    t.deepEqual(await all(store, 'quote_expiry'), [['k05', { other: true }]], 'each sublevel scans alone');
    t.deepEqual((await all(store, 'quotes', { gte: k(19) }))[0], [k(19), { i: 19 }]);
  });

  contract('entries: a scan longer than any page, bounded and limited', async (t, b) => {
    const { store } = await b.open(t);
    const k = (i: number) => numPart(i);
    for (let i = 0; i < 1300; i += 100) {
      await store.write(Array.from({ length: 100 }, (_, j) => put('pulses', k(i + j), { i: i + j })));
    }
    const keys = await keysOf(store, 'pulses', { gte: '', lt: '\uffff' });
    t.is(keys.length, 1300);
    t.deepEqual(keys, Array.from({ length: 1300 }, (_, i) => k(i)));
    const from100 = Array.from({ length: 701 }, (_, i) => k(100 + i));
    t.deepEqual(await keysOf(store, 'pulses', { gt: k(99), limit: 701 }), from100);
    t.deepEqual(await keysOf(store, 'pulses', { gte: k(1000) }), Array.from({ length: 300 }, (_, i) => k(1000 + i)));
    const snap = await store.snapshot();
    try {
      t.is((await keysOf(store, 'pulses', { snapshot: snap, lte: k(1099) })).length, 1100);
    } finally {
      await snap.close();
    }
  });

  contract('write: a batch lands whole or not at all; later ops on a key win', async (t, b) => {
    const { store } = await b.open(t);
    await store.write([put('accounts', 'a', { v: 1 }), put('accounts', 'gone', { v: 1 })]);
    const bad = store.write([
      put('accounts', 'a', { v: 2 }), del('accounts', 'gone'), put('journal', 'j', { v: 3 }),
      put('accounts', 'c', { v: 10n } as never), // JSON cannot encode a BigInt: the whole batch is refused
    ]);
    await t.throwsAsync(bad);
    t.deepEqual(await store.get('accounts', 'a'), { v: 1 }, 'nothing of the refused batch landed');
    t.deepEqual(await store.get('accounts', 'gone'), { v: 1 });
    t.is(await store.get('journal', 'j'), undefined);
    await store.write([
      put('meta', 'twice', { v: 1 }), put('meta', 'twice', { v: 2 }),
      put('meta', 'put-then-del', { v: 1 }), del('meta', 'put-then-del'),
      del('meta', 'del-then-put'), put('meta', 'del-then-put', { v: 2 }),
      del('meta', 'never-there'),
    ]);
    t.deepEqual(await store.get('meta', 'twice'), { v: 2 });
    t.is(await store.get('meta', 'put-then-del'), undefined);
    t.deepEqual(await store.get('meta', 'del-then-put'), { v: 2 });
    t.deepEqual(await keysOf(store, 'meta'), ['del-then-put', 'twice']);
    await store.write([]);
    await store.write([put('meta', 'unsynced', { v: 1 })], { sync: false });
    t.deepEqual(await store.get('meta', 'unsynced'), { v: 1 }, 'an unsynced write is read back');
  });

  contract('write: a batch holding an op that is no put or del of a sublevel\'s key is refused whole', async (t, b) => {
    const { store } = await b.open(t);
    await store.write([put('accounts', 'a', { v: 1 })]);
    const malformed: unknown[] = [
      'Stryker was here', null, 42, [], {},
      { type: 'upsert', sub: 'accounts', key: 'x', value: {} },
      { type: 'put', sub: 'nope', key: 'x', value: {} },
      { type: 'put', sub: 'accounts', key: 7, value: {} },
      { type: 'put', sub: 'accounts', key: 'x' },
      { type: 'put', sub: 'accounts', key: 'x', value: null },
      { type: 'put', sub: 'accounts', key: 'x', value: [1] },
      { type: 'del', sub: 'accounts' },
    ];
    for (const op of malformed) {
      const batch = [put('accounts', 'a', { v: 2 }), op as never, put('meta', 'm', { v: 1 })];
      const e = await t.throwsAsync(store.write(batch));
      t.true(e instanceof TypeError, `${JSON.stringify(op)}: ${e?.message}`);
      t.regex(e!.message, /^store: op 1 /, JSON.stringify(op));
    }
    t.deepEqual(await store.get('accounts', 'a'), { v: 1 }, 'nothing of a refused batch landed');
    t.is(await store.get('meta', 'm'), undefined);
    t.deepEqual(await keysOf(store, 'accounts'), ['a'], 'no key was written for a malformed op');
    const good = store.write([put('accounts', 'b', { v: 1 })]);
    await t.throwsAsync(store.write(['late' as never]), { instanceOf: TypeError });
    await good;
    t.deepEqual(await store.get('accounts', 'b'), { v: 1 }, 'a good batch beside a refused one lands');
  });

  contract('snapshot: every sublevel as of the snapshot, whatever is written after', async (t, b) => {
    const { store } = await b.open(t);
    await store.write([
      put('accounts', 'm', { n: 1 }), put('journal', 'm!1', { n: 1 }), put('quotes', 'q', { s: 'issued' }),
    ]);
    const snap = await store.snapshot();
    try {
      await store.write([put('accounts', 'm', { n: 2 }), put('journal', 'm!2', { n: 2 }), del('quotes', 'q')]);
      await store.write([put('accounts', 'new', { n: 1 })]);
      t.deepEqual(await all(store, 'accounts', { snapshot: snap }), [['m', { n: 1 }]]);
      t.deepEqual(await keysOf(store, 'journal', { snapshot: snap }), ['m!1']);
      t.deepEqual(await all(store, 'quotes', { snapshot: snap }), [['q', { s: 'issued' }]]);
      t.deepEqual(await all(store, 'accounts'), [['m', { n: 2 }], ['new', { n: 1 }]], 'without it: the latest');
      t.deepEqual(await keysOf(store, 'quotes'), []);
    } finally {
      await snap.close();
    }
    await snap.close(); // closing twice is harmless
  });

  contract('concurrent writers: every batch lands, each one whole (readers never see half of one)', async (t, b) => {
    const { store } = await b.open(t);
    await store.write([put('accounts', 'x', { v: 0 }), put('accounts', 'y', { v: 0 })]);
    let torn = 0, looked = 0, writing = true;
    const reader = (async () => {
      while (writing) {
        const snap = await store.snapshot();
        try {
          const [x, y] = (await all(store, 'accounts', { snapshot: snap })).map(([, v]) => v.v);
          looked++;
          if (x !== y) torn++;
        } finally {
          await snap.close();
        }
      }
    })();
    const writers = Array.from({ length: 40 }, (_, i) => store.write([
      put('accounts', 'x', { v: i + 1 }), put('journal', `j${String(i).padStart(2, '0')}`, { i }),
      put('accounts', 'y', { v: i + 1 }),
    ]));
    const results = await Promise.allSettled(writers);
    writing = false;
    await reader;
    t.deepEqual(results.filter((r) => r.status === 'rejected'), []);
    t.is((await keysOf(store, 'journal')).length, 40);
    const x = await store.get('accounts', 'x'), y = await store.get('accounts', 'y');
    t.deepEqual(x, y, 'the last batch to land set both');
    t.true(looked > 0);
    t.is(torn, 0, `${torn} of ${looked} snapshots saw x and y from different batches`);
  });

  contract('close waits for writes under way; a store opened again reads them', async (t, b) => {
    const { store, reopen } = await b.open(t);
    const pending = Array.from({ length: 10 }, (_, i) => store.write([put('receipts', `r${i}`, { i })]));
    await store.close();
    await Promise.all(pending);
    const again = await reopen();
    t.is((await keysOf(again, 'receipts')).length, 10);
  });

  contract('keys: the keys entries() would give, range, limit and snapshot alike', async (t, b) => {
    const { store } = await b.open(t);
    await store.write(['c', 'a', 'e', 'b', 'd'].map((k) => put('quote_expiry', k, { k })));
    const keys = async (range: Range = {}) => {
      const out: string[] = [];
      for await (const k of store.keys('quote_expiry', range)) out.push(k);
      return out;
    };
    t.deepEqual(await keys(), ['a', 'b', 'c', 'd', 'e']);
    t.deepEqual(await keys({ gt: 'a', lte: 'd', limit: 2 }), ['b', 'c']);
    const snap = await store.snapshot();
    try {
      await store.write([del('quote_expiry', 'a')]);
      t.deepEqual(await keys({ snapshot: snap }), ['a', 'b', 'c', 'd', 'e']);
      t.deepEqual(await keys(), ['b', 'c', 'd', 'e']);
    } finally {
      await snap.close();
    }
  });

  contract('guards: a create whose key exists refuses the whole batch as a store conflict, synced or not',
    async (t, b) => {
      const { store } = await b.open(t);
      await store.write([create('journal', 'm!1', { n: 1 }), put('accounts', 'm', { seq: 1 })]);
      const e = await t.throwsAsync(store.write([
        put('accounts', 'm', { seq: 'lost' }), create('journal', 'm!2', { n: 2 }), create('journal', 'm!1', { n: 0 }),
      ]));
      t.true(isStoreConflict(e), String(e));
      t.is((e as { code?: string }).code, 'busy', 'a conflict that reaches a client is busy: retry');
      t.deepEqual(await store.get('accounts', 'm'), { seq: 1 }, 'nothing of the refused batch landed');
      t.is(await store.get('journal', 'm!2'), undefined);
      t.deepEqual(await store.get('journal', 'm!1'), { n: 1 });
      t.is(store.stats.conflicts, 1);
      await store.write([create('journal', 'm!3', { n: 3 }), put('journal', 'm!3', { n: 33 })]);
      t.deepEqual(await store.get('journal', 'm!3'), { n: 33 }, 'a create then a put of one key: created, put');
      await t.throwsAsync(store.write([create('journal', 'm!3', { n: 3 }), put('journal', 'm!3', { n: 4 })]),
        { message: /ledger changed under this write/ }, 'and still a create');
      const unsynced = await t.throwsAsync(store.write([create('journal', 'm!1', { n: 0 })], { sync: false }));
      t.true(isStoreConflict(unsynced));
      await store.write([put('idempotency', 'k', { r: 1 })], { sync: false });
      t.deepEqual(await store.get('idempotency', 'k'), { r: 1 }, 'and the store goes on');
      t.is(store.stats.unsyncedFlushes, 1, 'the refused unsynced batch was never flushed');
    });

  contract('guards: compare-and-set and compare-and-delete land only on the value as read', async (t, b) => {
    const { store } = await b.open(t);
    await store.write([put('leases', 'sweeps', { holder: 'a', expires_ms: 1 }), put('machines', 'm', { v: 1 })]);
    const lease = (await store.get('leases', 'sweeps'))!;
    const machine = (await store.get('machines', 'm'))!; // a cached kind on LevelDB
    await store.write([replace('leases', 'sweeps', { holder: 'b', expires_ms: 2 }, lease)]);
    const later = { holder: 'c', expires_ms: 3 };
    const stale = await t.throwsAsync(store.write([replace('leases', 'sweeps', later, lease)]));
    t.true(isStoreConflict(stale), 'compared with a value that has changed since: refused');
    t.deepEqual(await store.get('leases', 'sweeps'), { holder: 'b', expires_ms: 2 });
    await t.throwsAsync(store.write([delIf('leases', 'sweeps', lease)]), { message: /ledger changed/ });
    await store.write([delIf('leases', 'sweeps', (await store.get('leases', 'sweeps'))!)]);
    t.is(await store.get('leases', 'sweeps'), undefined);
    await store.write([replace('machines', 'm', { v: 2 }, machine)]);
    t.true(isStoreConflict(await t.throwsAsync(store.write([replace('machines', 'm', { v: 3 }, machine)]))));
    t.deepEqual(await store.get('machines', 'm'), { v: 2 });
  });

  contract('guards: of concurrent batches that each create one key, exactly one lands', async (t, b) => {
    const { store } = await b.open(t);
    const tries = await Promise.allSettled(Array.from({ length: 8 }, (_, i) =>
      store.write([create('idempotency_running', 'k', { holder: `n${i}` }), put('receipts', `r${i}`, { i })],
        { sync: i % 2 === 0 })));
    const landed = tries.filter((r) => r.status === 'fulfilled').length;
    t.is(landed, 1);
    t.true(tries.every((r) => r.status === 'fulfilled' || isStoreConflict(r.reason)));
    t.is((await keysOf(store, 'receipts')).length, 1, 'the refused batches landed nothing');
  });

  contract('guards: a guarded write sent as the store closes is answered, landed or refused, never left waiting',
    async (t, b) => {
      const { store } = await b.open(t);
      await store.write([put('leases', 'x', { v: 1 })]);
      const was = (await store.get('leases', 'x'))!;
      const closing = store.close();
      const write = store.write([replace('leases', 'x', { v: 2 }, was)]).then(() => 'landed', () => 'refused');
      await closing;
      // a write left waiting never settles: after 10 s it counts as that (the answer comes in microseconds)
      const waiting = new Promise((r) => setTimeout(() => r('left waiting'), 10_000).unref());
      t.true(['landed', 'refused'].includes(await Promise.race([write, waiting]) as string));
    });
}
