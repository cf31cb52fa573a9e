// Public surface of the kernels layer (re-exports only).
export * from './abi.ts';
export { Kernels, Sha256Stream, type BvmOptions, type BvmResult } from './kernels.ts';
export { KernelPool, type KernelPoolOptions, type RunOptions } from './pool.ts';
export { compileKernels, instantiateKernels, kernelWasmPath, KernelAbort } from './wasm.ts';
export type { OpName, OpTable } from './ops.ts';
