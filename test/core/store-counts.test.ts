// What one request costs the store, counted through the store itself: a free
// quote reads and writes nothing; a paid GET_PULSE flow is two synced batches (accept, execute) and
// no point reads once the machine is warm; concurrent flows share synced flushes (group commit); an
// accepted quote that expires is released and its record deleted, and its id still answers 409.
import test from 'ava';
import type { Core } from '../../src/core/core.ts';
import { ManualClock, fundCore, openCore } from '../support/core-fixture.ts';
import type { StoreStats } from '../../src/store/store.ts';

/** A claimed machine with `units` svcC credited; returns its token. */
const funded = fundCore;

const delta = (after: StoreStats, before: StoreStats) => ({
  reads: after.reads - before.reads,
  writes: after.writes - before.writes,
  syncedFlushes: after.syncedFlushes - before.syncedFlushes,
  unsyncedFlushes: after.unsyncedFlushes - before.unsyncedFlushes,
});

async function flow(core: Core, machine: string, token: string): Promise<Record<string, unknown>> {
  const auth = { token };
  const q = await core.handle('QUOTE', { service: 'get-pulse', machine_id: machine, bits: 64 }, undefined, 'gateway');
  await core.handle('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: machine }, auth, 'gateway');
  return core.handle('GET_PULSE', { quote_id: q.quote_id, machine_id: machine }, auth, 'gateway');
}

test('a free quote reads and writes nothing; with an idempotency key, one unsynced write', async (t) => {
  const core = await openCore(t);
  const before = { ...core.ctx.store.stats };
  for (let i = 0; i < 50; i++) {
    await core.handle('QUOTE', { service: 'get-pulse', machine_id: `free-${i}`, bits: 256 }, undefined, 'edge', '::1');
  }
  t.deepEqual(delta(core.ctx.store.stats, before), { reads: 0, writes: 0, syncedFlushes: 0, unsyncedFlushes: 0 });
  const keyed = { ...core.ctx.store.stats };
  const args = { service: 'make-bct', machine_id: 'free-k', plain_hex: '00ff', idempotency_key: 'k1' };
  const q1 = await core.handle('QUOTE', args, undefined, 'edge', '::1');
  const q2 = await core.handle('QUOTE', args, undefined, 'edge', '::1');
  t.is(q2.quote_id, q1.quote_id);
  t.is(q2.idempotent_replayed, true);
  const d = delta(core.ctx.store.stats, keyed);
  t.is(d.syncedFlushes, 0, 'an issued quote may be lost in a crash: nothing about it is synced');
  t.is(d.unsyncedFlushes, 1);
});

test('a warm paid GET_PULSE flow: two synced batches and no point reads', async (t) => {
  const core = await openCore(t);
  const token = await funded(core, 'counted');
  await flow(core, 'counted', token); // warms the caches: machine, account
  const before = { ...core.ctx.store.stats };
  const result = await flow(core, 'counted', token);
  t.is(typeof result.receipt_id, 'string');
  const d = delta(core.ctx.store.stats, before);
  t.is(d.writes, 2, 'accept (reserve + quote record) and execute (capture + receipt + result)');
  t.is(d.syncedFlushes, 2);
  t.true(d.reads <= 1, `point reads per flow: ${d.reads} (the accepted quote's first lookup at most)`);
});

test('concurrent flows of 16 machines share synced flushes (group commit); balances exact', async (t) => {
  const core = await openCore(t);
  const machines = Array.from({ length: 16 }, (_, i) => `group-${i}`);
  const tokens = await Promise.all(machines.map((m) => funded(core, m)));
  const before = { ...core.ctx.store.stats };
  await Promise.all(machines.map((m, i) => flow(core, m, tokens[i]!)));
  const d = delta(core.ctx.store.stats, before);
  t.is(d.writes, 32);
  t.true(d.syncedFlushes < 32, `${d.syncedFlushes} synced flushes for 32 batches`);
  for (const [i, m] of machines.entries()) {
    const b = await core.handle('BALANCE', { machine_id: m }, { token: tokens[i]! }, 'gateway');
    t.is(b.reserved_units, '0');
  }
  t.true((await core.ctx.ledger.verify()).ok);
});

test('an accepted quote that expires is released and deleted; its id still answers quote_expired', async (t) => {
  const clock = new ManualClock();
  const core = await openCore(t, {}, { clock });
  const token = await funded(core, 'expiring');
  const auth = { token };
  const q = await core.handle('QUOTE', { service: 'get-pulse', machine_id: 'expiring', bits: 64, quote_ttl_ms: 1000 },
    undefined, 'gateway');
  await core.handle('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: 'expiring' }, auth, 'gateway');
  t.truthy(await core.ctx.store.get('quotes', q.quote_id as string));
  clock.advance(999);
  t.truthy(await core.ctx.store.get('quotes', q.quote_id as string), 'still there 1 ms before its expiry');
  clock.advance(1);
  const err = await core.handle('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: 'expiring' }, auth, 'gateway')
    .catch((e: { code: string; details?: unknown }) => e);
  t.is((err as { code: string }).code, 'quote_expired');
  t.is(await core.ctx.store.get('quotes', q.quote_id as string), undefined, 'the record is gone');
  const again = await core.handle('GET_PULSE', { quote_id: q.quote_id, machine_id: 'expiring' }, auth, 'gateway')
    .catch((e: { code: string }) => e);
  t.is((again as { code: string }).code, 'quote_expired', 'the id alone says it expired');
  const b = await core.handle('BALANCE', { machine_id: 'expiring' }, auth, 'gateway');
  t.is(b.reserved_units, '0', 'the reservation was released');
  t.true((await core.ctx.ledger.verify()).ok);
});

test('quote ids: forged, altered or another machine\'s are refused (404 / 409)', async (t) => {
  const core = await openCore(t);
  const token = await funded(core, 'owner');
  const other = await funded(core, 'other');
  const q = await core.handle('QUOTE', { service: 'get-pulse', machine_id: 'owner', bits: 64 }, undefined, 'gateway');
  const id = q.quote_id as string;
  t.regex(id, /^q1[A-Za-z0-9_-]{79}$/);
  const codeOf = (quoteId: string, machine: string, tok: string) => core
    .handle('ACCEPT_QUOTE', { quote_id: quoteId, machine_id: machine }, { token: tok }, 'gateway')
    .then(() => 'ok', (e: { code: string }) => e.code);
  t.is(await codeOf(id, 'other', other), 'quote_wrong_machine');
  const flipped = id.slice(0, 20) + (id[20] === 'A' ? 'B' : 'A') + id.slice(21);
  t.is(await codeOf(flipped, 'owner', token), 'not_found', 'one changed character breaks the MAC');
  t.is(await codeOf(`${id}A`, 'owner', token), 'not_found');
  t.is(await codeOf('q_legacy-or-made-up', 'owner', token), 'not_found');
  t.is(await codeOf(id, 'owner', token), 'ok');
  t.is(await codeOf(id, 'owner', token), 'quote_not_issued');
});

test('an idempotent ACCEPT_QUOTE, execution or FUND_ACCOUNT records its reply in the batch of its effects',
  async (t) => {
  const core = await openCore(t);
  const token = await funded(core, 'keyed');
  const auth = { token };
  const q = await core.handle('QUOTE', { service: 'get-pulse', machine_id: 'keyed', bits: 64 }, undefined, 'gateway');
  const accept = { quote_id: q.quote_id, machine_id: 'keyed', idempotency_key: 'accept-1' };
  let before = { ...core.ctx.store.stats };
  const first = await core.handle('ACCEPT_QUOTE', accept, auth, 'gateway');
  t.is(delta(core.ctx.store.stats, before).writes, 1, 'one atomic batch: reservation, quote and reply record');
  const replay = await core.handle('ACCEPT_QUOTE', accept, auth, 'gateway');
  t.is(replay.idempotent_replayed, true);
  t.is(replay.quote_id, first.quote_id);
  const run = { quote_id: q.quote_id, machine_id: 'keyed', bits: 64, idempotency_key: 'exec-1' };
  before = { ...core.ctx.store.stats };
  const executed = await core.handle('GET_PULSE', run, auth, 'gateway');
  t.is(delta(core.ctx.store.stats, before).writes, 1, 'one atomic batch: capture, receipt, execution and reply record');
  const rerun = await core.handle('GET_PULSE', run, auth, 'gateway');
  t.is(rerun.idempotent_replayed, true);
  t.is(rerun.receipt_id, executed.receipt_id);
  const other = await core.handle('GET_PULSE', { ...run, idempotency_key: 'exec-2' }, auth, 'gateway');
  t.is(other.receipt_id, executed.receipt_id, 'another key for the executed quote: its result, not a second run');
  const fund = { machine_id: 'keyed', units: 1, network: 'Base', asset: 'USDC', idempotency_key: 'fund-1' };
  before = { ...core.ctx.store.stats };
  const inv = await core.handle('FUND_ACCOUNT', fund, auth, 'gateway');
  t.is(delta(core.ctx.store.stats, before).writes, 1, 'one atomic batch: invoice, amount, machine and reply record');
  t.is((await core.handle('FUND_ACCOUNT', fund, auth, 'gateway')).invoice_id, inv.invoice_id);
  // a claim with a key: the sealed token is in the same batch as the claim
  const claim = { machine_id: 'fresh', units: 1, network: 'Base', asset: 'USDC', idempotency_key: 'claim-1' };
  before = { ...core.ctx.store.stats };
  const claimed = await core.handle('FUND_ACCOUNT', claim, undefined, 'gateway', '127.0.0.1');
  t.is(delta(core.ctx.store.stats, before).writes, 1);
  const lost = await core.handle('FUND_ACCOUNT', claim, undefined, 'gateway', '127.0.0.1');
  t.is(lost.machine_token, claimed.machine_token, 'a lost claim reply is recoverable with its key');
});

test('an id this node did not issue, or issued to another machine, is refused without a read', async (t) => {
  const core = await openCore(t);
  const token = await funded(core, 'ids-a');
  const q = await core.handle('QUOTE', { service: 'get-pulse', machine_id: 'ids-b', bits: 64 }, undefined, 'gateway');
  const forged = `${(q.quote_id as string).slice(0, -4)}AAAA`;
  const before = { ...core.ctx.store.stats };
  const code = (p: Promise<unknown>) => p.then(() => 'ok', (e: { code?: string }) => e.code);
  const accept = (id: string) =>
    core.handle('ACCEPT_QUOTE', { quote_id: id, machine_id: 'ids-a' }, { token }, 'gateway');
  t.is(await code(accept(q.quote_id as string)), 'quote_wrong_machine');
  t.is(await code(accept(forged)), 'quote_wrong_machine', 'the machine hint is checked before the tag');
  t.is(await code(accept(`q1${'A'.repeat(80)}`)), 'not_found');
  t.is(delta(core.ctx.store.stats, before).reads, 0);
});
