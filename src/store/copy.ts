// A copy of a store's records into a LevelDB store (backup.ts builds its backups with it): from LevelDB
// its raw bytes, every sublevel in one pass; from another engine (PostgreSQL) sublevel by sublevel from
// one snapshot. Either way the copy is a LevelDB data dir, whatever the engine it was taken from.
import { put, SUBLEVELS, type Op, type Store } from './contract.ts';
import { LevelStore } from './level-store.ts';

/** Records copied per LevelDB batch: bounded memory whatever the ledger's size. */
const CHUNK = 1000;

/**
 * Copies every record of `from` as read from one snapshot into `to`: LevelDB raw bytes, all sublevels;
 * another store (PostgreSQL) sublevel by sublevel from one snapshot, so its backup is a LevelDB data dir.
 */
export async function copyRecords(from: Store, to: LevelStore): Promise<number> {
  if (!(from instanceof LevelStore)) return copyFromSnapshot(from, to);
  const raw = { keyEncoding: 'buffer', valueEncoding: 'buffer' } as const;
  const it = from.db.iterator<Buffer, Buffer>(raw);
  let n = 0;
  try {
    for (;;) {
      const rows = await it.nextv(CHUNK);
      if (!rows.length) break;
      await to.db.batch<Buffer, Buffer>(rows.map(([key, value]) => ({ type: 'put', key, value })), raw);
      n += rows.length;
    }
  } finally {
    await it.close();
  }
  return n;
}

async function copyFromSnapshot(from: Store, to: LevelStore): Promise<number> {
  const snapshot = await from.snapshot();
  let n = 0;
  try {
    for (const sub of SUBLEVELS) {
      let ops: Op[] = [];
      for await (const [k, v] of from.entries(sub, { snapshot })) {
        ops.push(put(sub, k, v));
        if (ops.length === CHUNK) { await to.write(ops, { sync: false }); n += ops.length; ops = []; }
      }
      await to.write(ops, { sync: false });
      n += ops.length;
    }
  } finally {
    await snapshot.close();
  }
  return n;
}

