// The ledger's start-up check from a signed checkpoint (src/core/ledger-checkpoint.ts), on a real LevelDB
// store: the first start verifies every entry and writes the checkpoint; the next reads only what was
// written since (counted, not timed); a balance edited by hand is still found; a checkpoint that does not
// hold (an edited mark, a forged signature, a removed account) falls back to the whole journal.
import test from 'ava';
import { CHECKPOINT_KEY, verifyAtStart } from '../../src/core/ledger-checkpoint.ts';
import { idPart, key, numPart } from '../../src/store/key-codec.ts';
import { del, put } from '../../src/store/store.ts';
import { coreFixture, type Fixture } from '../support/core-fixture.ts';

/** `n` journaled credits to each of `machines` (each change in its own batch, as the core writes them). */
async function credit(f: Fixture, machines: string[], n: number): Promise<void> {
  for (const m of machines) {
    for (let i = 0; i < n; i++) {
      const acct = await f.ctx.ledger.account(m);
      const { ops } = f.ctx.ledger.change(m, acct, 'credit', 10n, 0n, { rail: 'test' }, f.clock.now());
      await f.store.write(ops);
    }
  }
}

const start = (f: Fixture) => verifyAtStart(f.store, f.ctx.ledger, f.identity, f.clock.now());

test('ledger checkpoint: a start reads only the journal written since the last; hand edits still found', async (t) => {
  const f = await coreFixture(t);
  const machines = ['m-a', 'm-b', 'm-c'];
  await credit(f, machines, 50);

  const first = await start(f);
  t.like(first, { ok: true, mode: 'full', read: 150, accounts: 3 });
  const second = await start(f);
  t.like(second, { ok: true, mode: 'checkpoint', read: 0, accounts: 3 }, 'nothing new: no journal entry read');

  await credit(f, ['m-b'], 7);
  await credit(f, ['m-new'], 2);
  const third = await start(f);
  t.like(third, { ok: true, mode: 'checkpoint', read: 9, accounts: 4 }, 'only the 9 entries written since');

  // a balance edited by hand (the journal not): found from the checkpoint, and no checkpoint is written over it
  const acct = (await f.store.get('accounts', idPart('m-a')))!;
  await f.store.write([put('accounts', idPart('m-a'), { ...acct, available: '1000000' })]);
  const edited = await start(f);
  t.false(edited.ok);
  t.is(edited.mode, 'checkpoint');
  const named = edited.problems.some((p) => p.startsWith('m-a: available 1000000, reserved 0 at seq 50, but verified '
    + 'as 500, 0 there'));
  t.true(named, edited.problems.join('; '));
  await f.store.write([put('accounts', idPart('m-a'), acct)]);
  t.like(await start(f), { ok: true, mode: 'checkpoint', read: 0 });
});

test('ledger checkpoint: marks edited, a forged record or a lost account fall back to the whole journal', async (t) => {
  const f = await coreFixture(t);
  await credit(f, ['m-x', 'm-y'], 20);
  t.like(await start(f), { ok: true, mode: 'full', read: 40 });

  // a mark moved ahead would hide the entries below it: its digest no longer matches the signed one
  const mark = (await f.store.get('ledger_marks', idPart('m-x')))!;
  await f.store.write([put('ledger_marks', idPart('m-x'), { ...mark, seq: 19, available: '190' })]);
  t.like(await start(f), { ok: true, mode: 'full', read: 40 }, 'an edited mark: the whole journal');
  t.like(await start(f), { ok: true, mode: 'checkpoint', read: 0 }, 'and a good checkpoint again');

  // a record signed by another key (or edited): not this node's
  const record = (await f.store.get('meta', CHECKPOINT_KEY))!;
  const forged = { ...record, signature: Buffer.alloc(64, 1).toString('base64url') };
  await f.store.write([put('meta', CHECKPOINT_KEY, forged)]);
  t.like(await start(f), { ok: true, mode: 'full', read: 40 }, 'a signature that does not hold: the whole journal');

  // a journal entry and its account removed together: its mark names an account that is gone
  await f.store.write([del('accounts', idPart('m-y')), ...Array.from({ length: 20 }, (_, i) =>
    del('journal', key(idPart('m-y'), numPart(i + 1))))]);
  const lost = await start(f);
  t.false(lost.ok);
  const gone = lost.problems.some((p) => p.startsWith('m-y: a checkpoint mark without its account'));
  t.true(gone, lost.problems.join('; '));
});
