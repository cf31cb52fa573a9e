// The store contract suite (contract-suite.ts) on LevelDB in a temp dir.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LevelStore, type Store } from '../../src/store/store.ts';
import { contractSuite, type Backend } from './contract-suite.ts';

const leveldb: Backend = {
  name: 'leveldb',
  async open(t) {
    const dir = mkdtempSync(join(tmpdir(), 'svc-contract-'));
    const opened: Store[] = [];
    const reopen = async () => { const s = await LevelStore.open(dir); opened.push(s); return s; };
    t.teardown(async () => {
      for (const s of opened) await s.close().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    });
    return { store: await reopen(), reopen };
  },
};

contractSuite((title, impl) => test(`leveldb: ${title}`, (t) => impl(t, leveldb)));
