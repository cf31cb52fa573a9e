// The LevelDB ledger on a disk that fills up. LevelDB appends to its log after a write that failed there
// (a torn record), and its recovery at the next open drops everything after one: writes acknowledged after
// a refusal would vanish at the next start, and every record in them still audits clean. So the store
// stops taking writes at the first refusal, says why (ping, and each refused write), serves reads, and
// takes writes again once opened anew; nothing acknowledged is lost.
import test from 'ava';
import { join } from 'node:path';
import { ServiceError } from '../../src/errors.ts';
import { LevelStore } from '../../src/store/level-store.ts';
import { put } from '../../src/store/store.ts';
import { testNeeding } from '../support/needs.ts';
import { SMALL_FS, smallFs } from '../support/small-fs.ts';

const record = (i: number) => ({ i, pad: 'x'.repeat(2000) });

testNeeding(test, 'a full disk: the first refused write stops every later one until the store is opened again; '
  + 'nothing acknowledged is lost, reads go on', SMALL_FS, async (t) => {
  const fs = smallFs(t, 48);
  const dir = join(fs.dir, 'data');
  let store = await LevelStore.open(dir);
  t.teardown(() => store.close());
  const acknowledged: number[] = [];
  for (let i = 0; i < 20; i++) {
    await store.write([put('meta', `r${i}`, record(i))]);
    acknowledged.push(i);
  }
  fs.fill(64 * 1024);
  let refused: unknown;
  const write = (i: number) => store.write([put('meta', `r${i}`, record(i))]).then(() => { acknowledged.push(i); });
  for (let i = 20; i < 2000 && !refused; i++) await write(i).catch((e: unknown) => { refused = e; });
  t.true(refused instanceof ServiceError && refused.code === 'service_unavailable', String(refused));
  t.regex((refused as Error).message, /may or may not have landed/);
  await t.throwsAsync(store.ping(), { message: /refused a write/ }, 'HEALTH is told');
  fs.empty();
  // the disk has room again: still no write goes down after the refused one
  const later: unknown[] = [];
  for (let i = 5000; i < 5050; i++) await write(i).catch((e: unknown) => later.push(e));
  t.is(later.length, 50, 'every later write refused');
  const why = /takes no writes until svcd is started again/;
  t.true(later.every((e) => e instanceof ServiceError && why.test(e.message)));
  t.deepEqual(await store.get('meta', 'r0'), record(0), 'reads go on');
  await store.close();
  store = await LevelStore.open(dir);
  const lost = [];
  for (const i of acknowledged) if (!(await store.get('meta', `r${i}`))) lost.push(i);
  t.deepEqual(lost, [], `all ${acknowledged.length} acknowledged writes are there after the open`);
  await store.write([put('meta', 'again', record(1))]);
  await store.ping();
  t.deepEqual(await store.get('meta', 'again'), record(1));
});
