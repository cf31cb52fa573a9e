// One scrape for the whole node. In one process it is the registry's text. With gateway workers
// (SVC_GATEWAY_PROCESSES > 0) the HTTP metrics live in the workers: the primary asks every worker for
// its registry over node:cluster IPC, and prom-client's AggregatorRegistry.aggregate merges them with
// the primary's own (counters, histograms and connection gauges summed; the default process metrics
// by their own aggregators), so one scrape sees every process. A worker that does not answer within
// WORKER_TIMEOUT_MS is left out of that scrape and counted in svc_metrics_workers{state="missing"}.
import cluster from 'node:cluster';
import { AggregatorRegistry, Gauge } from 'prom-client';
import { registry } from './metrics.ts';
import { sendOrDrop, type IpcChannel } from '../ipc.ts';

const REQ = 'svc:metrics-req';
const RES = 'svc:metrics-res';
const WORKER_TIMEOUT_MS = 3000;

/** One process's metrics as registry.getMetricsAsJSON() gives them (plain data: crosses IPC). */
type MetricJson = Awaited<ReturnType<typeof registry.getMetricsAsJSON>>[number];
type Req = { type: typeof REQ; id: number };
type Res = { type: typeof RES; id: number; metrics?: MetricJson[]; error?: string };

export const contentType = registry.contentType;

/** In a gateway worker: answers the primary's requests for this process's metrics. */
export function answerMetricRequests(): void {
  process.on('message', (m: Req) => {
    if (m?.type !== REQ) return;
    registry.getMetricsAsJSON().then(
      (metrics) => sendOrDrop(process as IpcChannel, { type: RES, id: m.id, metrics } satisfies Res),
      (e: unknown) => sendOrDrop(process as IpcChannel, { type: RES, id: m.id, error: String(e) } satisfies Res),
    );
  });
}

interface Pending { left: Set<number>; got: MetricJson[][]; done: () => void }
const pending = new Map<number, Pending>();
let nextId = 0;
let listening = false;
let workersGauge: Gauge | null = null;

function listen(): void {
  if (listening) return;
  listening = true;
  cluster.on('message', (worker, m: Res) => {
    if (m?.type !== RES) return;
    const p = pending.get(m.id);
    if (!p || !p.left.delete(worker.id)) return;
    if (m.metrics) p.got.push(m.metrics);
    if (p.left.size === 0) p.done();
  });
}

/** The node's metrics in the Prometheus text format: this process's, and every gateway worker's. */
export async function scrape(): Promise<string> {
  const workers = cluster.isPrimary ? Object.values(cluster.workers ?? {}).filter((w) => w?.isConnected()) : [];
  if (workers.length === 0) return registry.metrics();
  listen();
  workersGauge ??= new Gauge({
    name: 'svc_metrics_workers', help: 'gateway worker processes whose metrics are in this scrape (reporting) or not',
    labelNames: ['state'], registers: [registry],
  });
  const id = nextId++;
  const p: Pending = { left: new Set(workers.map((w) => w!.id)), got: [], done: () => undefined };
  const answered = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, WORKER_TIMEOUT_MS);
    p.done = () => { clearTimeout(timer); resolve(); };
  });
  pending.set(id, p);
  for (const w of workers) {
    // a worker that died meanwhile answers nothing: not waited for
    sendOrDrop(w!, { type: REQ, id } satisfies Req, (e) => {
      if (!e) return;
      p.left.delete(w!.id);
      if (p.left.size === 0) p.done();
    });
  }
  if (p.left.size === 0) p.done();
  await answered;
  pending.delete(id);
  workersGauge.set({ state: 'reporting' }, p.got.length);
  workersGauge.set({ state: 'missing' }, workers.length - p.got.length);
  const own = await registry.getMetricsAsJSON();
  return AggregatorRegistry.aggregate([own, ...p.got]).metrics();
}
