// ChaCha20 (RFC 8439 §2.4), Poly1305 (§2.5), the ChaCha20-Poly1305 AEAD (§2.8) and its extended-
// nonce form XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha-03 §2.3). Keystream in 4-block v128
// passes (chachaXor4) with a scalar tail; Poly1305 on 26-bit limbs with 64-bit products
// (poly1305-donna-32 layout), since WASM has no 64x64→128 multiply.
//
// Tag comparison is constant-time, and open() verifies the tag before writing any plaintext.
// `out` may be the input buffer itself (exact alias); any other overlap is undefined.
import { chachaBlock, chachaXor4, hchachaCore } from './chacha-core.gen';
import { ERR_AUTH, ERR_INPUT } from './errors';

const state = memory.data(64, 16);
const block = memory.data(64, 16);
const polyKey = memory.data(32, 16);
const subKey = memory.data(32, 16);
const nonce12 = memory.data(12, 16);
const pad16 = memory.data(16, 16);
const tagBuf = memory.data(16, 16);

function setupState(key: usize, counter: u32, nonce: usize): void {
  store<u32>(state, 0x61707865, 0); store<u32>(state, 0x3320646e, 4);
  store<u32>(state, 0x79622d32, 8); store<u32>(state, 0x6b206574, 12);
  memory.copy(state + 16, key, 32);
  store<u32>(state, counter, 48);
  memory.copy(state + 52, nonce, 12);
}

/** XOR `len` bytes of ChaCha20 keystream (key, 12-byte nonce, initial counter) from src into dst. */
export function chacha20Xor(key: usize, nonce: usize, counter: u32, src: usize, len: usize, dst: usize): void {
  setupState(key, counter, nonce);
  xorStream(src, len, dst);
}

function xorStream(src: usize, len: usize, dst: usize): void {
  while (len >= 256) {
    chachaXor4(state, src, dst);
    src += 256; dst += 256; len -= 256;
  }
  while (len != 0) {
    chachaBlock(state, block);
    store<u32>(state, load<u32>(state, 48) + 1, 48);
    const n = min<usize>(len, 64);
    let i: usize = 0;
    for (; i + 8 <= n; i += 8) store<u64>(dst + i, load<u64>(src + i) ^ load<u64>(block + i));
    for (; i < n; i++) store<u8>(dst + i, load<u8>(src + i) ^ load<u8>(block + i));
    src += n; dst += n; len -= n;
  }
}

/** HChaCha20(key, 16-byte nonce) → 32-byte subkey. */
export function hchacha20(key: usize, nonce16: usize, out: usize): void {
  store<u32>(state, 0x61707865, 0); store<u32>(state, 0x3320646e, 4);
  store<u32>(state, 0x79622d32, 8); store<u32>(state, 0x6b206574, 12);
  memory.copy(state + 16, key, 32);
  memory.copy(state + 48, nonce16, 16);
  hchachaCore(state, out);
}

// ---- Poly1305 ---------------------------------------------------------------------------------

let r0: u64 = 0, r1: u64 = 0, r2: u64 = 0, r3: u64 = 0, r4: u64 = 0;
let h0: u32 = 0, h1: u32 = 0, h2: u32 = 0, h3: u32 = 0, h4: u32 = 0;

function polyInit(key: usize): void {
  r0 = <u64>(load<u32>(key, 0) & 0x3ffffff);
  r1 = <u64>((load<u32>(key, 3) >> 2) & 0x3ffff03);
  r2 = <u64>((load<u32>(key, 6) >> 4) & 0x3ffc0ff);
  r3 = <u64>((load<u32>(key, 9) >> 6) & 0x3f03fff);
  r4 = <u64>((load<u32>(key, 12) >> 8) & 0x00fffff);
  h0 = 0; h1 = 0; h2 = 0; h3 = 0; h4 = 0;
}

/** Absorbs `n` full 16-byte blocks; hibit is 1<<24 for full message blocks, 0 for the padded last. */
function polyBlocks(m: usize, n: usize, hibit: u32): void {
  const R0 = r0, R1 = r1, R2 = r2, R3 = r3, R4 = r4;
  const S1 = R1 * 5, S2 = R2 * 5, S3 = R3 * 5, S4 = R4 * 5;
  let a0 = h0, a1 = h1, a2 = h2, a3 = h3, a4 = h4;
  while (n != 0) {
    a0 += load<u32>(m, 0) & 0x3ffffff;
    a1 += (load<u32>(m, 3) >> 2) & 0x3ffffff;
    a2 += (load<u32>(m, 6) >> 4) & 0x3ffffff;
    a3 += (load<u32>(m, 9) >> 6) & 0x3ffffff;
    a4 += (load<u32>(m, 12) >> 8) | hibit;
    const b0 = <u64>a0, b1 = <u64>a1, b2 = <u64>a2, b3 = <u64>a3, b4 = <u64>a4;
    let d0 = b0 * R0 + b1 * S4 + b2 * S3 + b3 * S2 + b4 * S1;
    let d1 = b0 * R1 + b1 * R0 + b2 * S4 + b3 * S3 + b4 * S2;
    let d2 = b0 * R2 + b1 * R1 + b2 * R0 + b3 * S4 + b4 * S3;
    let d3 = b0 * R3 + b1 * R2 + b2 * R1 + b3 * R0 + b4 * S4;
    let d4 = b0 * R4 + b1 * R3 + b2 * R2 + b3 * R1 + b4 * R0;
    let c = d0 >> 26; a0 = <u32>d0 & 0x3ffffff;
    d1 += c; c = d1 >> 26; a1 = <u32>d1 & 0x3ffffff;
    d2 += c; c = d2 >> 26; a2 = <u32>d2 & 0x3ffffff;
    d3 += c; c = d3 >> 26; a3 = <u32>d3 & 0x3ffffff;
    d4 += c; c = d4 >> 26; a4 = <u32>d4 & 0x3ffffff;
    a0 += <u32>c * 5; const c2 = a0 >> 26; a0 &= 0x3ffffff; a1 += c2;
    m += 16; n--;
  }
  h0 = a0; h1 = a1; h2 = a2; h3 = a3; h4 = a4;
}

/**
 * Absorbs `len` bytes: full blocks, then the tail. AEAD input (RFC 8439 §2.8) zero-pads the tail to
 * a full block (`aead`); a plain MAC (§2.5) appends 0x01 and absorbs it without the 2^128 bit.
 */
function polyAbsorb(m: usize, len: usize, aead: bool): void {
  const full = len >> 4;
  if (full != 0) polyBlocks(m, full, 1 << 24);
  const rest = len & 15;
  if (rest != 0) {
    memory.fill(pad16, 0, 16);
    memory.copy(pad16, m + (full << 4), rest);
    if (!aead) store<u8>(pad16 + rest, 1);
    polyBlocks(pad16, 1, aead ? 1 << 24 : 0);
  }
}

/** Final reduction mod 2^130-5, adds s (key[16..32]) and writes the 16-byte tag. */
function polyFinish(key: usize, out: usize): void {
  let a0 = h0, a1 = h1, a2 = h2, a3 = h3, a4 = h4;
  let c = a1 >> 26; a1 &= 0x3ffffff;
  a2 += c; c = a2 >> 26; a2 &= 0x3ffffff;
  a3 += c; c = a3 >> 26; a3 &= 0x3ffffff;
  a4 += c; c = a4 >> 26; a4 &= 0x3ffffff;
  a0 += c * 5; c = a0 >> 26; a0 &= 0x3ffffff;
  a1 += c;
  // g = h + 5 - 2^130; pick g when it does not borrow (h >= p), in constant time.
  let g0 = a0 + 5; c = g0 >> 26; g0 &= 0x3ffffff;
  let g1 = a1 + c; c = g1 >> 26; g1 &= 0x3ffffff;
  let g2 = a2 + c; c = g2 >> 26; g2 &= 0x3ffffff;
  let g3 = a3 + c; c = g3 >> 26; g3 &= 0x3ffffff;
  let g4 = a4 + c - (1 << 26);
  let mask = (g4 >> 31) - 1;
  g0 &= mask; g1 &= mask; g2 &= mask; g3 &= mask; g4 &= mask;
  mask = ~mask;
  a0 = (a0 & mask) | g0; a1 = (a1 & mask) | g1; a2 = (a2 & mask) | g2;
  a3 = (a3 & mask) | g3; a4 = (a4 & mask) | g4;
  const w0 = a0 | (a1 << 26);
  const w1 = (a1 >> 6) | (a2 << 20);
  const w2 = (a2 >> 12) | (a3 << 14);
  const w3 = (a3 >> 18) | (a4 << 8);
  let f = <u64>w0 + <u64>load<u32>(key, 16); store<u32>(out, <u32>f, 0);
  f = <u64>w1 + <u64>load<u32>(key, 20) + (f >> 32); store<u32>(out, <u32>f, 4);
  f = <u64>w2 + <u64>load<u32>(key, 24) + (f >> 32); store<u32>(out, <u32>f, 8);
  f = <u64>w3 + <u64>load<u32>(key, 28) + (f >> 32); store<u32>(out, <u32>f, 12);
}

/** One-shot Poly1305 MAC (RFC 8439 §2.5) of `len` bytes under a 32-byte one-time key. */
export function poly1305(key: usize, m: usize, len: usize, out: usize): void {
  polyInit(key);
  polyAbsorb(m, len, false);
  polyFinish(key, out);
}

function aeadTag(aad: usize, aadLen: usize, ct: usize, ctLen: usize, out: usize): void {
  polyInit(polyKey);
  polyAbsorb(aad, aadLen, true);
  polyAbsorb(ct, ctLen, true);
  store<u64>(pad16, <u64>aadLen, 0);
  store<u64>(pad16, <u64>ctLen, 8);
  polyBlocks(pad16, 1, 1 << 24);
  polyFinish(polyKey, out);
}

function derivePolyKey(key: usize, nonce: usize): void {
  setupState(key, 0, nonce);
  chachaBlock(state, block);
  memory.copy(polyKey, block, 32);
  store<u32>(state, 1, 48);
}

/** Constant-time comparison of two 16-byte tags: 0 when equal. */
function tagDiff(a: usize, b: usize): u64 {
  return (load<u64>(a, 0) ^ load<u64>(b, 0)) | (load<u64>(a, 8) ^ load<u64>(b, 8));
}

function wipe(): void {
  memory.fill(polyKey, 0, 32); memory.fill(block, 0, 64); memory.fill(state, 0, 64);
  memory.fill(subKey, 0, 32);
}

/** RFC 8439 §2.8 seal: writes ciphertext ‖ 16-byte tag to out; returns msgLen + 16. */
export function chacha20poly1305Seal(
  key: usize, nonce: usize, aad: usize, aadLen: usize, msg: usize, msgLen: usize, out: usize
): i32 {
  if (<u64>msgLen > 0x7fffffef) return ERR_INPUT;
  derivePolyKey(key, nonce);
  xorStream(msg, msgLen, out);
  aeadTag(aad, aadLen, out, msgLen, out + msgLen);
  wipe();
  return <i32>(msgLen + 16);
}

/** RFC 8439 §2.8 open: input is ciphertext ‖ tag; returns plaintext length, or ERR_AUTH. */
export function chacha20poly1305Open(
  key: usize, nonce: usize, aad: usize, aadLen: usize, ct: usize, ctLen: usize, out: usize
): i32 {
  if (ctLen < 16) return ERR_INPUT;
  const n = ctLen - 16;
  derivePolyKey(key, nonce);
  aeadTag(aad, aadLen, ct, n, tagBuf);
  if (tagDiff(tagBuf, ct + n) != 0) { wipe(); return ERR_AUTH; }
  xorStream(ct, n, out);
  wipe();
  return <i32>n;
}

function xNonce(key: usize, nonce24: usize): void {
  hchacha20(key, nonce24, subKey);
  store<u32>(nonce12, 0, 0);
  memory.copy(nonce12 + 4, nonce24 + 16, 8);
}

/** XChaCha20-Poly1305 seal with a 24-byte nonce; returns msgLen + 16. */
export function xchacha20poly1305Seal(
  key: usize, nonce: usize, aad: usize, aadLen: usize, msg: usize, msgLen: usize, out: usize
): i32 {
  xNonce(key, nonce);
  return chacha20poly1305Seal(subKey, nonce12, aad, aadLen, msg, msgLen, out);
}

/** XChaCha20-Poly1305 open with a 24-byte nonce; returns plaintext length, or ERR_AUTH. */
export function xchacha20poly1305Open(
  key: usize, nonce: usize, aad: usize, aadLen: usize, ct: usize, ctLen: usize, out: usize
): i32 {
  if (ctLen < 16) return ERR_INPUT;
  xNonce(key, nonce);
  return chacha20poly1305Open(subKey, nonce12, aad, aadLen, ct, ctLen, out);
}
