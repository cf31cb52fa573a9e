// Pulse expansion for GET_PULSE (DESIGN.md §8; byte layout in docs/kernels.md):
//   block_i = SHA-256("svc/pulse/v1" ‖ u32be(bits) ‖ u32be(len(seed)) ‖ seed
//                     ‖ u32be(len(context)) ‖ context ‖ u32be(i))
//   output  = first ceil(bits/8) bytes of block_0 ‖ block_1 ‖ ...; when bits % 8 != 0 the unused
//             low-order bits of the last byte are zero (the output is the first `bits` bits, MSB first).
// The counter comes last so the common prefix is hashed once and its midstate cloned per block.
import { SHA256_CTX_SIZE, sha256Final, sha256Init, sha256Update } from './sha256';
import { ERR_INPUT } from './errors';

export const PULSE_MAX_BITS: u32 = 65536;

const prefixCtx = memory.data(112, 16);
const blockCtx = memory.data(112, 16);
const word = memory.data(16, 16);
const digest = memory.data(32, 16);
// "svc/pulse/v1"
const DST = memory.data<u8>([0x73, 0x76, 0x63, 0x2f, 0x70, 0x75, 0x6c, 0x73, 0x65, 0x2f, 0x76, 0x31]);

function u32be(v: u32): usize {
  store<u32>(word, bswap<u32>(v));
  return word;
}

/** Writes ceil(bits/8) bytes to out; returns that count or ERR_INPUT when bits is not in 1..65536. */
export function pulseExpand(
  seed: usize, seedLen: usize, context: usize, contextLen: usize, bits: u32, out: usize
): i32 {
  if (bits < 1 || bits > PULSE_MAX_BITS) return ERR_INPUT;
  const nbytes = <usize>((bits + 7) >> 3);
  sha256Init(prefixCtx);
  sha256Update(prefixCtx, DST, 12);
  sha256Update(prefixCtx, u32be(bits), 4);
  sha256Update(prefixCtx, u32be(<u32>seedLen), 4);
  sha256Update(prefixCtx, seed, seedLen);
  sha256Update(prefixCtx, u32be(<u32>contextLen), 4);
  sha256Update(prefixCtx, context, contextLen);
  let written: usize = 0;
  for (let i: u32 = 0; written < nbytes; i++) {
    memory.copy(blockCtx, prefixCtx, SHA256_CTX_SIZE);
    sha256Update(blockCtx, u32be(i), 4);
    const take = min<usize>(32, nbytes - written);
    if (take == 32) sha256Final(blockCtx, out + written);
    else { sha256Final(blockCtx, digest); memory.copy(out + written, digest, take); }
    written += take;
  }
  const rem = bits & 7;
  if (rem != 0) {
    const last = out + nbytes - 1;
    store<u8>(last, load<u8>(last) & <u8>((<u32>0xff << (8 - rem)) & 0xff));
  }
  return <i32>nbytes;
}
