// Loading build/kernels.wasm: compile the module once per process (workers receive the compiled
// WebAssembly.Module, not bytes) and instantiate it with its single import, env.abort.
// Does not wrap the exports: that is kernels.ts.
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { fileURLToPath } from 'node:url';
import { ABI_VERSION, type KernelExports } from './abi.ts';

export type KernelBuild = 'release' | 'debug';

export function kernelWasmPath(build: KernelBuild = 'release'): string {
  const file = build === 'release' ? 'kernels.wasm' : 'kernels.debug.wasm';
  return fileURLToPath(new URL(`../../build/${file}`, import.meta.url));
}

const compiled = new Map<KernelBuild, WebAssembly.Module>();

// V8 starts WASM on its baseline compiler and tiers up later; about 1 process in 60 stayed on
// baseline code (~4.5x slower) for its whole life here (DESIGN.md §11). Compiling with the
// optimizing tier up front removes that outlier. V8 flags are per process (worker threads cannot
// set their own), and this one only affects modules compiled after it, so it is set before the
// first compile. `svcd` and the benchmark also pass it on the command line.
let tieringSet = false;
function preferOptimizingTier(): void {
  if (tieringSet) return;
  tieringSet = true;
  if (!process.execArgv.includes('--no-liftoff')) setFlagsFromString('--no-liftoff');
}

export function compileKernels(build: KernelBuild = 'release'): WebAssembly.Module {
  let mod = compiled.get(build);
  if (!mod) {
    preferOptimizingTier();
    mod = new WebAssembly.Module(readFileSync(kernelWasmPath(build)));
    compiled.set(build, mod);
  }
  return mod;
}

/** A trap inside the module: AssemblyScript's abort(message, file, line, column). */
export class KernelAbort extends Error {}

export function instantiateKernels(mod: WebAssembly.Module): KernelExports {
  let memory: WebAssembly.Memory | undefined;
  const instance = new WebAssembly.Instance(mod, {
    env: {
      abort(msgPtr: number, filePtr: number, line: number, col: number) {
        const text = (ptr: number) => {
          if (!memory || !ptr) return '';
          const u32 = new Uint32Array(memory.buffer);
          const len = (u32[(ptr - 4) >>> 2] ?? 0) >>> 1;
          return String.fromCharCode(...new Uint16Array(memory.buffer, ptr, Math.min(len, 256)));
        };
        throw new KernelAbort(`kernel abort: ${text(msgPtr)} at ${text(filePtr)}:${line}:${col}`);
      },
    },
  });
  const exports = instance.exports as unknown as KernelExports;
  memory = exports.memory;
  const abi = exports.ABI_VERSION.value as number;
  if (abi !== ABI_VERSION) {
    throw new Error(`build/kernels.wasm has ABI ${abi}, this code expects ${ABI_VERSION}: run npm run asbuild`);
  }
  return exports;
}
