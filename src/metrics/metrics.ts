// The service's Prometheus metrics (docs/operations.md "Metrics"): one registry per process, the
// metric definitions, and the recording calls every floor makes. It sits below protocol, store and
// kernels and imports nothing of the service, so the store, the kernel pool, the core, the edge and
// the gateway all record here with imports that only go down (docs/decisions.md "Metrics").
//
// The hot path (a request, a command, a ledger batch, a kernel job) never builds a label set:
// counters and histograms are families of plain cells, one per label combination, found through
// nested Maps keyed by the label values the caller already holds (no string concatenation, no
// object per call) and created once. prom-client renders them at scrape time (they implement its
// metric interface) together with its own gauges, whose collect() runs only when scraped, and the
// default process metrics. Labels are bounded by construction: route templates, command names from
// the registry, error codes from the catalogue, a fixed set of listeners, rails and ops.
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';

export const registry = new Registry();

type Key = string | number;
interface Value { labels: Record<string, string | number>; value: number; metricName?: string }
interface MetricJson { name: string; help: string; type: string; aggregator: string; values: Value[] }

/**
 * Cells by label values: a tree of Maps, one level per label (up to three); a leaf is made once and
 * kept. Fixed arity, no rest parameters: a lookup allocates nothing.
 */
class Cells<C> {
  readonly #root = new Map<Key, unknown>();
  readonly all: { labels: Record<string, string>; cell: C }[] = [];
  constructor(readonly labelNames: readonly string[], readonly make: () => C) {
    if (labelNames.length > 3) throw new Error('at most three labels');
  }

  at(a: Key = '', b: Key = '', c: Key = ''): C {
    const n = this.labelNames.length;
    let m = this.#root;
    if (n >= 2) m = level(m, a);
    if (n === 3) m = level(m, b);
    const leaf = n === 3 ? c : n === 2 ? b : a;
    let cell = m.get(leaf) as C | undefined;
    if (cell === undefined) {
      cell = this.make();
      m.set(leaf, cell);
      const values = [a, b, c];
      this.all.push({ labels: Object.fromEntries(this.labelNames.map((l, i) => [l, String(values[i])])), cell });
    }
    return cell;
  }
}

function level(m: Map<Key, unknown>, k: Key): Map<Key, unknown> {
  let next = m.get(k) as Map<Key, unknown> | undefined;
  if (!next) m.set(k, next = new Map());
  return next;
}

/** A counter or gauge cell: change `v` directly (counters only up). */
export interface Cell { v: number }

/** A counter (or an up-and-down gauge) family recorded by the hot path, rendered by prom-client. */
export class CellFamily {
  readonly #cells: Cells<Cell>;
  constructor(
    readonly name: string, readonly help: string, labelNames: readonly string[],
    readonly type: 'counter' | 'gauge' = 'counter',
  ) {
    this.#cells = new Cells(labelNames, () => ({ v: 0 }));
    registry.registerMetric(this as never);
  }

  get aggregator(): string { return 'sum'; }
  at(a?: Key, b?: Key, c?: Key): Cell { return this.#cells.at(a, b, c); }

  async get(): Promise<MetricJson> {
    const values = this.#cells.all.map((e) => ({ labels: e.labels, value: e.cell.v }));
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values };
  }
}

/** A histogram cell: counts per bucket (not cumulative), their sum and count. */
export interface HistogramCell { counts: Float64Array; sum: number; count: number; bounds: readonly number[] }

export function observe(h: HistogramCell, v: number): void {
  const b = h.bounds;
  let i = 0;
  while (i < b.length && v > b[i]!) i++;
  h.counts[i]!++;
  h.sum += v;
  h.count++;
}

/** Seconds since `t0` (a performance.now() reading). */
export const since = (t0: number): number => (performance.now() - t0) / 1000;

export class HistogramFamily {
  readonly #cells: Cells<HistogramCell>;
  constructor(
    readonly name: string, readonly help: string, labelNames: readonly string[], readonly bounds: readonly number[],
  ) {
    const n = bounds.length + 1;
    this.#cells = new Cells(labelNames, () => ({ counts: new Float64Array(n), sum: 0, count: 0, bounds }));
    registry.registerMetric(this as never);
  }

  get type(): string { return 'histogram'; }
  get aggregator(): string { return 'sum'; }
  at(a?: Key, b?: Key, c?: Key): HistogramCell { return this.#cells.at(a, b, c); }

  async get(): Promise<MetricJson> {
    const values: Value[] = [];
    for (const { labels, cell } of this.#cells.all) {
      let acc = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        acc += cell.counts[i]!;
        const le = i < this.bounds.length ? this.bounds[i]! : '+Inf';
        values.push({ labels: { ...labels, le }, value: acc, metricName: `${this.name}_bucket` });
      }
      values.push({ labels, value: cell.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: cell.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values };
  }
}

const LATENCY = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const FAST = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

// ---- HTTP gateway ---------------------------------------------------------------------------------

export const httpRequests = new CellFamily('svc_http_requests_total',
  'HTTP requests answered by the gateway, by route template, method and status', ['route', 'method', 'status']);
export const httpDuration = new HistogramFamily('svc_http_request_duration_seconds',
  'HTTP request latency in the gateway (first middleware to the answer), by route template and method',
  ['route', 'method'], LATENCY);

/** The route label of a request no route matched (404, CORS preflight): never the raw path. */
export const UNMATCHED_ROUTE = 'unmatched';

// ---- svc/1 commands, connections ------------------------------------------------------------------

export type ListenerName = 'edge' | 'backend' | 'admin' | 'gateway' | 'http';

export const commands = new CellFamily('svc_commands_total',
  'svc/1 commands answered by the core, by command, listener and outcome (ok or the error code)',
  ['command', 'listener', 'outcome']);
export const commandDuration = new HistogramFamily('svc_command_duration_seconds',
  'svc/1 command latency in the core, by command and listener', ['command', 'listener'], LATENCY);
/** The command label of a name the registry does not know (the wire may carry anything). */
export const UNKNOWN_COMMAND = 'unknown';

export const openConnections = new CellFamily('svc_open_connections',
  'open connections by listener (edge, backend, admin: svc/1; http: the gateway)', ['listener'], 'gauge');
export const connectionsAccepted = new CellFamily('svc_connections_total',
  'connections handed to a listener\'s protocol (admitted, or refused with an answer)', ['listener']);
export const connectionRefusals = new CellFamily('svc_connections_refused_total',
  'connections refused over a cap (cap: address or total), answered (429/503, a busy frame) or dropped unanswered',
  ['listener', 'cap', 'answered']);

export const refusedHandshakes = new CellFamily('svc_backend_handshakes_refused_total',
  'TLS handshakes the backend refused (SVC_CLUSTER_*): a peer without a certificate of the cluster CA', []);

/** One refused backend handshake. */
export function countRefusedHandshake(): void {
  refusedHandshakes.at().v++;
}

/** Counts a server's connections (open now, accepted in total) under `listener`. */
export function countConnections(
  server: { on(event: 'connection', fn: (s: { once(e: 'close', f: () => void): unknown }) => void): unknown },
  listener: ListenerName,
): void {
  const open = openConnections.at(listener);
  const total = connectionsAccepted.at(listener);
  const closed = () => { open.v--; };
  server.on('connection', (socket) => {
    open.v++;
    total.v++;
    socket.once('close', closed);
  });
}

// ---- rate limits ----------------------------------------------------------------------------------

export const rateLimited = new CellFamily('svc_rate_limited_total',
  'requests refused with rate_limited, by rate class and what was counted (address or machine)', ['class', 'key']);

// ---- ledger (store) -------------------------------------------------------------------------------

export const ledgerBatch = new HistogramFamily('svc_ledger_batch_seconds',
  'one caller\'s atomic ledger batch, from write() until durable (group-commit wait included), by sync',
  ['sync'], FAST);
export const ledgerFlush = new HistogramFamily('svc_ledger_flush_seconds',
  'one batch written by the store: on LevelDB sync="true" is a group commit including its fdatasync; on '
  + 'PostgreSQL one transaction to its commit (each try of one)', ['sync'], FAST);
export const ledgerGroup = new HistogramFamily('svc_ledger_group_commit_batches',
  'callers\' batches per synced flush (group commit size)', [], [1, 2, 4, 8, 16, 32, 64, 128, 256]);
export const ledgerConflicts = new CellFamily('svc_ledger_conflicts_total',
  'batches refused whole by a guard (another writer came first: the operation reads again and retries), '
  + 'by guard (created: a record it creates exists; compared: a record it compares changed)', ['guard']);
export const ledgerRetries = new CellFamily('svc_ledger_retries_total',
  'PostgreSQL transactions run again after a serialization failure or deadlock (40001, 40P01)', []);
export const ledgerReads = new HistogramFamily('svc_ledger_read_seconds',
  'one read statement of the PostgreSQL store (a record, several in one statement, a page of a scan)', [], FAST);

// ---- kernel pool ----------------------------------------------------------------------------------

export const kernelJobs = new CellFamily('svc_kernel_jobs_total',
  'kernel jobs by op, route (worker or inline) and outcome (ok or the error code)', ['op', 'route', 'outcome']);
export const kernelDuration = new HistogramFamily('svc_kernel_job_duration_seconds',
  'kernel job latency by op and route (a worker job includes its wait in the queue)', ['op', 'route'], FAST);

/** What a kernel pool shows of itself (KernelPool registers itself while open). */
export interface PoolGauges { readonly queueSize: number; readonly inFlight: number; readonly threads: number }
export const pools = new Set<PoolGauges>();
const sumPools = (f: (p: PoolGauges) => number) => {
  let n = 0;
  for (const p of pools) n += f(p);
  return n;
};
new Gauge({
  name: 'svc_kernel_pool_queue_depth', help: 'kernel jobs waiting for a worker thread', registers: [registry],
  collect() { this.set(sumPools((p) => p.queueSize)); },
});
new Gauge({
  name: 'svc_kernel_pool_in_flight', help: 'kernel jobs on a worker thread or waiting for one', registers: [registry],
  collect() { this.set(sumPools((p) => p.inFlight)); },
});
new Gauge({
  name: 'svc_kernel_pool_threads', help: 'kernel worker threads', registers: [registry],
  collect() { this.set(sumPools((p) => p.threads)); },
});

// ---- quotes and invoices --------------------------------------------------------------------------

export const quoteTransitions = new CellFamily('svc_quote_transitions_total',
  'quotes entering a state (issued, accepted, executed, expired) since start', ['state']);
export const invoiceTransitions = new CellFamily('svc_invoice_transitions_total',
  'invoices entering a state (created, settled, settled_late, expired) since start', ['state']);

/** Live counts read from the ledger's indexes of open items (the core sets it: core/core-metrics.ts). */
export interface OpenCounts {
  openQuotes: number; pendingInvoices: number;
  /** chain deposits waiting in the unmatched queue, and deposits reorged out after they were recorded */
  unmatchedDeposits: number; reorgedDeposits: number;
  /** webhook deliveries waiting for their next try */
  pendingWebhooks: number;
}
let openCounts: (() => Promise<OpenCounts>) | null = null;
export function setOpenCounts(f: (() => Promise<OpenCounts>) | null): void { openCounts = f; }
/** A failed count (the store closing under a scrape) leaves the gauge at its last value. */
const openGauge = (name: string, help: string, pick: (c: OpenCounts) => number) => new Gauge({
  name, help, registers: [registry],
  async collect() {
    const c = await openCounts?.().catch(() => null);
    if (c) this.set(pick(c));
  },
});
openGauge('svc_open_quotes', 'accepted quotes holding a reservation (neither executed nor expired)',
  (c) => c.openQuotes);
openGauge('svc_pending_invoices', 'pending invoices not yet past their expiry', (c) => c.pendingInvoices);
openGauge('svc_unmatched_deposits', 'chain deposits waiting in the unmatched queue for the operator (claim or dismiss)',
  (c) => c.unmatchedDeposits);
openGauge('svc_reorged_deposits', 'chain deposits reorged out after they were recorded (svc-admin reorgs)',
  (c) => c.reorgedDeposits);
openGauge('svc_webhooks_pending', 'webhook deliveries waiting for their next try (a receiver down: it grows)',
  (c) => c.pendingWebhooks);
export const webhookDeliveries = new CellFamily('svc_webhook_deliveries_total',
  'webhook delivery attempts by outcome: delivered (2xx), retried (failed, tried again later), failed (given up '
  + 'after a day)', ['outcome']);

// ---- x402 (docs/x402.md) --------------------------------------------------------------------------

export const x402Transitions = new CellFamily('svc_x402_payments_total',
  'x402 payments entering a state (submitting, submitted, settled, executed, failed) on this node since start',
  ['state']);
/** The x402 fee accounts' balances (wei, lamports) by network family; a read that fails leaves the gauge as it was. */
export type FeeBalances = (family: 'eip155' | 'solana') => Promise<bigint | null> | null;
let feeBalances: FeeBalances | null = null;
export function setFeeBalances(f: FeeBalances | null): void { feeBalances = f; }
/** A gauge of one family's fee account, in its chain's whole coin (`scale`: smallest units per coin). */
function feeGauge(name: string, help: string, family: 'eip155' | 'solana', scale: number): void {
  new Gauge({
    name, help, registers: [registry],
    async collect() {
      const v = await feeBalances?.(family)?.catch(() => null);
      if (v !== null && v !== undefined) this.set(Number(v) / scale);
    },
  });
}
feeGauge('svc_x402_relayer_balance_ether',
  'the x402 relayer\'s native balance, which pays each EVM settlement\'s gas (alert before it runs out)',
  'eip155', 1e18);
feeGauge('svc_x402_fee_payer_balance_sol',
  'the x402 Solana fee payer\'s balance, which pays each Solana settlement\'s fee (alert before it runs out)',
  'solana', 1e9);

// ---- settlement watchers --------------------------------------------------------------------------

/** What a chain watcher shows of itself (a subset of WatcherStatus). */
export interface WatcherGauges {
  rail: string; state: string; lag_blocks: number | null; last_pass_at: string | null; errors_in_a_row: number;
}
let watcherStatus: (() => Promise<WatcherGauges[]>) | null = null;
export function setWatcherStatus(f: (() => Promise<WatcherGauges[]>) | null): void { watcherStatus = f; }
function watcherGauge(name: string, help: string, value: (w: WatcherGauges) => number | null): void {
  new Gauge({
    name, help, labelNames: ['rail'], registers: [registry],
    async collect() {
      this.reset();
      for (const w of watcherStatus ? await watcherStatus() : []) {
        const v = value(w);
        if (v !== null) this.set({ rail: w.rail }, v);
      }
    },
  });
}
watcherGauge('svc_watcher_lag_blocks', 'settlement watcher lag: the chain tip less the last block scanned',
  (w) => w.lag_blocks);
watcherGauge('svc_watcher_up', '1 while the watcher\'s last pass succeeded', (w) => (w.state === 'ok' ? 1 : 0));
watcherGauge('svc_watcher_errors_in_a_row', 'failed watcher passes since the last good one', (w) => w.errors_in_a_row);
watcherGauge('svc_watcher_last_pass_timestamp_seconds', 'when the watcher last finished a good pass (Unix seconds)',
  (w) => (w.last_pass_at ? Date.parse(w.last_pass_at) / 1000 : null));
watcherGauge('svc_watcher_last_pass_age_seconds',
  'seconds since the watcher\'s last good pass: grows through an RPC outage (alert on it)',
  (w) => (w.last_pass_at ? Math.max(0, (Date.now() - Date.parse(w.last_pass_at)) / 1000) : null));

// ---- process --------------------------------------------------------------------------------------

let processMetrics = false;
/** prom-client's default process and Node.js metrics (CPU, memory, event loop, GC); once per process. */
export function enableProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics({ register: registry });
}
