// Public surface of the kernels layer (re-exports only).
export * from './abi.ts';
export { Kernels, KernelError, Sha256Stream, type BvmOptions, type BvmResult } from './kernels.ts';
export { KernelPool, type KernelPoolOptions, type RunOptions } from './pool.ts';
export { compileKernels, instantiateKernels, kernelWasmPath, kernelWasmSha256, KernelAbort } from './wasm.ts';
export { instantiateKernelsAsync, type KernelSource } from './instance.ts';
export type { OpName, OpTable } from './ops.ts';
