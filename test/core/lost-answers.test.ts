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

/**
 * `store`'s writes, steered: loseNextAnswer(sub) makes the next write touching that sublevel land, then fail
 * as a connection broken after the commit would; refuseNext() makes the next write fail before it lands.
 */
function steer(store: Store) {
  const write = store.write.bind(store);
  let lose: string | null = null;
  let refuse = false;
  store.write = async (ops: readonly Op[], opts?: { sync?: boolean }) => {
    if (refuse) {
      refuse = false;
      throw new ServiceError('service_unavailable', 'the ledger database cannot be reached');
    }
    await write(ops, opts);
    if (lose && ops.some((o) => o.sub === lose)) {
      lose = null;
      const what = 'the ledger database went away under a write, which may or may not have landed';
      throw new ServiceError('service_unavailable', what);
    }
  };
  return { loseNextAnswer: (sub: string) => { lose = sub; }, refuseNext: () => { refuse = true; } };
}

/** A LevelDB store, steered, with a node identity beside it. */
async function lossyStore(t: { teardown(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-lost-'));
  const store = await LevelStore.open(join(dir, 'data'));
  t.teardown(async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); });
  return { store: store as Store, identity: NodeIdentity.loadOrCreate(dir), ...steer(store) };
}

/** A pulse chain on the store, started (pulse 0), stopped at teardown; hour-long periods (no timer fires). */
async function startedChain(t: { teardown(fn: () => unknown): void }, store: Store, identity: NodeIdentity) {
  const chain = new PulseChain(store, identity, 3_600_000);
  t.teardown(() => chain.stop());
  await chain.start();
  return chain;
}

test('a pulse whose write landed but whose answer was lost: the chain goes on from it, unforked', async (t) => {
  const { store, identity, loseNextAnswer } = await lossyStore(t);
  const chain = await startedChain(t, store, identity);
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
  const { store, identity, refuseNext } = await lossyStore(t);
  const chain = await startedChain(t, store, identity);
  refuseNext();
  await t.throwsAsync(chain.emit());
  const next = await chain.emit();
  t.is(next.pulse.index, 1);
  t.is((await chain.get(1))?.pulse.prev_output, (await chain.get(0))?.output_hash);
});

test('a pulse that failed unanswered, whose index another process with the node key then filled: never taken '
  + 'for this one\'s; this chain stops', async (t) => {
  const { store, identity, refuseNext } = await lossyStore(t);
  const chain = await startedChain(t, store, identity);
  refuseNext();
  await t.throwsAsync(chain.emit()); // did not land
  const other = await startedChain(t, store, identity); // a second process: reads the chain, publishes 1
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
  steer(core.ctx.store).loseNextAnswer('idempotency_running');
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
