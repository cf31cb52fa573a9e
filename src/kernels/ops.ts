// The kernel operations a job may name, shared by the pool (to run small jobs inline) and the
// workers. One table, so a job runs identically on either side. Each op takes structured-
// cloneable arguments and returns a structured-cloneable result.
import type { BvmOptions, BvmResult, Kernels } from './kernels.ts';

export interface OpTable {
  sha256: { args: [data: Uint8Array]; result: Uint8Array };
  hmacSha256: { args: [key: Uint8Array, message: Uint8Array]; result: Uint8Array };
  xchachaSeal: {
    args: [key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array];
    result: Uint8Array;
  };
  xchachaOpen: {
    args: [key: Uint8Array, nonce: Uint8Array, sealed: Uint8Array, aad: Uint8Array];
    result: Uint8Array | null;
  };
  merkleRoot: { args: [leafHashes: Uint8Array[]]; result: Uint8Array };
  pulseExpand: { args: [seed: Uint8Array, context: Uint8Array, bits: number]; result: Uint8Array };
  bvmRun: { args: [image: Uint8Array, input: Uint8Array, opts: BvmOptions]; result: BvmResult };
}
export type OpName = keyof OpTable;

export const OPS: { [K in OpName]: (k: Kernels, ...args: OpTable[K]['args']) => OpTable[K]['result'] } = {
  sha256: (k, data) => k.sha256(data),
  hmacSha256: (k, key, msg) => k.hmacSha256(key, msg),
  xchachaSeal: (k, key, nonce, pt, aad) => k.xchachaSeal(key, nonce, pt, aad),
  xchachaOpen: (k, key, nonce, ct, aad) => k.xchachaOpen(key, nonce, ct, aad),
  merkleRoot: (k, leaves) => k.merkleRoot(leaves),
  pulseExpand: (k, seed, ctx, bits) => k.pulseExpand(seed, ctx, bits),
  bvmRun: (k, image, input, opts) => k.bvmRun(image, input, opts),
};

export function isOpName(s: unknown): s is OpName {
  return typeof s === 'string' && Object.hasOwn(OPS, s);
}

/**
 * Expected cost of a job in microseconds on one core, from the kernel benchmark (bench/kernels.ts
 * prints the measured rates these come from). Used only to route: jobs well under a pool round
 * trip (~87 µs measured, DESIGN.md §7) run inline on the calling thread.
 */
export function estimateMicros<K extends OpName>(op: K, args: OpTable[K]['args']): number {
  switch (op) {
    case 'sha256': return 0.3 + (args[0] as Uint8Array).length / 350;
    case 'hmacSha256': return 0.6 + ((args[0] as Uint8Array).length + (args[1] as Uint8Array).length) / 350;
    case 'xchachaSeal':
    case 'xchachaOpen': return 1 + (args[2] as Uint8Array).length / 400;
    case 'merkleRoot': return 1 + (args[0] as Uint8Array[]).length * 0.5;
    case 'pulseExpand': return 1 + Math.ceil((args[2] as number) / 256) * 0.2;
    case 'bvmRun': return (args[2] as BvmOptions).fuel / 400;
    default: return Infinity;
  }
}
