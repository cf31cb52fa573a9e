// Error codes every kernel entry point returns (as a negative i32). The table is mirrored in
// src/kernels/abi.ts and documented in docs/kernels.md; a test keeps the three in step.

/** An argument is out of its documented range (length, bits, size, index). */
export const ERR_INPUT: i32 = -1;
/** Authentication failed: AEAD tag mismatch. Nothing was written to the output. */
export const ERR_AUTH: i32 = -2;
/** A proof is malformed or does not verify (Merkle). */
export const ERR_PROOF: i32 = -3;
/** The output capacity the caller gave is too small. */
export const ERR_CAPACITY: i32 = -4;
