// SHA-256 (FIPS 180-4) one-shot and streaming over caller-owned context memory, and HMAC-SHA256
// (RFC 2104 / RFC 4231). No hidden state between calls: the streaming context lives at a pointer
// the caller owns, so several hashes can be in progress at once.
//
// Context layout (SHA256_CTX_SIZE = 112 bytes): [0,32) state words (host order), [32,96) block
// buffer, [96,104) total bytes as u64, [104,108) bytes buffered as u32.
import { sha256Blocks } from './sha256-compress.gen';

export const SHA256_CTX_SIZE: usize = 112;

const H0: u32 = 0x6a09e667, H1: u32 = 0xbb67ae85, H2: u32 = 0x3c6ef372, H3: u32 = 0xa54ff53a;
const H4: u32 = 0x510e527f, H5: u32 = 0x9b05688c, H6: u32 = 0x1f83d9ab, H7: u32 = 0x5be0cd19;

// Scratch for one-shot hashing and HMAC: two contexts and a 64-byte key block.
const scratchA = memory.data(112, 16);
const scratchB = memory.data(112, 16);
const keyBlock = memory.data(64, 16);
const innerDigest = memory.data(32, 16);

export function sha256Init(ctx: usize): void {
  store<u32>(ctx, H0, 0); store<u32>(ctx, H1, 4); store<u32>(ctx, H2, 8); store<u32>(ctx, H3, 12);
  store<u32>(ctx, H4, 16); store<u32>(ctx, H5, 20); store<u32>(ctx, H6, 24); store<u32>(ctx, H7, 28);
  store<u64>(ctx, 0, 96);
  store<u32>(ctx, 0, 104);
}

export function sha256Update(ctx: usize, p: usize, len: usize): void {
  let buffered = <usize>load<u32>(ctx, 104);
  store<u64>(ctx, load<u64>(ctx, 96) + <u64>len, 96);
  if (buffered != 0) {
    const take = min<usize>(64 - buffered, len);
    memory.copy(ctx + 32 + buffered, p, take);
    buffered += take; p += take; len -= take;
    if (buffered == 64) { sha256Blocks(ctx, ctx + 32, 1); buffered = 0; }
  }
  if (len >= 64) {
    const n = len >> 6;
    sha256Blocks(ctx, p, n);
    p += n << 6; len &= 63;
  }
  if (len != 0) { memory.copy(ctx + 32, p, len); buffered = len; }
  store<u32>(ctx, <u32>buffered, 104);
}

/** Pads, compresses the last block(s) and writes the 32-byte big-endian digest to `out`. */
export function sha256Final(ctx: usize, out: usize): void {
  let buffered = <usize>load<u32>(ctx, 104);
  const bitLen = load<u64>(ctx, 96) << 3;
  const buf = ctx + 32;
  store<u8>(buf + buffered, 0x80);
  buffered++;
  if (buffered > 56) {
    memory.fill(buf + buffered, 0, 64 - buffered);
    sha256Blocks(ctx, buf, 1);
    buffered = 0;
  }
  memory.fill(buf + buffered, 0, 56 - buffered);
  store<u64>(buf, bswap<u64>(bitLen), 56);
  sha256Blocks(ctx, buf, 1);
  for (let i: usize = 0; i < 32; i += 4) store<u32>(out + i, bswap<u32>(load<u32>(ctx + i)));
}

export function sha256(p: usize, len: usize, out: usize): void {
  sha256Init(scratchA);
  sha256Update(scratchA, p, len);
  sha256Final(scratchA, out);
}

/** SHA-256 of the 1-byte prefix ‖ data, as RFC 6962 leaf (0x00) and node (0x01) hashes need. */
export function sha256Prefixed(prefix: u8, a: usize, aLen: usize, b: usize, bLen: usize, out: usize): void {
  sha256Init(scratchB);
  store<u8>(keyBlock, prefix);
  sha256Update(scratchB, keyBlock, 1);
  sha256Update(scratchB, a, aLen);
  if (bLen != 0) sha256Update(scratchB, b, bLen);
  sha256Final(scratchB, out);
}

/** HMAC-SHA256 (RFC 2104); any key length (keys over 64 bytes are hashed first). */
export function hmacSha256(key: usize, keyLen: usize, msg: usize, msgLen: usize, out: usize): void {
  memory.fill(keyBlock, 0, 64);
  if (keyLen > 64) sha256(key, keyLen, keyBlock);
  else memory.copy(keyBlock, key, keyLen);
  for (let i: usize = 0; i < 64; i += 8) store<u64>(keyBlock + i, load<u64>(keyBlock + i) ^ 0x3636363636363636);
  sha256Init(scratchB);
  sha256Update(scratchB, keyBlock, 64);
  sha256Update(scratchB, msg, msgLen);
  sha256Final(scratchB, innerDigest);
  for (let i: usize = 0; i < 64; i += 8) {
    store<u64>(keyBlock + i, load<u64>(keyBlock + i) ^ (0x3636363636363636 ^ 0x5c5c5c5c5c5c5c5c));
  }
  sha256Init(scratchB);
  sha256Update(scratchB, keyBlock, 64);
  sha256Update(scratchB, innerDigest, 32);
  sha256Final(scratchB, out);
  memory.fill(keyBlock, 0, 64); // key material does not outlive the call
}
