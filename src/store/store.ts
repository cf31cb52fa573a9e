// The store the core opens: the contract (./contract.ts) and the choice of engine. LevelDB in the data
// dir is the default; SVC_STORE=postgres://… puts the ledger on PostgreSQL, shared by several nodes
// (docs/scale-out.md). The PostgreSQL driver is loaded only when it is chosen.
import { LevelStore } from './level-store.ts';
import type { Store as StoreContract } from './contract.ts';

export * from './contract.ts';
export { LevelStore } from './level-store.ts';
export { copyRecords } from './copy.ts';

/** The store contract (a type), and `Store.open(dataDir)`: the default store, LevelDB in that data dir. */
export type Store = StoreContract;
export const Store = {
  open: (dataDir: string, opts: { cacheEntries?: number } = {}): Promise<LevelStore> => LevelStore.open(dataDir, opts),
};

/** What SVC_STORE may say: nothing or `leveldb` (the data dir's LevelDB), or a postgres:// URL. */
export function isPostgresUrl(s: string): boolean {
  return /^postgres(ql)?:\/\//.test(s);
}

/** Opens the configured store: `url` null → LevelDB in `dataDir`; a postgres:// URL → PostgreSQL. */
export async function openStore(dataDir: string, url: string | null): Promise<StoreContract> {
  if (url === null) return LevelStore.open(dataDir);
  if (!isPostgresUrl(url)) throw new Error('SVC_STORE must be leveldb or a postgres:// URL');
  const { PgStore } = await import('./pg-store.ts');
  return PgStore.open(url);
}
