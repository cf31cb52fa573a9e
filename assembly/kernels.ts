// svc proof kernels: the raw ABI exported by build/kernels.wasm (docs/kernels.md is its reference).
// Only numbers cross the boundary: the host calls alloc(), writes inputs into the exported memory,
// calls a kernel with (pointer, length) pairs, reads the output and calls free(). Every kernel
// returns i32: >= 0 bytes written (or 1 = "valid" for verifiers), < 0 an ERR_* code.
// The module imports nothing but env.abort. No state survives between calls except the allocator.
import { ERR_CAPACITY, ERR_INPUT } from './lib/errors';
import { SHA256_CTX_SIZE, hmacSha256, sha256, sha256Final, sha256Init, sha256Update } from './lib/sha256';
import {
  chacha20Xor, chacha20poly1305Open, chacha20poly1305Seal, hchacha20, poly1305,
  xchacha20poly1305Open, xchacha20poly1305Seal,
} from './lib/chacha20poly1305';
import {
  consistencyProof, inclusionProof, leafHash, mth, nodeHash, verifyConsistency, verifyInclusion,
} from './lib/merkle';
import { pulseExpand } from './lib/pulse';
import { bvmRun } from './lib/bvm';

/** ABI version; bumped on any incompatible change to an export below. */
export const ABI_VERSION: i32 = 1;

// ---- memory ----
export function alloc(len: usize): usize { return heap.alloc(len == 0 ? 1 : len); }
export function free(ptr: usize): void { heap.free(ptr); }

// ---- SHA-256 / HMAC ----
export const SHA256_CTX_BYTES: i32 = <i32>SHA256_CTX_SIZE;
export function sha256_digest(inPtr: usize, inLen: usize, outPtr: usize): i32 {
  sha256(inPtr, inLen, outPtr);
  return 32;
}
export function sha256_init(ctx: usize): i32 { sha256Init(ctx); return 0; }
export function sha256_update(ctx: usize, inPtr: usize, inLen: usize): i32 {
  sha256Update(ctx, inPtr, inLen);
  return 0;
}
export function sha256_final(ctx: usize, outPtr: usize): i32 { sha256Final(ctx, outPtr); return 32; }
export function hmac_sha256(keyPtr: usize, keyLen: usize, msgPtr: usize, msgLen: usize, outPtr: usize): i32 {
  hmacSha256(keyPtr, keyLen, msgPtr, msgLen, outPtr); return 32;
}

// ---- ChaCha20 / Poly1305 / AEAD ----
export function chacha20_xor(
  keyPtr: usize, noncePtr: usize, counter: u32, inPtr: usize, len: usize, outPtr: usize
): i32 {
  chacha20Xor(keyPtr, noncePtr, counter, inPtr, len, outPtr); return <i32>len;
}
export function hchacha20_subkey(keyPtr: usize, nonce16Ptr: usize, outPtr: usize): i32 {
  hchacha20(keyPtr, nonce16Ptr, outPtr);
  return 32;
}
export function poly1305_mac(keyPtr: usize, msgPtr: usize, msgLen: usize, outPtr: usize): i32 {
  poly1305(keyPtr, msgPtr, msgLen, outPtr);
  return 16;
}
export function chacha20poly1305_seal(
  keyPtr: usize, noncePtr: usize, aadPtr: usize, aadLen: usize, msgPtr: usize, msgLen: usize, outPtr: usize
): i32 {
  return chacha20poly1305Seal(keyPtr, noncePtr, aadPtr, aadLen, msgPtr, msgLen, outPtr);
}
export function chacha20poly1305_open(
  keyPtr: usize, noncePtr: usize, aadPtr: usize, aadLen: usize, ctPtr: usize, ctLen: usize, outPtr: usize
): i32 {
  return chacha20poly1305Open(keyPtr, noncePtr, aadPtr, aadLen, ctPtr, ctLen, outPtr);
}
export function xchacha20poly1305_seal(
  keyPtr: usize, noncePtr: usize, aadPtr: usize, aadLen: usize, msgPtr: usize, msgLen: usize, outPtr: usize
): i32 {
  return xchacha20poly1305Seal(keyPtr, noncePtr, aadPtr, aadLen, msgPtr, msgLen, outPtr);
}
export function xchacha20poly1305_open(
  keyPtr: usize, noncePtr: usize, aadPtr: usize, aadLen: usize, ctPtr: usize, ctLen: usize, outPtr: usize
): i32 {
  return xchacha20poly1305Open(keyPtr, noncePtr, aadPtr, aadLen, ctPtr, ctLen, outPtr);
}

// ---- Merkle (RFC 6962 / 9162) ----
export function merkle_leaf_hash(inPtr: usize, inLen: usize, outPtr: usize): i32 {
  leafHash(inPtr, inLen, outPtr);
  return 32;
}
export function merkle_node_hash(leftPtr: usize, rightPtr: usize, outPtr: usize): i32 {
  nodeHash(leftPtr, rightPtr, outPtr);
  return 32;
}
export function merkle_root(leavesPtr: usize, n: u32, outPtr: usize): i32 { mth(leavesPtr, n, outPtr); return 32; }
export function merkle_inclusion_proof(leavesPtr: usize, n: u32, index: u32, outPtr: usize, outCap: usize): i32 {
  if (outCap < 64 * 32) return ERR_CAPACITY;
  return inclusionProof(leavesPtr, n, index, outPtr);
}
export function merkle_consistency_proof(leavesPtr: usize, n: u32, m: u32, outPtr: usize, outCap: usize): i32 {
  if (outCap < 64 * 32) return ERR_CAPACITY;
  return consistencyProof(leavesPtr, n, m, outPtr);
}
export function merkle_verify_inclusion(
  leafHashPtr: usize, index: u64, size: u64, proofPtr: usize, proofLen: usize, rootPtr: usize
): i32 {
  return verifyInclusion(leafHashPtr, index, size, proofPtr, proofLen, rootPtr);
}
export function merkle_verify_consistency(
  size1: u64, size2: u64, root1Ptr: usize, root2Ptr: usize, proofPtr: usize, proofLen: usize
): i32 {
  return verifyConsistency(size1, size2, root1Ptr, root2Ptr, proofPtr, proofLen);
}

// ---- pulse ----
export function pulse_expand(
  seedPtr: usize, seedLen: usize, ctxPtr: usize, ctxLen: usize, bits: u32, outPtr: usize, outCap: usize
): i32 {
  if (bits < 1 || bits > 65536) return ERR_INPUT;
  if (outCap < <usize>((bits + 7) >> 3)) return ERR_CAPACITY;
  return pulseExpand(seedPtr, seedLen, ctxPtr, ctxLen, bits, outPtr);
}

// ---- BVM ----
export function bvm_run(
  imgPtr: usize, imgLen: u32, inPtr: usize, inLen: u32, fuel: u32, maxOut: u32, outPtr: usize, resPtr: usize
): i32 {
  return bvmRun(imgPtr, imgLen, inPtr, inLen, fuel, maxOut, outPtr, resPtr);
}
