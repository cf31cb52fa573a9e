// The store's write path: group commit (writes that queue behind a synced flush go down together,
// each caller resolved only once durable, a failed flush rejects every caller in it and lands
// nothing) and the write-through cache (reads after an acknowledged write see it; cached values are
// frozen; a read racing a write never re-caches the older value).
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store, put, del } from '../../src/store/store.ts';

async function open(t: { teardown(fn: () => unknown): void }, cacheEntries?: number): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-store-'));
  const store = await Store.open(dir, cacheEntries === undefined ? {} : { cacheEntries });
  t.teardown(async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); });
  return store;
}

test('group commit: 20 writes issued together go down in 2 synced flushes, each resolved durable', async (t) => {
  const store = await open(t);
  const writes = Array.from({ length: 20 }, (_, i) => store.write([put('accounts', `m${i}`, { n: i })]));
  await Promise.all(writes);
  t.is(store.stats.writes, 20);
  t.is(store.stats.syncedFlushes, 2, 'the first flush alone, the 19 that queued behind it together');
  for (let i = 0; i < 20; i++) t.deepEqual(await store.get('accounts', `m${i}`), { n: i });
});

test('group commit: a bad batch fails alone; the callers flushed with it land', async (t) => {
  const store = await open(t);
  await store.write([put('meta', 'first', { v: 1 })]);
  const first = store.write([put('meta', 'held', { v: 0 })]); // these four may share one flush
  const good = store.write([put('accounts', 'a', { v: 1 }), put('accounts', 'b', { v: 2 })]);
  const bad = store.write([put('accounts', 'c', { v: 10n } as never)]); // JSON cannot encode a BigInt
  const alsoGood = store.write([del('meta', 'first')]);
  const results = await Promise.allSettled([first, good, bad, alsoGood]);
  t.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
  t.is(await store.get('accounts', 'c'), undefined, 'the bad batch landed nothing');
  t.deepEqual(await store.get('accounts', 'b'), { v: 2 });
  t.is(await store.get('meta', 'first'), undefined, 'the delete queued after it landed');
  await store.write([put('accounts', 'a', { v: 3 })]);
  t.deepEqual(await store.get('accounts', 'a'), { v: 3 }, 'the store keeps working after');
});

test('cache: reads after a write see it; values are frozen; deletes are cached as absent', async (t) => {
  const store = await open(t);
  await store.write([put('machines', 'm', { token_sha256: 'aa', nested: { x: 1 } })]);
  const before = { ...store.stats };
  const m = await store.get('machines', 'm');
  t.deepEqual(m, { token_sha256: 'aa', nested: { x: 1 } });
  t.is(store.stats.reads, before.reads, 'answered from the cache written through');
  t.is(store.stats.cacheHits, before.cacheHits + 1);
  t.throws(() => { (m as { nested: { x: number } }).nested.x = 2; }, { instanceOf: TypeError });
  t.is(await store.get('machines', 'm'), m, 'the text written is parsed once, by the first read');
  await store.write([del('machines', 'm')]);
  t.is(await store.get('machines', 'm'), undefined);
  t.is(store.stats.reads, before.reads, 'the delete is known without a read');
  // a value the caller wrote and then changes does not change the cache
  const rec = { token_sha256: 'bb' };
  await store.write([put('machines', 'n', rec)]);
  rec.token_sha256 = 'changed';
  t.deepEqual(await store.get('machines', 'n'), { token_sha256: 'bb' });
});

test('cache: a read that raced a write does not put the older value back', async (t) => {
  const store = await open(t, 10);
  await store.write([put('accounts', 'k', { v: 1 })]);
  // push k out of the 10-entry cache, so the next read goes to the disk
  for (let i = 0; i < 10; i++) await store.write([put('accounts', `fill${i}`, { v: i })]);
  const reads = store.stats.reads;
  const racing = store.get('accounts', 'k'); // misses, reads v=1 from the disk
  await store.write([put('accounts', 'k', { v: 2 })]); // lands before (or while) that read returns
  const seen = await racing;
  t.true([1, 2].includes((seen as { v: number }).v), 'a concurrent read sees either value');
  t.deepEqual(await store.get('accounts', 'k'), { v: 2 }, 'and never leaves the older one cached');
  t.is(store.stats.reads, reads + 1);
});

test('unsynced writes are counted apart and still readable', async (t) => {
  const store = await open(t);
  await store.write([put('idempotency', 'x', { r: 1 })], { sync: false });
  t.is(store.stats.syncedFlushes, 0);
  t.is(store.stats.unsyncedFlushes, 1);
  t.deepEqual(await store.get('idempotency', 'x'), { r: 1 });
});

test('a read that finds nothing is not cached: naming ids that do not exist pushes no record out', async (t) => {
  const store = await open(t, 3);
  await store.write([put('machines', 'hot', { n: 1 })]);
  for (let i = 0; i < 10; i++) t.is(await store.get('machines', `absent-${i}`), undefined);
  const before = store.stats.reads;
  t.deepEqual(await store.get('machines', 'hot'), { n: 1 });
  t.is(store.stats.reads, before, 'still cached after ten misses in a cache of three');
});

test('writes go to the native batch, in the layout the sublevels read; once closed, they are refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-store-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open(dir);
  await store.write([put('receipts', 'r1', { a: 'ü' }), put('accounts', 'm', { units: '5' })]);
  await store.write([put('receipts', 'r2', { b: 2 }), del('receipts', 'r1')], { sync: false });
  // read back through the sublevel iterators (abstract-level's own key prefixing and json decoding)
  const rows: [string, unknown][] = [];
  for await (const e of store.entries('receipts')) rows.push(e);
  t.deepEqual(rows, [['r2', { b: 2 }]]);
  t.deepEqual(await store.get('accounts', 'm'), { units: '5' });
  await store.close();
  const e = await t.throwsAsync(store.write([put('receipts', 'r3', { c: 3 })]));
  t.is((e as { code?: string }).code, 'LEVEL_DATABASE_NOT_OPEN');
  // and reopened, the data dir holds what was written
  const again = await Store.open(dir);
  t.deepEqual(await again.get('receipts', 'r2'), { b: 2 });
  t.is(await again.get('receipts', 'r1'), undefined);
  await again.close();
});
