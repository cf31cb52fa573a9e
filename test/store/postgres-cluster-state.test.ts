// The state one process keeps for itself, on two nodes sharing one PostgreSQL database (docs/scale-out.md
// "State shared between nodes"): in-process core contexts, each on its own PgStore, data dir and
// node key (the quote key shared, as a cluster shares it), with one clock the test moves by hand. The
// store's compare-and-set guards; leases (one holder at a time); an invoice amount never held by two
// invoices; a deposit credited once and claimed once; one sweeper per round, and no release twice.
// Over the wire (idempotency keys, receipts over HTTP): test/store/postgres-cluster-svcd.test.ts.
import test, { type ExecutionContext } from 'ava';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_AMOUNT_HOLD_MS, type Config } from '../../src/core/config.ts';
import { RAILS } from '../../src/core/rails.ts';
import type { CoreContext } from '../../src/core/context.ts';
import { claimDeposit, loadDeposit, recordDeposit, type Deposit } from '../../src/core/deposits.ts';
import {
  fundAccount, loadInvoice, settleInvoice, type InvoiceRecord,
} from '../../src/core/invoices.ts';
import { getMachine, newToken, rotateOps } from '../../src/core/machines.ts';
import { Lease } from '../../src/core/leases.ts';
import { Ledger } from '../../src/core/ledger.ts';
import { NodeIdentity } from '../../src/core/node-identity.ts';
import { PulseChain } from '../../src/core/pulse-chain.ts';
import { acceptQuote, createQuote, sweepExpired } from '../../src/core/quotes.ts';
import { sweepLease, sweepRound } from '../../src/core/sweeps.ts';
import { TransparencyLog } from '../../src/core/tlog.ts';
import { Kernels } from '../../src/kernels/index.ts';
import { commandSpec } from '../../src/protocol/registry.ts';
import { DEFAULT_RATES } from '../../src/protocol/rate-limit.ts';
import { validateArgs } from '../../src/protocol/validate.ts';
import { key } from '../../src/store/key-codec.ts';
import { PgStore } from '../../src/store/pg-store.ts';
import { create, delIf, isStoreConflict, put, replace } from '../../src/store/store.ts';
import { ManualClock, openCore } from '../support/core-fixture.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile, twoStores } from '../support/postgres.ts';
import { txRef } from '../support/references.ts';

const postgres = postgresForFile(test);
const TRON = { network: 'TRON', asset: 'USDT' };

/** One node: a context on its own store and data dir; `quoteKeyFrom` a data dir whose quote key it shares. */
async function node(
  t: ExecutionContext, url: string, clock: ManualClock, over: Partial<Config> = {}, quoteKeyFrom?: string,
): Promise<CoreContext> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cluster-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  if (quoteKeyFrom) copyFileSync(join(quoteKeyFrom, 'quote-key.bin'), join(dir, 'quote-key.bin'));
  const store = await PgStore.open(url, { poolSize: 4 });
  t.teardown(() => store.close());
  const identity = NodeIdentity.loadOrCreate(dir);
  const kernels = Kernels.create();
  const config = {
    dataDir: dir, store: url, rails: RAILS.map((r) => ({ ...r, address: `addr-${r.rail}` })),
    invoiceTtlMs: 60_000, maxOpenInvoices: 3, idempotencyTtlMs: 60_000, pulsePeriodMs: 60_000,
    sweepIntervalMs: 1000, rates: DEFAULT_RATES, ...over,
  } as Config;
  return {
    store, ledger: new Ledger(store), identity, kernels, pool: undefined as unknown as CoreContext['pool'],
    chain: new PulseChain(store, identity, config.pulsePeriodMs, clock.now),
    logs: {
      timestamps: new TransparencyLog(store, kernels, identity, 'timestamps', `svc/${identity.nodeId}/timestamps`),
      events: new TransparencyLog(store, kernels, identity, 'machine-events', `svc/${identity.nodeId}/machine-events`),
    },
    config, edgeFingerprint: 'test', now: clock.now,
  };
}

/** Two nodes on one fresh database, sharing the quote key. */
async function twoNodes(t: ExecutionContext, over: Partial<Config> = {}) {
  const url = await (await postgres()).freshDatabase();
  const clock = new ManualClock();
  const a = await node(t, url, clock, over);
  const b = await node(t, url, clock, over, a.config.dataDir);
  return { a, b, clock, url };
}

async function ledgerHolds(t: ExecutionContext, ctx: CoreContext) {
  const check = await ctx.ledger.verify();
  t.true(check.ok, check.problems.join('; '));
}

const codeOf = (r: PromiseSettledResult<unknown>) => (r.status === 'fulfilled'
  ? 'ok' : String((r.reason as { code?: unknown }).code ?? r.reason));

/** A machine credited through an invoice settled by the operator; its token. */
async function funded(ctx: CoreContext, machine: string, units = 5): Promise<string> {
  const args = { machine_id: machine, units, network: 'Base', asset: 'USDC' };
  const { invoice, machine_token } = await fundAccount(ctx, args, undefined);
  await settleInvoice(ctx, invoice.invoice_id, txRef(`ref-${machine}`, invoice.rail));
  return machine_token!;
}

// --- the store's guards and leases ------------------------------------------------------------------

testNeeding(test, 'guards: a compare-and-set or compare-and-delete whose record changed refuses the whole batch',
  POSTGRES, async (t) => {
  const url = await (await postgres()).freshDatabase();
  const [one, two] = await twoStores(t, url);
  await one.write([put('leases', 'x', { holder: 'a', n: 1 })]);
  const seen = (await one.get('leases', 'x'))!;
  await two.write([replace('leases', 'x', { holder: 'b', n: 2 }, seen)]);
  const stale = [put('meta', 'side', { v: 1 }), replace('leases', 'x', { holder: 'a', n: 3 }, seen)];
  const e = await t.throwsAsync(one.write(stale));
  t.true(isStoreConflict(e), String(e));
  t.is(await one.get('meta', 'side'), undefined, 'nothing of the refused batch landed');
  t.deepEqual(await one.get('leases', 'x'), { holder: 'b', n: 2 });
  await t.throwsAsync(one.write([delIf('leases', 'x', seen)]), { message: /changed under this write/ });
  t.truthy(await one.get('leases', 'x'), 'a compare-and-delete of a changed record deletes nothing');
  await t.throwsAsync(one.write([replace('leases', 'gone', { v: 1 }, { v: 0 })]), { message: /changed under/ },
    'a compare-and-set of an absent record is refused');
  await one.write([delIf('leases', 'x', { holder: 'b', n: 2 })], { sync: false });
  t.is(await one.get('leases', 'x'), undefined);
  // many writers comparing one value at once: exactly one lands
  await one.write([put('leases', 'race', { n: 0 })]);
  const base = (await one.get('leases', 'race'))!;
  const runs = await Promise.allSettled(Array.from({ length: 12 }, (_, i) =>
    (i % 2 ? two : one).write([replace('leases', 'race', { n: i + 1 }, base), create('journal', `race!${i}`, {})])));
  t.is(runs.filter((r) => r.status === 'fulfilled').length, 1, runs.map(codeOf).join(' '));
  t.true(runs.every((r) => r.status === 'fulfilled' || isStoreConflict(r.reason)));
  let journal = 0;
  for await (const _ of one.keys('journal', { gte: 'race!', lt: 'race~' })) journal++;
  t.is(journal, 1, 'the winner\'s other ops landed, the losers\' did not');
});

testNeeding(test, 'leases: one holder at a time across nodes; renewed by its holder, taken over once it expires',
  POSTGRES, async (t) => {
  const { a, b, clock } = await twoNodes(t);
  const lease = (ctx: CoreContext, holder: string) =>
    new Lease(ctx.store, 'duty', { holder, nodeId: ctx.identity.nodeId, ttlMs: 10_000, now: clock.now });
  const [la, lb] = [lease(a, 'node-a'), lease(b, 'node-b')];
  // many takers at once, from both stores: one holds
  const takers = Array.from({ length: 10 }, (_, i) => lease(i % 2 ? b : a, `taker-${i}`));
  const held = await Promise.all(takers.map((l) => l.hold()));
  t.is(held.filter(Boolean).length, 1, held.join(' '));
  const winner = takers[held.indexOf(true)]!;
  t.false(await la.hold());
  clock.advance(9_999);
  t.true(await winner.hold(), 'renewed by its holder');
  clock.advance(9_999);
  t.false(await la.hold(), 'the renewal holds it off');
  t.false(await lb.hold());
  clock.advance(10_001);
  const [ra, rb] = await Promise.all([la.hold(), lb.hold()]);
  t.is(Number(ra) + Number(rb), 1, 'expired: one of the two takes it over');
  const [holder, other] = ra ? [la, lb] : [lb, la];
  t.false(await winner.hold(), 'the old holder lost it');
  await other.release();
  t.false(await other.hold(), 'a release by a non-holder does nothing');
  await holder.release();
  t.true(await other.hold(), 'released: taken at once');
});

// --- invoice amounts --------------------------------------------------------------------------------

testNeeding(test, 'invoice amounts: two nodes creating invoices at once never share an amount on a rail',
  POSTGRES, async (t) => {
  // one amount per rail and units: the two nodes' picks collide every time
  const { a, b, clock } = await twoNodes(t, { invoiceSuffixMax: 1 });
  const fund = (ctx: CoreContext, m: string) => fundAccount(ctx, { machine_id: m, units: 1, ...TRON }, undefined);
  for (let round = 0; round < 3; round++) {
    const runs = await Promise.allSettled([fund(a, `ma-${round}`), fund(b, `mb-${round}`)]);
    t.deepEqual(runs.map(codeOf).sort(), ['busy', 'ok'], `round ${round}: one holds the amount, the other is busy`);
    const inv = (runs.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<{ invoice: InvoiceRecord }>)
      .value.invoice;
    t.is(inv.amount_due, '1000001');
    t.is((await a.store.get('invoice_amounts', key('USDT_TRON', inv.amount_due)))?.invoice_id, inv.invoice_id);
    t.is((await b.store.get('invoice_amounts', key('USDT_TRON', inv.amount_due)))?.invoice_id, inv.invoice_id);
    // while it is open, nobody else gets the amount
    const again = await Promise.allSettled([fund(a, `xa-${round}`), fund(b, `xb-${round}`)]);
    t.deepEqual(again.map(codeOf), ['busy', 'busy']);
    // expired and past its hold, its amount is taken over by exactly one of two nodes (compare-and-set)
    clock.advance(60_000 + DEFAULT_AMOUNT_HOLD_MS);
  }
  // another units value is another amount: both nodes, different amounts, both succeed
  const [x, y] = await Promise.all([
    fundAccount(a, { machine_id: 'm-2', units: 2, ...TRON }, undefined),
    fundAccount(b, { machine_id: 'm-3', units: 3, ...TRON }, undefined),
  ]);
  t.not(x.invoice.amount_due, y.invoice.amount_due);
});

testNeeding(test, 'invoice amounts: many invoices across two nodes at once, a narrow range, no amount twice',
  POSTGRES, async (t) => {
  const { a, b } = await twoNodes(t, { invoiceSuffixMax: 12 });
  const runs = await Promise.allSettled(Array.from({ length: 10 }, (_, i) =>
    fundAccount(i % 2 ? b : a, { machine_id: `m-${i}`, units: 1, ...TRON }, undefined)));
  const made = runs.filter((r) => r.status === 'fulfilled')
    .map((r) => (r as PromiseFulfilledResult<{ invoice: InvoiceRecord }>).value.invoice);
  t.true(runs.every((r) => r.status === 'fulfilled' || codeOf(r) === 'busy'), runs.map(codeOf).join(' '));
  t.true(made.length >= 5, `${made.length} of 10 made`);
  t.is(new Set(made.map((i) => i.amount_due)).size, made.length, made.map((i) => i.amount_due).join(' '));
  for (const inv of made) {
    t.is((await a.store.get('invoice_amounts', key('USDT_TRON', inv.amount_due)))?.invoice_id, inv.invoice_id);
  }
});

// --- the machine record ----------------------------------------------------------------------------

testNeeding(test, 'machines: two nodes claiming one new machine at once: one claim, one token; the other caller '
  + 'is refused (it holds no token of this machine)', POSTGRES, async (t) => {
  const { a, b } = await twoNodes(t);
  for (let round = 0; round < 5; round++) {
    const m = `m-claim-${round}`;
    const runs = await Promise.allSettled([a, b].map((ctx) =>
      fundAccount(ctx, { machine_id: m, units: 1, network: 'Base', asset: 'USDC' }, undefined)));
    t.deepEqual(runs.map(codeOf).sort(), ['ok', 'unauthorized'], `round ${round}`);
    const won = (runs.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<{ machine_token?: string }>)
      .value;
    const rec = await getMachine(a.store, m);
    t.is(rec?.token_sha256, createHash('sha256').update(won.machine_token!).digest('hex'), 'the token handed out');
    t.is(Object.keys(rec?.open_invoices ?? {}).length, 1);
  }
});

testNeeding(test, 'machines: the open-invoice cap holds across nodes: invoices created on two nodes at once never '
  + 'pass it', POSTGRES, async (t) => {
  const { a, b } = await twoNodes(t, { maxOpenInvoices: 3 });
  const token = await funded(a, 'm-cap', 1); // settled: it holds no open invoice
  const fund = (ctx: CoreContext) => fundAccount(ctx, { machine_id: 'm-cap', units: 1, ...TRON }, token);
  const runs = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => fund(i % 2 ? b : a)));
  const codes = runs.map(codeOf);
  t.is(codes.filter((c) => c === 'ok').length, 3, codes.join(' '));
  t.true(codes.every((c) => c === 'ok' || c === 'too_many_open_invoices' || c === 'busy'), codes.join(' '));
  t.is(Object.keys((await getMachine(b.store, 'm-cap'))?.open_invoices ?? {}).length, 3, 'as the record says');
  await ledgerHolds(t, a);
});

testNeeding(test, 'machines: a token rotation and an invoice on another node at once: neither undoes the other',
  POSTGRES, async (t) => {
  const { a, b, clock } = await twoNodes(t, { maxOpenInvoices: 10 });
  let current = await funded(a, 'm-rot', 1);
  let open = 0;
  for (let round = 0; round < 6; round++) {
    const next = newToken();
    clock.advance(1000);
    const rotate = a.ledger.withMachine('m-rot', async () => {
      const rec = await getMachine(a.store, 'm-rot');
      await a.store.write(rotateOps('m-rot', rec!, next, clock.now()));
    });
    const invoice = fundAccount(b, { machine_id: 'm-rot', units: 1, network: 'Base', asset: 'USDC' }, current);
    const [rotated, funded] = await Promise.allSettled([rotate, invoice]);
    t.is(rotated!.status, 'fulfilled', `round ${round}: the rotation lands`);
    if (funded!.status === 'fulfilled') open++;
    else t.is(codeOf(funded!), 'unauthorized', 'refused only when the rotation came first');
    const rec = await getMachine(b.store, 'm-rot');
    t.is(rec?.token_sha256, createHash('sha256').update(next).digest('hex'), 'the rotated token is current');
    t.is(Object.keys(rec?.open_invoices ?? {}).length, open, 'every invoice that landed is in the record');
    current = next;
  }
});

// --- chain deposits ---------------------------------------------------------------------------------

const transfer = (amount: string, tx = '0x' + 'ab'.repeat(32)): Deposit => ({
  rail: 'USDT_TRON', tx_id: tx, log_index: 3, amount, from: 'T-payer', to: 'addr-tron', block_number: 100,
  block_hash: '0x' + 'cd'.repeat(32), confirmations: 20,
});

testNeeding(test, 'deposits: one transfer seen by both nodes\' watchers at once credits its invoice once',
  POSTGRES, async (t) => {
  const { a, b } = await twoNodes(t);
  const { invoice } = await fundAccount(a, { machine_id: 'm-dep', units: 2, ...TRON }, undefined);
  const d = transfer(invoice.amount_due);
  const seen = await Promise.all(Array.from({ length: 6 }, (_, i) => recordDeposit(i % 2 ? b : a, d)));
  t.is(seen.filter((s) => s.fresh).length, 1, 'recorded fresh once');
  t.true(seen.every((s) => s.deposit.state === 'credited' && s.deposit.invoice_id === invoice.invoice_id));
  const inv = await loadInvoice(b, invoice.invoice_id);
  t.is(inv.state, 'settled');
  const journal = await b.ledger.journal('m-dep');
  t.deepEqual(journal.map((j) => j.kind), ['credit'], 'credited once');
  t.is((await b.ledger.account('m-dep')).available, BigInt(invoice.credit_units));
  // a transfer no invoice holds: recorded once, queued once
  const stray = transfer('7000123', '0x' + 'ef'.repeat(32));
  const strays = await Promise.all(Array.from({ length: 6 }, (_, i) => recordDeposit(i % 2 ? b : a, stray)));
  t.is(strays.filter((s) => s.fresh).length, 1);
  let queued = 0;
  for await (const _ of a.store.keys('unmatched_deposits')) queued++;
  t.is(queued, 1);
  await ledgerHolds(t, a);
});

testNeeding(test, 'deposits: one unmatched deposit claimed on two nodes at once, to two invoices, credits once',
  POSTGRES, async (t) => {
  const { a, b } = await twoNodes(t);
  const { deposit } = await recordDeposit(a, transfer('5000777'));
  t.is(deposit.state, 'unmatched');
  const i1 = (await fundAccount(a, { machine_id: 'm-c1', units: 5, ...TRON }, undefined)).invoice;
  const i2 = (await fundAccount(b, { machine_id: 'm-c2', units: 5, ...TRON }, undefined)).invoice;
  const runs = await Promise.allSettled([
    claimDeposit(a, deposit.deposit_id, i1.invoice_id), claimDeposit(b, deposit.deposit_id, i2.invoice_id),
  ]);
  t.deepEqual(runs.map(codeOf).sort(), ['deposit_already_credited', 'ok'], runs.map(codeOf).join(' '));
  const credits = [...await a.ledger.journal('m-c1'), ...await a.ledger.journal('m-c2')];
  t.is(credits.length, 1, 'one credit across both machines');
  const dep = (await loadDeposit(b, deposit.deposit_id))!;
  t.is(dep.state, 'claimed');
  t.is(dep.invoice_id, credits[0]!.ref.invoice_id);
  await ledgerHolds(t, a);
});

// --- expiry sweeps ----------------------------------------------------------------------------------

testNeeding(test, 'sweeps: one node sweeps per round, and expired reservations are released once across both',
  POSTGRES, async (t) => {
  const { a, b, clock } = await twoNodes(t);
  await funded(a, 'm-s', 50);
  const quotes = [];
  for (let i = 0; i < 6; i++) {
    const args = { service: 'submit-id', machine_id: 'm-s', bytes: 3, quote_ttl_ms: 5000 };
    validateArgs(commandSpec('QUOTE')!, args);
    const q = createQuote(i % 2 ? b : a, args);
    await acceptQuote(i % 2 ? a : b, q.quote_id, 'm-s');
    quotes.push(q);
  }
  const reserved = (await a.ledger.account('m-s')).reserved;
  t.true(reserved > 0n);
  const [la, lb] = [sweepLease(a)!, sweepLease(b)!];
  t.truthy(la, 'a shared store sweeps under a lease');
  clock.advance(5000);
  const rounds = await Promise.all([sweepRound(a, la), sweepRound(b, lb)]);
  t.deepEqual(rounds.map((r) => r.swept).sort(), [false, true], 'one node swept this round');
  t.is(rounds[0]!.quotes + rounds[1]!.quotes, 6);
  const [holder, idle] = rounds[0]!.swept
    ? [{ ctx: a, l: la }, { ctx: b, l: lb }]
    : [{ ctx: b, l: lb }, { ctx: a, l: la }];
  t.false((await sweepRound(idle.ctx, idle.l)).swept, 'the other skips the next round too');
  t.true((await sweepRound(holder.ctx, holder.l)).swept);
  // the holder stops: the other takes over once the lease runs out
  clock.advance(10_000);
  t.true((await sweepRound(idle.ctx, idle.l)).swept);
  t.false((await sweepRound(holder.ctx, holder.l)).swept);
  const acct = await b.ledger.account('m-s');
  t.is(acct.reserved, 0n);
  const kinds = (await b.ledger.journal('m-s')).map((j) => j.kind);
  t.is(kinds.filter((k) => k === 'release').length, 6, 'each reservation released once');
  await ledgerHolds(t, a);
});

testNeeding(test, 'sweeps: two nodes sweeping at once without a lease still release each reservation once',
  POSTGRES, async (t) => {
  const { a, b, clock } = await twoNodes(t);
  await funded(a, 'm-r', 50);
  for (let i = 0; i < 5; i++) {
    const args = { service: 'submit-id', machine_id: 'm-r', bytes: 3, quote_ttl_ms: 5000 };
    validateArgs(commandSpec('QUOTE')!, args);
    await acceptQuote(a, createQuote(a, args).quote_id, 'm-r');
  }
  clock.advance(5000);
  const released = await Promise.allSettled([sweepExpired(a), sweepExpired(b), sweepExpired(a), sweepExpired(b)]);
  const n = released.reduce((s, r) => s + (r.status === 'fulfilled' ? r.value : 0), 0);
  t.is(n, 5, released.map(codeOf).join(' '));
  t.is((await a.ledger.account('m-r')).reserved, 0n);
  await ledgerHolds(t, a);
});

// --- one process per node key -----------------------------------------------------------------------

testNeeding(test, 'session locks: one open store holds a name; closing it hands the name over', POSTGRES, async (t) => {
  const url = await (await postgres()).freshDatabase();
  const [one, two] = await Promise.all([PgStore.open(url, { poolSize: 1 }), PgStore.open(url, { poolSize: 1 })]);
  t.teardown(() => two.close());
  t.true(await one.lockSession('node:x'));
  t.false(await two.lockSession('node:x'));
  t.true(await two.lockSession('node:y'), 'another name is another lock');
  await one.close();
  t.true(await two.lockSession('node:x'));
});

testNeeding(test, 'a second core with the same node key on one database stops at start, naming why', POSTGRES,
  async (t) => {
  const url = await (await postgres()).freshDatabase();
  const env = { SVC_STORE: url, SVC_KERNEL_THREADS: '1' };
  const first = await openCore(t, env);
  const dir = mkdtempSync(join(tmpdir(), 'svc-cluster-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of ['node-ed25519.pem', 'quote-key.bin', 'result-key.bin', 'bct-key.bin']) {
    copyFileSync(join(first.ctx.config.dataDir, f), join(dir, f));
  }
  await t.throwsAsync(openCore(t, env, { dir }), { message: /another svcd process runs node svc-node-/ });
  await first.close();
  const again = await openCore(t, env, { dir });
  t.is(again.ctx.identity.nodeId, first.ctx.identity.nodeId, 'once the first stopped, the node starts');
});

testNeeding(test, 'a node started again clears the idempotency marks its killed process left; others\' stay',
  POSTGRES, async (t) => {
  const url = await (await postgres()).freshDatabase();
  const env = { SVC_STORE: url, SVC_KERNEL_THREADS: '1' };
  const dir = mkdtempSync(join(tmpdir(), 'svc-cluster-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const first = await openCore(t, env, { dir });
  const nodeId = first.ctx.identity.nodeId;
  await first.close();
  // what kill -9 mid-request leaves: marks of this node's earlier process (another instance id), live for a
  // minute more; beside them a live mark of another node, which must keep its key
  const far = Date.now() + 60_000;
  const store = await PgStore.open(url, { poolSize: 1 });
  await store.write([
    put('idempotency_running', 'k-dead-1', { holder: `${nodeId}#dead0001`, expires_ms: far }),
    put('idempotency_running', 'k-dead-2', { holder: `${nodeId}#dead0002`, expires_ms: far }),
    put('idempotency_running', 'k-other', { holder: 'svc-node-other#live0001', expires_ms: far }),
  ]);
  await store.close();
  const again = await openCore(t, env, { dir });
  t.is(await again.ctx.store.get('idempotency_running', 'k-dead-1'), undefined);
  t.is(await again.ctx.store.get('idempotency_running', 'k-dead-2'), undefined);
  t.truthy(await again.ctx.store.get('idempotency_running', 'k-other'), 'another node\'s running key is its own');
});
