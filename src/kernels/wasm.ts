// Loading build/kernels.wasm in Node: read and compile the module once per process (workers receive
// the compiled WebAssembly.Module, not bytes). Instantiating is instance.ts's (portable, shared
// with the embedding kit); wrapping the exports is kernels.ts's.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../package-root.ts';
import { setDefaultKernelModule } from './kernels.ts';

export { KernelAbort, instantiateKernels } from './instance.ts';

export type KernelBuild = 'release' | 'debug';

export function kernelWasmPath(build: KernelBuild = 'release'): string {
  const file = build === 'release' ? 'kernels.wasm' : 'kernels.debug.wasm';
  return join(PACKAGE_ROOT, 'build', file);
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

// Where Kernels.create() finds its module when it is given none: this file's compiled release build.
setDefaultKernelModule(() => compileKernels());

const digests = new Map<KernelBuild, string>();
/** SHA-256 (hex) of the module file: published in the manifest beside GET /kernels.wasm. */
export function kernelWasmSha256(build: KernelBuild = 'release'): string {
  let d = digests.get(build);
  if (!d) {
    d = createHash('sha256').update(readFileSync(kernelWasmPath(build))).digest('hex');
    digests.set(build, d);
  }
  return d;
}
