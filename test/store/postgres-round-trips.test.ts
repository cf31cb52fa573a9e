// What a paid flow costs PostgreSQL, counted in statements (each one round trip): the free quote none,
// ACCEPT_QUOTE and the execution two each (the gate's one read of the machine record, the account and the
// quote; the operation's one batch). And a read made ahead of the lock that another node's write has
// made stale is never built on: the batch is refused and the operation runs again on what is there.
import test from 'ava';
import { Ledger } from '../../src/core/ledger.ts';
import { PgStore } from '../../src/store/pg-store.ts';
import { fundCore, openCore } from '../support/core-fixture.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';

const postgres = postgresForFile(test);

testNeeding(test, 'a paid flow on PostgreSQL: the quote no statement, accept and execute two each', POSTGRES,
  async (t) => {
    const url = await (await postgres()).freshDatabase();
    const core = await openCore(t, { SVC_STORE: url });
    const m = 'trips';
    const auth = { token: await fundCore(core, m) };
    const stats = core.ctx.store.stats;
    const count = async (f: () => Promise<Record<string, unknown>>) => {
      const before = stats.statements!;
      const out = await f();
      return { out, statements: stats.statements! - before };
    };
    for (let i = 0; i < 3; i++) {
      const q = await count(() => core.handle('QUOTE', { service: 'get-pulse', machine_id: m, bits: 64 },
        undefined, 'gateway'));
      const args = { quote_id: q.out.quote_id, machine_id: m };
      const accepted = await count(() => core.handle('ACCEPT_QUOTE', args, auth, 'gateway'));
      const executed = await count(() => core.handle('GET_PULSE', args, auth, 'gateway'));
      t.is(accepted.out.state, 'accepted');
      t.regex(executed.out.receipt_id as string, /^rcpt_/);
      t.deepEqual([q.statements, accepted.statements, executed.statements], [0, 2, 2], `flow ${i}`);
    }
    t.true((await core.ctx.ledger.verify()).ok);
  });

testNeeding(test, 'a read ahead made stale by another node\'s write: refused, run again, both changes kept',
  POSTGRES, async (t) => {
    const url = await (await postgres()).freshDatabase();
    const [mine, theirs] = [await PgStore.open(url), await PgStore.open(url)];
    t.teardown(() => Promise.all([mine.close(), theirs.close()]));
    const [here, there] = [new Ledger(mine), new Ledger(theirs)];
    const creditOn = (l: Ledger, s: PgStore, units: bigint, runs: number[]) =>
      l.withMachine('m-race', async (_h, a) => {
        runs.push(a.seq);
        await s.write(l.change('m-race', a, 'credit', units, 0n, { test: 'race' }, new Date()).ops);
      });
    await creditOn(here, mine, 1n, []);
    (await here.readAhead('m-race', [])).keep(); // seq 1
    await creditOn(there, theirs, 10n, []); // another node: seq 2
    const runs: number[] = [];
    await creditOn(here, mine, 100n, runs);
    t.deepEqual(runs, [1, 2], 'the first run built on the stale seq 1 and was refused; the second read seq 2');
    const acct = await here.account('m-race');
    t.deepEqual([acct.available, acct.seq], [111n, 3]);
    t.true((await here.verify()).ok);
  });
