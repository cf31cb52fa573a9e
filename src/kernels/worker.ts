// Pool worker: instantiates the kernel module once (the compiled Module arrives in workerData) and
// runs jobs from ops.ts. Results travel back with their buffers moved, not copied; errors travel
// as {code, message, details} because Error objects lose class and fields across postMessage.
import { Piscina } from 'piscina';
import { Kernels } from './kernels.ts';
import { OPS, isOpName } from './ops.ts';
import { ServiceError } from '../errors.ts';

interface WorkerData { module: WebAssembly.Module; testOps?: boolean }
const data = Piscina.workerData as WorkerData;
const kernels = Kernels.create(data.module);

export type WorkerReply = { ok: true; value: unknown } | { ok: false; error: ReturnType<ServiceError['toWire']> };

export default function run(task: { op: string; args: unknown[] }): WorkerReply | ReturnType<typeof Piscina.move> {
  if (data.testOps && task.op === '__exit') process.exit(70); // lets tests prove crashed workers are replaced
  if (!isOpName(task.op)) {
    return { ok: false, error: { code: 'invalid_request', message: `unknown kernel op ${String(task.op)}` } };
  }
  try {
    const value = (OPS[task.op] as (k: Kernels, ...a: unknown[]) => unknown)(kernels, ...task.args);
    const reply: WorkerReply = { ok: true, value };
    const buf = value instanceof Uint8Array ? value.buffer : (value as { output?: Uint8Array } | null)?.output?.buffer;
    return buf instanceof ArrayBuffer ? withTransfer(reply, buf) : reply;
  } catch (e) {
    const err = e instanceof ServiceError
      ? e
      : new ServiceError('kernel_failed', 'kernel job failed', { cause: String(e) });
    return { ok: false, error: err.toWire() };
  }
}

// Piscina.move() marks one transferable; a reply wrapping a buffer is returned as a Transferable
// object whose [transferList] is that buffer.
function withTransfer(reply: WorkerReply, buf: ArrayBuffer) {
  return Piscina.move({
    get [Piscina.transferableSymbol]() { return [buf]; },
    get [Piscina.valueSymbol]() { return reply; },
  } as never);
}
