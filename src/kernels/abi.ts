// The raw ABI of build/kernels.wasm as TypeScript types and constants: the export signatures, the
// error code table (mirrors assembly/lib/errors.ts) and the BVM status table (mirrors
// assembly/lib/bvm.ts). docs/kernels.md documents the same; test/kernels/abi.test.ts keeps all three in step.

export const ABI_VERSION = 1;

export const KERNEL_ERRORS = {
  [-1]: 'invalid_input',
  [-2]: 'authentication_failed',
  [-3]: 'invalid_proof',
  [-4]: 'insufficient_capacity',
} as const satisfies Record<number, string>;

export type KernelErrorName = (typeof KERNEL_ERRORS)[keyof typeof KERNEL_ERRORS];

/** BVM run status: index = code returned by bvm_run. */
export const BVM_STATUS = [
  'halted',
  'out_of_fuel',
  'stack_overflow',
  'stack_underflow',
  'memory_out_of_bounds',
  'output_limit',
  'invalid_opcode',
  'invalid_image',
  'division_by_zero',
  'pc_out_of_bounds',
  'call_stack_overflow',
  'call_stack_underflow',
  'input_out_of_bounds',
] as const;
export type BvmStatus = (typeof BVM_STATUS)[number];

export const BVM_LIMITS = {
  maxMemory: 65536,
  maxCode: 65536,
  stackMax: 1024,
  callMax: 256,
  headerBytes: 24,
  maxFuel: 0xffff_ffff,
} as const;

export const PULSE_MAX_BITS = 65536;
export const MERKLE_MAX_PROOF_HASHES = 64;

type Ptr = number;
/** Exports of build/kernels.wasm (all pointers and lengths are u32; tree sizes are u64 as bigint). */
export interface KernelExports {
  readonly memory: WebAssembly.Memory;
  readonly ABI_VERSION: WebAssembly.Global;
  readonly SHA256_CTX_BYTES: WebAssembly.Global;
  alloc(len: number): Ptr;
  free(ptr: Ptr): void;
  sha256_digest(inPtr: Ptr, inLen: number, outPtr: Ptr): number;
  sha256_init(ctx: Ptr): number;
  sha256_update(ctx: Ptr, inPtr: Ptr, inLen: number): number;
  sha256_final(ctx: Ptr, outPtr: Ptr): number;
  hmac_sha256(keyPtr: Ptr, keyLen: number, msgPtr: Ptr, msgLen: number, outPtr: Ptr): number;
  chacha20_xor(keyPtr: Ptr, noncePtr: Ptr, counter: number, inPtr: Ptr, len: number, outPtr: Ptr): number;
  hchacha20_subkey(keyPtr: Ptr, nonce16Ptr: Ptr, outPtr: Ptr): number;
  poly1305_mac(keyPtr: Ptr, msgPtr: Ptr, msgLen: number, outPtr: Ptr): number;
  chacha20poly1305_seal(
    keyPtr: Ptr, noncePtr: Ptr, aadPtr: Ptr, aadLen: number, msgPtr: Ptr, msgLen: number, outPtr: Ptr,
  ): number;
  chacha20poly1305_open(
    keyPtr: Ptr, noncePtr: Ptr, aadPtr: Ptr, aadLen: number, ctPtr: Ptr, ctLen: number, outPtr: Ptr,
  ): number;
  xchacha20poly1305_seal(
    keyPtr: Ptr, noncePtr: Ptr, aadPtr: Ptr, aadLen: number, msgPtr: Ptr, msgLen: number, outPtr: Ptr,
  ): number;
  xchacha20poly1305_open(
    keyPtr: Ptr, noncePtr: Ptr, aadPtr: Ptr, aadLen: number, ctPtr: Ptr, ctLen: number, outPtr: Ptr,
  ): number;
  merkle_leaf_hash(inPtr: Ptr, inLen: number, outPtr: Ptr): number;
  merkle_node_hash(leftPtr: Ptr, rightPtr: Ptr, outPtr: Ptr): number;
  merkle_root(leavesPtr: Ptr, n: number, outPtr: Ptr): number;
  merkle_inclusion_proof(leavesPtr: Ptr, n: number, index: number, outPtr: Ptr, outCap: number): number;
  merkle_consistency_proof(leavesPtr: Ptr, n: number, m: number, outPtr: Ptr, outCap: number): number;
  merkle_verify_inclusion(
    leafHashPtr: Ptr, index: bigint, size: bigint, proofPtr: Ptr, proofLen: number, rootPtr: Ptr,
  ): number;
  merkle_verify_consistency(
    size1: bigint, size2: bigint, root1Ptr: Ptr, root2Ptr: Ptr, proofPtr: Ptr, proofLen: number,
  ): number;
  pulse_expand(
    seedPtr: Ptr, seedLen: number, ctxPtr: Ptr, ctxLen: number, bits: number, outPtr: Ptr, outCap: number,
  ): number;
  bvm_run(
    imgPtr: Ptr, imgLen: number, inPtr: Ptr, inLen: number, fuel: number, maxOut: number, outPtr: Ptr, resPtr: Ptr,
  ): number;
}
