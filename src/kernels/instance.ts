// Instantiating build/kernels.wasm, in any runtime: its single import (env.abort) and the ABI
// version check. Portable (no Node APIs): the server (wasm.ts compiles the module from the file)
// and the embedding kit (src/kit/load.ts fetches or reads it) both instantiate through here.
import { ABI_VERSION, type KernelExports } from './abi.ts';

/** A trap inside the module: AssemblyScript's abort(message, file, line, column). */
export class KernelAbort extends Error {}

function kernelImports(memory: () => WebAssembly.Memory | undefined): WebAssembly.Imports {
  return {
    env: {
      abort(msgPtr: number, filePtr: number, line: number, col: number) {
        const text = (ptr: number) => {
          const mem = memory();
          if (!mem || !ptr) return '';
          const u32 = new Uint32Array(mem.buffer);
          const len = (u32[(ptr - 4) >>> 2] ?? 0) >>> 1;
          return String.fromCharCode(...new Uint16Array(mem.buffer, ptr, Math.min(len, 256)));
        };
        throw new KernelAbort(`kernel abort: ${text(msgPtr)} at ${text(filePtr)}:${line}:${col}`);
      },
    },
  };
}

function checked(instance: WebAssembly.Instance): KernelExports {
  const exports = instance.exports as unknown as KernelExports;
  const abi = exports.ABI_VERSION.value as number;
  if (abi !== ABI_VERSION) {
    throw new Error(`kernels.wasm has ABI ${abi}, this code expects ${ABI_VERSION}: use the matching build`);
  }
  return exports;
}

/** Instantiates a compiled module synchronously (the server: workers receive the compiled Module). */
export function instantiateKernels(mod: WebAssembly.Module): KernelExports {
  let exports: KernelExports | undefined;
  const instance = new WebAssembly.Instance(mod, kernelImports(() => exports?.memory));
  exports = checked(instance);
  return exports;
}

/** What an embedder may hand over: the module's bytes, a compiled module, or a fetch() response. */
export type KernelSource = BufferSource | WebAssembly.Module | Response | PromiseLike<Response>;

/**
 * Instantiates from any source without blocking (browsers refuse synchronous compiles of large
 * modules on the main thread); a Response is compiled while it streams when served as application/wasm.
 */
export async function instantiateKernelsAsync(source: KernelSource): Promise<KernelExports> {
  let exports: KernelExports | undefined;
  const imports = kernelImports(() => exports?.memory);
  let instance: WebAssembly.Instance;
  if (source instanceof WebAssembly.Module) {
    instance = await WebAssembly.instantiate(source, imports);
  } else if (isResponseLike(source)) {
    const res = await source;
    if (!res.ok) throw new Error(`kernels.wasm: HTTP ${res.status} from ${res.url}`);
    const streaming = typeof WebAssembly.instantiateStreaming === 'function'
      && /^application\/wasm\b/.test(res.headers.get('content-type') ?? '');
    instance = streaming
      ? (await WebAssembly.instantiateStreaming(res, imports)).instance
      : (await WebAssembly.instantiate(await res.arrayBuffer(), imports)).instance;
  } else {
    instance = (await WebAssembly.instantiate(source, imports)).instance;
  }
  exports = checked(instance);
  return exports;
}

function isResponseLike(v: unknown): v is Response | PromiseLike<Response> {
  if (typeof v !== 'object' || v === null) return false;
  if (typeof (v as PromiseLike<unknown>).then === 'function') return true;
  return typeof Response !== 'undefined' && v instanceof Response;
}
