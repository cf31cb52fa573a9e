// The kernel worker pool: piscina workers (one compiled Module shared, one instance per worker),
// a bounded queue (full → ServiceError 'busy'), per-job AbortSignal (→ 'cancelled'; a running job
// is stopped by terminating its worker, which piscina replaces), crashed workers replaced, and
// inline routing of jobs too small to be worth a thread hop (estimateMicros in ops.ts).
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { COMPILED } from '../package-root.ts';
import { Piscina, queueOptionsSymbol } from 'piscina';
import { ServiceError } from '../errors.ts';
import { Kernels } from './kernels.ts';
import { OPS, estimateMicros, type OpName, type OpTable } from './ops.ts';
import { compileKernels } from './wasm.ts';
import type { WorkerReply } from './worker.ts';
import { PriorityTaskQueue, type Lane } from './priority-queue.ts';
import { kernelDuration, kernelJobs, observe, pools, since } from '../metrics/metrics.ts';

export interface KernelPoolOptions {
  /** worker threads (default: available cores) */
  threads?: number;
  /** jobs waiting beyond the running ones before run() fails with 'busy' (default 256) */
  maxQueue?: number;
  /** jobs estimated under this many microseconds run inline (default 20; 0 = never inline) */
  inlineBelowMicros?: number;
  /** milliseconds an idle worker above the minimum lives (default 30 s) */
  idleTimeout?: number;
  /** enables test-only ops (a worker that exits) */
  testOps?: boolean;
}

export interface RunOptions {
  signal?: AbortSignal;
  /** force the job onto a worker or inline, overriding the cost estimate */
  route?: 'auto' | 'worker' | 'inline';
  /** move the input buffers to the worker instead of copying them (the caller's views are detached) */
  transferInputs?: boolean;
  /** queue lane when all workers are busy: high first, low behind the others (default normal) */
  priority?: Lane;
}

export class KernelPool {
  readonly #piscina: Piscina;
  readonly #inline: Kernels;
  readonly #inlineBelow: number;
  readonly #capacity: number;
  #inFlight = 0;
  #closed = false;

  constructor(opts: KernelPoolOptions = {}) {
    const mod = compileKernels();
    const threads = opts.threads ?? Math.max(1, availableParallelism());
    this.#inline = Kernels.create(mod);
    this.#inlineBelow = opts.inlineBelowMicros ?? 20;
    // Admission is counted here rather than left to piscina's maxQueue, whose check only applies
    // once its own queue is non-empty (a burst can slip past it while workers are busy).
    this.#capacity = threads + (opts.maxQueue ?? 256);
    this.#piscina = new Piscina({
      // compiled, the worker is plain JavaScript; from the sources, worker-entry.mjs registers tsx first
      filename: fileURLToPath(new URL(COMPILED ? './worker.js' : './worker-entry.mjs', import.meta.url)),
      minThreads: threads,
      maxThreads: threads,
      maxQueue: opts.maxQueue ?? 256,
      idleTimeout: opts.idleTimeout ?? 30_000,
      workerData: { module: mod, testOps: opts.testOps === true },
      taskQueue: new PriorityTaskQueue(),
    });
    pools.add(this); // svc_kernel_pool_* gauges, until closed
  }

  get threads(): number { return this.#piscina.threads.length; }
  get queueSize(): number { return this.#piscina.queueSize; }
  get completed(): number { return this.#piscina.completed; }
  /** jobs on workers or waiting for one */
  get inFlight(): number { return this.#inFlight; }

  /** Whether a job would run inline under the current routing policy. */
  routesInline<K extends OpName>(op: K, args: OpTable[K]['args']): boolean {
    return estimateMicros(op, args) < this.#inlineBelow;
  }

  async run<K extends OpName>(op: K, args: OpTable[K]['args'], opts: RunOptions = {}): Promise<OpTable[K]['result']> {
    if (this.#closed) throw new ServiceError('busy', 'kernel pool is closed');
    if (opts.signal?.aborted) throw new ServiceError('cancelled', 'kernel job cancelled before it started');
    const route = opts.route ?? 'auto';
    const t0 = performance.now();
    if (route === 'inline' || (route === 'auto' && this.routesInline(op, args))) {
      try {
        const r = (OPS[op] as (k: Kernels, ...a: unknown[]) => OpTable[K]['result'])(this.#inline, ...args);
        jobDone(op, 'inline', 'ok', t0);
        return r;
      } catch (e) {
        jobDone(op, 'inline', e instanceof ServiceError ? e.code : 'kernel_failed', t0);
        throw e;
      }
    }
    if (this.#inFlight >= this.#capacity) {
      jobDone(op, 'worker', 'busy', t0);
      throw new ServiceError('busy', 'kernel queue is full, retry later', { capacity: this.#capacity });
    }
    const transferList = opts.transferInputs ? collectBuffers(args) : undefined;
    let reply: WorkerReply;
    this.#inFlight++;
    try {
      reply = await this.#piscina.run(
        { op, args, [queueOptionsSymbol]: { priority: opts.priority ?? 'normal' } },
        { signal: opts.signal ?? null, transferList },
      );
    } catch (e) {
      const err = mapPoolError(e);
      jobDone(op, 'worker', err.code, t0);
      throw err;
    } finally {
      this.#inFlight--;
    }
    if (!reply.ok) {
      const err = ServiceError.fromWire(reply.error);
      jobDone(op, 'worker', err.code, t0);
      throw err;
    }
    jobDone(op, 'worker', 'ok', t0);
    return reply.value as OpTable[K]['result'];
  }

  /** Runs a test-only op (requires testOps). */
  async _runTestOp(op: '__exit'): Promise<unknown> {
    try { return await this.#piscina.run({ op, args: [] }); } catch (e) { throw mapPoolError(e); }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    pools.delete(this);
    await this.#piscina.close();
  }
}

/** svc_kernel_jobs_total and svc_kernel_job_duration_seconds (cells cached by label values). */
function jobDone(op: OpName, route: 'inline' | 'worker', outcome: string, t0: number): void {
  observe(kernelDuration.at(op, route), since(t0));
  kernelJobs.at(op, route, outcome).v++;
}

function collectBuffers(args: readonly unknown[]): ArrayBuffer[] {
  const seen = new Set<ArrayBuffer>();
  const visit = (v: unknown) => {
    if (v instanceof Uint8Array) {
      // only whole, unshared buffers can be moved safely
      if (v.buffer instanceof ArrayBuffer && v.byteOffset === 0 && v.byteLength === v.buffer.byteLength) {
        seen.add(v.buffer);
      }
    } else if (Array.isArray(v)) v.forEach(visit);
  };
  args.forEach(visit);
  return [...seen];
}

function mapPoolError(e: unknown): ServiceError {
  if (e instanceof ServiceError) return e;
  const err = e as { name?: string; message?: string } | undefined;
  const msg = err?.message ?? String(e);
  if (msg.includes('Task queue is at limit') || msg.includes('No task queue available')) {
    return new ServiceError('busy', 'kernel queue is full, retry later', undefined, { cause: e });
  }
  if (err?.name === 'AbortError' || msg.includes('aborted')) {
    return new ServiceError('cancelled', 'kernel job cancelled', undefined, { cause: e });
  }
  return new ServiceError('kernel_failed', 'kernel worker failed', { reason: msg }, { cause: e });
}
