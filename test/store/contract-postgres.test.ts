// The store contract suite (contract-suite.ts) on PostgreSQL: a real server (test/support/postgres.ts),
// a fresh database per test. Without PostgreSQL the tests are skipped visibly (and fail in CI).
import test from 'ava';
import { PgStore } from '../../src/store/pg-store.ts';
import type { Store } from '../../src/store/store.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';
import { contractSuite, type Backend } from './contract-suite.ts';

const postgres = postgresForFile(test);

const pgBackend: Backend = {
  name: 'postgres',
  async open(t) {
    const url = await (await postgres()).freshDatabase();
    const opened: Store[] = [];
    const reopen = async () => { const s = await PgStore.open(url, { poolSize: 4 }); opened.push(s); return s; };
    t.teardown(async () => { for (const s of opened) await s.close().catch(() => {}); });
    return { store: await reopen(), reopen };
  },
};

contractSuite((title, impl) => testNeeding(test, `postgres: ${title}`, POSTGRES, (t) => impl(t, pgBackend)));
