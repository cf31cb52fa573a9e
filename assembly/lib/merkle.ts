// RFC 6962 / RFC 9162 Merkle tree hashing over SHA-256: leaf = H(0x00 ‖ d), node = H(0x01 ‖ l ‖ r).
// Trees are given as arrays of 32-byte leaf hashes (n * 32 bytes, contiguous). Proof generation
// follows RFC 6962 §2.1.1 (PATH) and §2.1.2 (SUBPROOF); verification follows RFC 9162 §2.1.3.2
// and §2.1.4.2 step by step. Proofs are concatenated 32-byte hashes, deepest first.
import { sha256, sha256Prefixed } from './sha256';
import { ERR_INPUT, ERR_PROOF } from './errors';

export const MAX_PROOF_HASHES: usize = 64;

const tmpL = memory.data(32, 16);
const tmpR = memory.data(32, 16);
const fr = memory.data(32, 16);
const sr = memory.data(32, 16);
// Stack of subtree roots for mth(): at most 33 pending subtrees for 2^32 leaves.
const stackHashes = memory.data(33 * 32, 16);
const stackSizes = memory.data(33 * 4, 16);

export function leafHash(p: usize, len: usize, out: usize): void {
  sha256Prefixed(0, p, len, 0, 0, out);
}

export function nodeHash(l: usize, r: usize, out: usize): void {
  sha256Prefixed(1, l, 32, r, 32, out);
}

function largestPow2Below(n: u32): u32 {
  // largest power of two strictly less than n, for n >= 2
  return <u32>1 << (31 - clz<u32>(n - 1));
}

/** MTH over `n` leaf hashes at `leaves`; the empty tree hashes to SHA-256(""). */
export function mth(leaves: usize, n: u32, out: usize): void {
  if (n == 0) { sha256(0, 0, out); return; }
  let top: i32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    memory.copy(stackHashes + (<usize>top << 5), leaves + (<usize>i << 5), 32);
    store<u32>(stackSizes + (<usize>top << 2), 1);
    top++;
    // merge equal-sized neighbours: left-balanced tree, same shape as RFC 6962's recursion
    while (
      top >= 2
      && load<u32>(stackSizes + (<usize>(top - 1) << 2)) == load<u32>(stackSizes + (<usize>(top - 2) << 2))
    ) {
      const l = stackHashes + (<usize>(top - 2) << 5);
      nodeHash(l, l + 32, l);
      store<u32>(stackSizes + (<usize>(top - 2) << 2), load<u32>(stackSizes + (<usize>(top - 2) << 2)) << 1);
      top--;
    }
  }
  // fold the remaining (strictly decreasing) subtrees from the right
  while (top >= 2) {
    const l = stackHashes + (<usize>(top - 2) << 5);
    nodeHash(l, l + 32, l);
    top--;
  }
  memory.copy(out, stackHashes, 32);
}

function path(m: u32, leaves: usize, n: u32, out: usize): usize {
  if (n <= 1) return 0;
  const k = largestPow2Below(n);
  let w: usize;
  if (m < k) {
    w = path(m, leaves, k, out);
    mth(leaves + (<usize>k << 5), n - k, out + w);
  } else {
    w = path(m - k, leaves + (<usize>k << 5), n - k, out);
    mth(leaves, k, out + w);
  }
  return w + 32;
}

/** Inclusion proof of leaf `index` in the tree of `n` leaves; returns bytes written. */
export function inclusionProof(leaves: usize, n: u32, index: u32, out: usize): i32 {
  if (index >= n) return ERR_INPUT;
  return <i32>path(index, leaves, n, out);
}

function subproof(m: u32, leaves: usize, n: u32, b: bool, out: usize): usize {
  if (m == n) {
    if (b) return 0;
    mth(leaves, n, out);
    return 32;
  }
  const k = largestPow2Below(n);
  let w: usize;
  if (m <= k) {
    w = subproof(m, leaves, k, b, out);
    mth(leaves + (<usize>k << 5), n - k, out + w);
  } else {
    w = subproof(m - k, leaves + (<usize>k << 5), n - k, false, out);
    mth(leaves, k, out + w);
  }
  return w + 32;
}

/** Consistency proof between the first `m` leaves and all `n`; returns bytes written. */
export function consistencyProof(leaves: usize, n: u32, m: u32, out: usize): i32 {
  if (m > n) return ERR_INPUT;
  if (m == 0 || m == n) return 0;
  return <i32>subproof(m, leaves, n, true, out);
}

function eq32(a: usize, b: usize): bool {
  let d: u64 = 0;
  for (let i: usize = 0; i < 32; i += 8) d |= load<u64>(a + i) ^ load<u64>(b + i);
  return d == 0;
}

/** RFC 9162 §2.1.3.2. Returns 1 when the proof verifies, ERR_PROOF when not, ERR_INPUT for bad shape. */
export function verifyInclusion(leaf: usize, index: u64, size: u64, proof: usize, proofLen: usize, root: usize): i32 {
  if ((proofLen & 31) != 0 || (proofLen >> 5) > MAX_PROOF_HASHES) return ERR_INPUT;
  if (index >= size) return ERR_PROOF;
  let fn = index, sn = size - 1;
  memory.copy(fr, leaf, 32);
  const count = proofLen >> 5;
  for (let i: usize = 0; i < count; i++) {
    const p = proof + (i << 5);
    if (sn == 0) return ERR_PROOF;
    if ((fn & 1) != 0 || fn == sn) {
      nodeHash(p, fr, fr);
      if ((fn & 1) == 0) {
        while (!((fn & 1) != 0 || fn == 0)) { fn >>= 1; sn >>= 1; }
      }
    } else {
      nodeHash(fr, p, fr);
    }
    fn >>= 1; sn >>= 1;
  }
  return sn == 0 && eq32(fr, root) ? 1 : ERR_PROOF;
}

/** RFC 9162 §2.1.4.2. Returns 1 when consistent, ERR_PROOF when not, ERR_INPUT for bad shape. */
export function verifyConsistency(
  size1: u64, size2: u64, root1: usize, root2: usize, proof: usize, proofLen: usize
): i32 {
  if ((proofLen & 31) != 0 || (proofLen >> 5) > MAX_PROOF_HASHES) return ERR_INPUT;
  const count = proofLen >> 5;
  // a consistency check from the empty tree proves nothing and is refused (transparency-dev does too)
  if (size1 == 0 || size2 < size1) return ERR_PROOF;
  if (size1 == size2) return count == 0 && eq32(root1, root2) ? 1 : ERR_PROOF;
  if (count == 0) return ERR_PROOF;
  // when size1 is a power of two, root1 is the implicit first element of the path
  const pow2 = (size1 & (size1 - 1)) == 0;
  let start: usize = 0;
  if (pow2) memory.copy(fr, root1, 32); else { memory.copy(fr, proof, 32); start = 1; }
  memory.copy(sr, fr, 32);
  let fn = size1 - 1, sn = size2 - 1;
  while ((fn & 1) != 0) { fn >>= 1; sn >>= 1; }
  for (let i = start; i < count; i++) {
    const c = proof + (i << 5);
    if (sn == 0) return ERR_PROOF;
    if ((fn & 1) != 0 || fn == sn) {
      nodeHash(c, fr, fr);
      nodeHash(c, sr, sr);
      if ((fn & 1) == 0) {
        while (!((fn & 1) != 0 || fn == 0)) { fn >>= 1; sn >>= 1; }
      }
    } else {
      nodeHash(sr, c, sr);
    }
    fn >>= 1; sn >>= 1;
  }
  return sn == 0 && eq32(fr, root1) && eq32(sr, root2) ? 1 : ERR_PROOF;
}
