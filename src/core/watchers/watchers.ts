// The chain watchers of one core, one per configured rail (SVC_WATCH_<RAIL>_*: EVM for Base, the same
// over TRON's JSON-RPC for TRON, solana.ts for the Solana rails): started after the
// listeners are up, stopped before the store closes, their status published in HEALTH (and so in
// /api/v1/status). None configured: nothing runs and admin settlement is the only source.
import type { CoreContext } from '../context.ts';
import { EvmWatcher } from './evm.ts';
import type { PendingPayment, WatchLog, WatcherStatus } from './poll-loop.ts';
import { SolanaWatcher } from './solana.ts';

/** What every chain family's watcher offers the core. */
interface ChainWatcher {
  readonly rail: string;
  start(): void;
  stop(): Promise<void>;
  status(): WatcherStatus;
  pendingFor(invoiceId: string): PendingPayment | undefined;
}

export class Watchers {
  readonly #list: ChainWatcher[];

  private constructor(list: ChainWatcher[]) {
    this.#list = list;
  }

  static start(ctx: CoreContext, log: WatchLog): Watchers {
    const list = (ctx.config.watchers ?? []).map((cfg): ChainWatcher => (cfg.family === 'solana'
      ? new SolanaWatcher(ctx, cfg, log)
      : new EvmWatcher(ctx, cfg, log)));
    for (const w of list) {
      log.info({ rail: w.rail, ...publicConfig(w.status()) }, 'chain watcher starting');
      w.start();
    }
    return new Watchers(list);
  }

  get size(): number { return this.#list.length; }

  /** Per rail: cursor, head, lag, last error (public facts only). */
  status(): Record<string, WatcherStatus> {
    return Object.fromEntries(this.#list.map((w) => [w.rail, w.status()]));
  }

  /** A payment seen for this invoice above its watcher's trusted head, if any. */
  pendingFor(rail: string, invoiceId: string): PendingPayment | undefined {
    return this.#list.find((w) => w.rail === rail)?.pendingFor(invoiceId);
  }

  async stop(): Promise<void> {
    await Promise.all(this.#list.map((w) => w.stop()));
  }
}

const publicConfig = (s: WatcherStatus) => ({ finality: s.finality, confirmations: s.confirmations });
