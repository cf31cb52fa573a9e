// An in-process core context for guard tests: the real Store (LevelDB in a temp dir), Ledger,
// NodeIdentity, kernels, pulse chain and transparency logs, with a clock the test moves by hand.
// Nothing here is reachable from svcd: expiry is tested at its exact millisecond, never by sleeping.
// And openCore: the whole real Core, configured as svcd configures it, in a temp dir, without svcd.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { loadConfig, type Config } from '../../src/core/config.ts';
import { RAILS } from '../../src/core/rails.ts';
import { Core } from '../../src/core/core.ts';
import type { CoreContext } from '../../src/core/context.ts';
import { Ledger } from '../../src/core/ledger.ts';
import { NodeIdentity } from '../../src/core/node-identity.ts';
import { PulseChain } from '../../src/core/pulse-chain.ts';
import { TransparencyLog } from '../../src/core/tlog.ts';
import { Kernels, KernelPool } from '../../src/kernels/index.ts';
import { DEFAULT_RATES } from '../../src/protocol/rate-limit.ts';
import { PgStore } from '../../src/store/pg-store.ts';
import { Store } from '../../src/store/store.ts';
import { txRef } from './references.ts';

/** A clock that only moves when told to. */
export class ManualClock {
  ms: number;
  constructor(start = Date.UTC(2026, 10, 22, 12, 0, 0)) { this.ms = start; }
  now = (): Date => new Date(this.ms);
  advance(ms: number): void { this.ms += ms; }
  set(ms: number): void { this.ms = ms; }
}

export interface Fixture { ctx: CoreContext; clock: ManualClock; store: Store; identity: NodeIdentity; dir: string }

/**
 * Opens a fresh context for one test; closed and removed at teardown. `pool`: start a real one-thread pool.
 * `postgres`: a PostgreSQL database URL to keep the ledger in (a PgStore), instead of LevelDB in the dir.
 */
export async function coreFixture(
  t: ExecutionContext, over: Partial<Config> = {}, opts: { pool?: boolean; postgres?: string } = {},
): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'guard-'));
  const store = opts.postgres ? await PgStore.open(opts.postgres, { poolSize: 4 }) : await Store.open(dir);
  t.teardown(async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); });
  const identity = NodeIdentity.loadOrCreate(dir);
  const kernels = Kernels.create();
  const clock = new ManualClock();
  const config = {
    dataDir: dir, rails: RAILS.map((r) => ({ ...r, address: `addr-${r.rail}` })),
    invoiceTtlMs: 60_000, maxOpenInvoices: 3, idempotencyTtlMs: 60_000, pulsePeriodMs: 60_000,
    rates: DEFAULT_RATES, watchers: [], ...over,
  } as Config;
  const ctx = {
    store, ledger: new Ledger(store), identity, kernels,
    pool: opts.pool ? new KernelPool({ threads: 1 }) : (undefined as unknown as CoreContext['pool']),
    chain: new PulseChain(store, identity, config.pulsePeriodMs, clock.now),
    logs: {
      timestamps: new TransparencyLog(store, kernels, identity, 'timestamps', 'svc/test/timestamps'),
      events: new TransparencyLog(store, kernels, identity, 'machine-events', 'svc/test/machine-events'),
    },
    config, edgeFingerprint: 'test', now: clock.now,
  } satisfies CoreContext;
  if (opts.pool) t.teardown(() => ctx.pool.close());
  return { ctx, clock, store, identity, dir };
}

export interface OpenCoreOptions {
  /** the clock the core decides time by (default: the wall clock) */
  clock?: ManualClock;
  /** an existing data dir (a restart); default: a fresh temp dir removed at teardown */
  dir?: string;
}

/**
 * Opens the real Core (loadConfig over `env`, as svcd does) on a fresh temp data dir (or `opts.dir`);
 * closed (and a fresh dir removed) at teardown. The sweeper is slowed to once an hour and only errors
 * are logged unless `env` says otherwise. With `opts.clock` every expiry, rate window and pulse time
 * is the test's to move (Core.open's clock option, which svcd never passes).
 */
export async function openCore(
  t: ExecutionContext, env: Record<string, string> = {}, opts: OpenCoreOptions = {},
): Promise<Core> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'svc-core-'));
  if (!opts.dir) t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const core = await Core.open(loadConfig({
    SVC_DATA_DIR: dir, SVC_SWEEP_INTERVAL_MS: '3600000', SVC_LOG_LEVEL: 'error', SVC_PAYMENTS: 'local', ...env,
  }), opts.clock ? { clock: opts.clock.now } : {});
  t.teardown(() => core.close());
  return core;
}

/** A machine funded through the real commands (FUND_ACCOUNT, then SETTLE_INVOICE as the operator); its token. */
export async function fundCore(core: Core, machine: string, units = 5): Promise<string> {
  const inv = await core.handle('FUND_ACCOUNT', { machine_id: machine, units, network: 'Base', asset: 'USDC' },
    undefined, 'gateway', '127.0.0.1');
  const reference = txRef(`ref-${machine}`);
  await core.handle('SETTLE_INVOICE', { invoice_id: inv.invoice_id, reference }, undefined, 'admin');
  return inv.machine_token as string;
}
