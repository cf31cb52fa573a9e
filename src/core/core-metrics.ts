// What the core records and shows in the metrics (src/metrics, docs/operations.md "Metrics"): every
// svc/1 command by name, listener and outcome, whichever listener it came in on (edge, backend,
// admin, the in-process gateway); the open quotes and pending invoices, counted from the ledger's
// indexes of open items (never from the history); the settlement watchers' lag.
import { ServiceError } from '../errors.ts';
import { commandSpec } from '../protocol/registry.ts';
import {
  UNKNOWN_COMMAND, commandDuration, commands, observe, setFeeBalances, setOpenCounts, setWatcherStatus, since,
  type OpenCounts, type WatcherGauges,
} from '../metrics/metrics.ts';
import type { Store } from '../store/store.ts';
import type { Listener, NodeState } from './call.ts';

/**
 * Records one answered command: `outcome` is 'ok', an error code, or the error thrown. The command
 * label is a registry name (anything else the wire carries is `unknown`).
 */
export function commandDone(cmd: string, listener: Listener, outcome: unknown, t0: number): void {
  const name = commandSpec(cmd) ? cmd : UNKNOWN_COMMAND;
  const code = typeof outcome === 'string' ? outcome : outcome instanceof ServiceError ? outcome.code : 'internal';
  commands.at(name, listener, code).v++;
  observe(commandDuration.at(name, listener), since(t0));
}

/** How long one count of the open items serves scrapes: at most one pass over the indexes per interval. */
const OPEN_COUNTS_TTL_MS = 15_000;
/** Entries read per index and pass at most: past it the gauge shows this many (docs/operations.md). */
export const OPEN_COUNTS_CAP = 1_000_000;

/**
 * Counts from the indexes that hold open items only: quote_expiry (one entry per accepted quote
 * still holding its reservation) and invoice_amounts (one per invoice whose amount is held: pending ones
 * are those not past their expiry nor marked settled). Their size follows what is open or held now (at
 * most the rail's suffix space per size), not the ledger's history.
 */
export async function countOpen(store: Store, nowMs: number): Promise<OpenCounts> {
  let openQuotes = 0, pendingInvoices = 0;
  for await (const _k of store.keys('quote_expiry', { limit: OPEN_COUNTS_CAP })) openQuotes++;
  for await (const [, v] of store.entries('invoice_amounts', { limit: OPEN_COUNTS_CAP })) {
    if ((v.expires_ms as number) > nowMs && v.settled_ms === undefined) pendingInvoices++;
  }
  let unmatchedDeposits = 0, reorgedDeposits = 0;
  for await (const _k of store.keys('unmatched_deposits', { limit: OPEN_COUNTS_CAP })) unmatchedDeposits++;
  for await (const _k of store.keys('deposit_reorgs', { limit: OPEN_COUNTS_CAP })) reorgedDeposits++;
  let pendingWebhooks = 0;
  for await (const _k of store.keys('webhook_queue', { limit: OPEN_COUNTS_CAP })) pendingWebhooks++;
  return { openQuotes, pendingInvoices, unmatchedDeposits, reorgedDeposits, pendingWebhooks };
}

/** Connects the core's gauges to this node (svcd calls it once the core is open). */
export function observeCore(core: NodeState): void {
  let last: { at: number; counts: Promise<OpenCounts> } | null = null;
  setOpenCounts(() => {
    const now = Date.now();
    if (!last || now - last.at > OPEN_COUNTS_TTL_MS) {
      const counts = countOpen(core.ctx.store, core.ctx.now().getTime());
      last = { at: now, counts: counts.catch((e: unknown) => { last = null; throw e; }) };
    }
    return last.counts;
  });
  setWatcherStatus(async () => Object.values(core.watchers?.status() ?? {}) as WatcherGauges[]);
  const desk = core.x402;
  const reads = new Map<string, { at: number; v: Promise<bigint | null> | null }>();
  // an RPC call per network and scrape at most every OPEN_COUNTS_TTL_MS
  setFeeBalances(desk ? (family) => {
    const now = Date.now();
    let last = reads.get(family);
    if (!last || now - last.at > OPEN_COUNTS_TTL_MS) {
      last = { at: now, v: desk.feeBalance(family)?.catch(() => null) ?? null };
      reads.set(family, last);
    }
    return last.v;
  } : null);
}
