// @svc/kit/kernels: the proof kernels in any runtime — typed functions over Uint8Array on one instance of
// kernels.wasm, memory handled inside (inputs and outputs cross through one reused scratch region;
// nothing is left allocated between calls). Negative ABI returns throw KernelError (its kernelError
// is the ABI name: invalid_input, authentication_failed, invalid_proof, insufficient_capacity);
// bad arguments throw a ServiceError with code invalid_request naming the argument.
//
//   import { loadKernels } from '@svc/kit/kernels';
//   const k = await loadKernels();            // the package's kernels.wasm (or pass bytes/URL/Response)
//   k.sha256(bytes); k.xchachaSeal(key, nonce24, plaintext, aad); k.bvmRun(image, input, { fuel, maxOutput });
export { Kernels, KernelError, Sha256Stream, type BvmOptions, type BvmResult } from '../kernels/kernels.ts';
export {
  ABI_VERSION, BVM_LIMITS, BVM_STATUS, KERNEL_ERRORS, MERKLE_MAX_PROOF_HASHES, PULSE_MAX_BITS, type BvmStatus,
  type KernelErrorName, type KernelExports,
} from '../kernels/abi.ts';
export { KernelAbort, type KernelSource } from '../kernels/instance.ts';
export { assemble, buildImage, disassemble, type AssembleResult } from '../kernels/bvm-assembler.ts';
export { ServiceError } from '../errors.ts';
export { KERNELS_WASM_URL, loadKernels } from './load.ts';
