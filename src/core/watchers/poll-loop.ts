// What every chain watcher shares (evm.ts, solana.ts): its public status and pending payments, and the
// poll loop — a pass, then the next after pollMs (at once when the pass says there is more), under the
// rail's watcher lease (one node of a shared store watches a rail; the others stand by), and after a
// failed pass an exponential backoff with jitter, the error published without the RPC URL. A family
// supplies its pass(); stop() waits for a pass in flight and releases the lease.
import type { WatchCommon, WatcherConfig } from '../config.ts';
import type { CoreContext } from '../context.ts';
import type { Op } from '../../store/store.ts';
import { leaseFor, type Lease } from '../leases.ts';
import { pendingRescan } from './rescan.ts';

export interface WatchLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A payment seen above the trusted head: shown on INVOICE_STATUS while it waits for finality. */
export interface PendingPayment {
  tx_id: string;
  log_index: number;
  block_number: number;
  confirmations: number;
  /** what it waits for: `finality` tag and blocks on top of it */
  finality: string;
}

/** What /api/v1/status shows of one watcher: public facts only (never the RPC URL). */
export interface WatcherStatus {
  rail: string;
  family: WatcherConfig['family'];
  /**
   * standby: another node of a shared store watches this rail (it holds the rail's watcher lease);
   * behind: the RPC answers, but its trusted head is below the stored cursor (a provider behind, or
   * another fork): nothing new can be credited until it catches up
   */
  state: 'starting' | 'ok' | 'error' | 'behind' | 'stopped' | 'standby';
  finality: string;
  confirmations: number;
  /** EVM, TRON: the node's chain id; Solana: the cluster's genesis hash */
  chain: number | string | null;
  /** the last block (Solana: slot) scanned and recorded */
  cursor: number | null;
  /** the trusted head: the finality tag's block less `confirmations` */
  head: number | null;
  /** the node's latest block */
  tip: number | null;
  lag_blocks: number | null;
  /** when the last pass that succeeded ended (an outage makes it grow old: alert on its age) */
  last_pass_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  errors_in_a_row: number;
  credited: number;
  unmatched: number;
  /** deposits whose block was replaced after they were recorded: the operator looks at them */
  reorged_after_credit: string[];
  /** the last RESCAN this watcher applied since start: from which block (Solana: slot), when */
  rescanned?: { from_block: number; at: string };
  /** Solana: each watched token account and the newest signature read from it */
  accounts?: { address: string; last_signature: string | null }[];
}

/**
 * A rail's watcher lease (shared store): held a while past a few polls, so a long pass keeps it, and a
 * stopped node's rail is taken over by another node within it.
 */
export const watcherLeaseMs = (pollMs: number): number => Math.max(30_000, 3 * pollMs);

/** A message safe to publish: no URL (an RPC URL may carry a provider key), one line, bounded. */
export function publicError(e: unknown, rpcUrl: string): string {
  const err = e as { shortMessage?: unknown; message?: unknown } | null;
  const raw = typeof err?.shortMessage === 'string' ? err.shortMessage : String(err?.message ?? e);
  const causes = errorCauses(e);
  const text = causes.length ? `${raw} (${causes.join('; ')})` : raw;
  return text.split(rpcUrl).join('<rpc>').replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>')
    .replace(/\s+/g, ' ').trim().slice(0, 300);
}

/**
 * What an on-call engineer needs beyond a library's one-line message, from the error and its causes:
 * the HTTP status, the JSON-RPC error code, a timeout, the system error (ECONNREFUSED, ENOTFOUND).
 */
function errorCauses(e: unknown): string[] {
  const out: string[] = [];
  const add = (s: string) => { if (!out.includes(s)) out.push(s); };
  for (let cur = e as Record<string, unknown> | null, depth = 0; cur && depth < 5; depth++) {
    const status = cur.status ?? (cur.context as Record<string, unknown> | undefined)?.statusCode;
    if (typeof status === 'number') add(`HTTP ${status}`);
    if (typeof cur.code === 'number') add(`RPC error ${cur.code}`);
    if (typeof cur.code === 'string' && /^E[A-Z0-9_]+$/.test(cur.code)) add(cur.code);
    if (cur.name === 'TimeoutError' || cur.name === 'AbortError') add('timeout');
    cur = (cur.cause as Record<string, unknown> | undefined) ?? null;
  }
  return out;
}

/** A pass found the RPC's trusted head below the stored cursor: the watcher is `behind`, not ok. */
export class RpcBehind extends Error {
  constructor(head: number, cursor: number) {
    super(`the RPC's trusted head ${head} is below the stored cursor ${cursor}: a provider behind the one used `
      + 'before, or another fork; nothing new is credited until it catches up');
  }
}

export abstract class PollingWatcher {
  protected readonly ctx: CoreContext;
  protected readonly log: WatchLog;
  /** published by status() (a copy); a family's pass updates its fields */
  protected readonly state: WatcherStatus;
  /** payments seen above the trusted head, by invoice id */
  protected pending = new Map<string, PendingPayment>();
  readonly #common: WatchCommon;
  /** one watcher per rail across the nodes of a shared store (always held on a store one process owns) */
  readonly #lease: Lease;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #stopped = false;

  protected constructor(ctx: CoreContext, common: WatchCommon, log: WatchLog, state: WatcherStatus) {
    this.ctx = ctx;
    this.log = log;
    this.state = state;
    this.#common = common;
    this.#lease = leaseFor(ctx, `watcher:${common.rail}`, watcherLeaseMs(common.pollMs));
  }

  /**
   * An operator's RESCAN (rescan.ts) applied to the cursor a pass read: `moved` is the cursor read again from
   * block (Solana: slot) `from`; it is saved with the request's deletion in one batch, shown in the status.
   */
  protected async rescanned<C>(
    cur: C, moved: (from: number) => C, save: (c: C, also: Op[]) => Promise<void>,
  ): Promise<C> {
    const rescan = await pendingRescan(this.ctx, this.#common.rail);
    if (!rescan) return cur;
    const from = rescan.request.from_block;
    const next = moved(from);
    await save(next, [rescan.done]);
    this.state.rescanned = { from_block: from, at: this.ctx.now().toISOString() };
    this.log.info({ rail: this.#common.rail, from }, 'rescan: reading the chain again');
    return next;
  }

  /** One pass: returns true when there is more to scan right away. */
  protected abstract pass(): Promise<boolean>;

  get rail(): string { return this.#common.rail; }

  /** true once stop() was called: a long pass checks it between requests */
  protected get stopped(): boolean { return this.#stopped; }

  abstract status(): WatcherStatus;

  pendingFor(invoiceId: string): PendingPayment | undefined {
    return this.pending.get(invoiceId);
  }

  start(): void {
    this.#schedule(0);
  }

  /** Stops polling; waits for a pass in flight (bounded by the RPC timeout). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running;
    this.state.state = 'stopped';
    await this.#lease.release().catch(() => {}); // another node takes the rail over at once
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#running = this.#tick().finally(() => { this.#running = null; });
    }, ms);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    const cfg = this.#common;
    let next = cfg.pollMs;
    try {
      if (!(await this.#lease.hold())) {
        this.state.state = 'standby';
      } else {
        const more = await this.pass();
        this.state.state = 'ok';
        this.state.errors_in_a_row = 0;
        this.state.last_pass_at = this.ctx.now().toISOString();
        if (more) next = 0;
      }
    } catch (e) {
      const s = this.state;
      s.state = e instanceof RpcBehind ? 'behind' : 'error';
      s.errors_in_a_row++;
      s.last_error = publicError(e, cfg.rpcUrl);
      s.last_error_at = this.ctx.now().toISOString();
      // exponential backoff with jitter: a down or rate-limiting RPC is asked less and less often
      const cap = Math.min(cfg.maxBackoffMs, cfg.pollMs * 2 ** Math.min(s.errors_in_a_row, 20));
      next = Math.round(cap * (0.5 + Math.random() / 2));
      const fields = { rail: cfg.rail, errors_in_a_row: s.errors_in_a_row, retry_in_ms: next };
      this.log.warn({ ...fields, error: s.last_error }, 'watcher pass failed');
    }
    this.#schedule(next);
  }
}
