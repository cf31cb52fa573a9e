// The LevelDB store: one database in the data dir with one sublevel per record kind, and the one
// way to write — an atomic batch written with sync (level 10 defaults to sync: false; everything
// this service acknowledges must survive kill -9, DESIGN.md §11). Holds no business rules.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';

export type Json = Record<string, unknown>;
type Sub = ReturnType<Level<string, Json>['sublevel']> & { get(key: string): Promise<Json | undefined> };

export const SUBLEVELS = [
  'meta', 'machines', 'accounts', 'journal', 'invoices', 'invoice_amounts', 'quotes', 'quote_expiry',
  'receipts', 'executions', 'pulses', 'seeds', 'idempotency', 'idempotency_expiry', 'tlog_nodes', 'tlog_entries',
] as const;
export type SublevelName = (typeof SUBLEVELS)[number];

export type Op = { type: 'put'; sub: SublevelName; key: string; value: Json } | { type: 'del'; sub: SublevelName; key: string };

export class Store {
  readonly db: Level<string, Json>;
  readonly #subs: Map<SublevelName, Sub>;

  private constructor(db: Level<string, Json>) {
    this.db = db;
    this.#subs = new Map(SUBLEVELS.map((n) => [n, db.sublevel<string, Json>(n, { valueEncoding: 'json' }) as unknown as Sub]));
  }

  static async open(dataDir: string): Promise<Store> {
    const dir = join(dataDir, 'ledger');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const db = new Level<string, Json>(dir, { valueEncoding: 'json' });
    await db.open();
    return new Store(db);
  }

  sub(name: SublevelName): Sub {
    return this.#subs.get(name)!;
  }

  async get<T extends Json = Json>(name: SublevelName, key: string): Promise<T | undefined> {
    return (await this.sub(name).get(key)) as T | undefined;
  }

  /** All ops in one atomic, synced write: either every record lands or none does. */
  async write(ops: readonly Op[]): Promise<void> {
    if (!ops.length) return;
    await this.db.batch(ops.map((o) => (o.type === 'put'
      ? { type: 'put' as const, sublevel: this.sub(o.sub) as never, key: o.key, value: o.value }
      : { type: 'del' as const, sublevel: this.sub(o.sub) as never, key: o.key })), { sync: true });
  }

  /** Iterates a sublevel in key order (optionally a prefix range). */
  async *entries<T extends Json = Json>(name: SublevelName, range: { gte?: string; lt?: string; lte?: string; limit?: number } = {}): AsyncGenerator<[string, T]> {
    for await (const [k, v] of this.sub(name).iterator(range)) yield [k, v as T];
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

export const put = (sub: SublevelName, key: string, value: Json): Op => ({ type: 'put', sub, key, value });
export const del = (sub: SublevelName, key: string): Op => ({ type: 'del', sub, key });
