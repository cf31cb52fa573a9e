// A write that landed but whose answer never came back (PostgreSQL: the connection broke after the commit;
// the store answers service_unavailable, "may or may not have landed"). What a node writes in a sequence of
// its own — its pulse chain, a transparency log — must find out afterwards whether it landed, and go on
// from there: not mistake its own record for another process's (a pulse chain that did stopped serving
// GET_PULSE until restart), nor fail a later call over it.
import test from 'ava';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceError } from '../../src/errors.ts';
import { NodeIdentity } from '../../src/core/node-identity.ts';
import { PulseChain } from '../../src/core/pulse-chain.ts';
import { TransparencyLog } from '../../src/core/tlog.ts';
import { Kernels } from '../../src/kernels/index.ts';
import { LevelStore } from '../../src/store/level-store.ts';
import type { Op, Store } from '../../src/store/store.ts';
import { openCore } from '../support/core-fixture.ts';

/** A LevelDB store whose next write touching a sublevel lands, then fails as a broken connection would. */
async function lossyStore(t: { teardown(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-lost-'));
  const store = await LevelStore.open(join(dir, 'data'));
  t.teardown(async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); });
  const identity = NodeIdentity.loadOrCreate(dir);
  let armed: string | null = null;
  const write = store.write.bind(store);
  store.write = async (ops: readonly Op[], opts?: { sync?: boolean }) => {
    await write(ops, opts);
    if (armed && ops.some((o) => o.sub === armed)) {
      armed = null;
      const what = 'the ledger database went away under a write, which may or may not have landed';
      throw new ServiceError('service_unavailable', what);
    }
  };
  return { store: store as Store, identity, loseNextAnswer: (sub: string) => { armed = sub; } };
}

test('a pulse whose write landed but whose answer was lost: the chain goes on from it, unforked', async (t) => {
  const { store, identity, loseNextAnswer } = await lossyStore(t);
  const chain = new PulseChain(store, identity, 3_600_000);
  t.teardown(() => chain.stop());
  await chain.start(); // pulse 0
  loseNextAnswer('pulses');
  await t.throwsAsync(chain.emit(), { message: /may or may not have landed/ }); // pulse 1 landed, unknown here
  const next = await chain.emit(); // finds pulse 1 stored as it wrote it, and goes on with pulse 2
  t.is(next.pulse.index, 2);
  t.is(chain.current().index, 2, 'GET_PULSE is served');
  const [p0, p1, p2] = [await chain.get(0), await chain.get(1), await chain.get(2)];
  t.is(p1?.pulse.prev_output, p0?.output_hash);
  t.is(p2?.pulse.prev_output, p1?.output_hash);
  t.is(p2?.pulse.revealed_index, 1);
  t.is(p2?.pulse.revealed_seed && sha256(p2.pulse.revealed_seed), p1?.pulse.commit, 'pulse 1\'s seed, as committed');
});

test('a pulse write that failed before it landed: the chain goes on as if it had never been tried', async (t) => {
  const { store, identity } = await lossyStore(t);
  const chain = new PulseChain(store, identity, 3_600_000);
  t.teardown(() => chain.stop());
  await chain.start();
  const write = store.write.bind(store);
  store.write = () => Promise.reject(new ServiceError('service_unavailable', 'the ledger database cannot be reached'));
  await t.throwsAsync(chain.emit());
  store.write = write;
  const next = await chain.emit();
  t.is(next.pulse.index, 1);
  t.is((await chain.get(1))?.pulse.prev_output, (await chain.get(0))?.output_hash);
});

test('a pulse that failed unanswered, whose index another process with the node key then filled: never taken '
  + 'for this one\'s; this chain stops', async (t) => {
  const { store, identity } = await lossyStore(t);
  const chain = new PulseChain(store, identity, 3_600_000);
  t.teardown(() => chain.stop());
  await chain.start();
  const write = store.write.bind(store);
  store.write = () => Promise.reject(new ServiceError('service_unavailable', 'may or may not have landed'));
  await t.throwsAsync(chain.emit()); // did not land
  store.write = write;
  const other = new PulseChain(store, identity, 3_600_000); // a second process: reads the chain, publishes 1
  t.teardown(() => other.stop());
  await other.start();
  await t.throwsAsync(chain.emit(), { message: /another process extends this node's pulse chain/ });
  t.throws(() => chain.current(), { message: /another process/ });
  t.is(other.current().index, 1);
});

test('a transparency log append whose answer was lost: the next append goes after it, at once', async (t) => {
  const { store, identity, loseNextAnswer } = await lossyStore(t);
  const log = new TransparencyLog(store, Kernels.create(), identity, 'events', 'svc/x/events');
  await log.append((n) => Buffer.from(`entry ${n}`));
  loseNextAnswer('tlog_entries');
  await t.throwsAsync(log.append((n) => Buffer.from(`entry ${n}`)), { message: /may or may not have landed/ });
  const next = await log.append((n) => Buffer.from(`entry ${n}`));
  t.is(next.index, 2, 'entry 1 landed; this one follows it');
  t.is(next.size, 3);
});

test('a keyed request whose running mark was written unanswered: sent again, it runs, not 409 for a minute',
  async (t) => {
  const core = await openCore(t);
  const store = core.ctx.store;
  const write = store.write.bind(store);
  let lose = true;
  store.write = async (ops: readonly Op[], opts?: { sync?: boolean }) => {
    await write(ops, opts);
    if (lose && ops.some((o) => o.sub === 'idempotency_running')) {
      lose = false;
      throw new ServiceError('service_unavailable', 'the ledger database went away under a write, which may or may '
        + 'not have landed');
    }
  };
  const args = { service: 'get-pulse', machine_id: 'lost-mark', bits: 64, idempotency_key: 'k-lost' };
  const quote = () => core.handle('QUOTE', args, undefined, 'gateway', '127.0.0.1');
  await t.throwsAsync(quote(), { message: /may or may not have landed/ });
  const q = await quote(); // the mark left by this process's own failed request is taken over
  t.regex(q.quote_id as string, /^q/);
  t.true((await quote()).idempotent_replayed as boolean, 'and the key replays as any other');
});

function sha256(hex: string): string {
  return createHash('sha256').update(Buffer.from(hex, 'hex')).digest('hex');
}
