// Reference pulse expansion (docs/kernels.md §pulse) over node:crypto, written from the spec.
import { createHash } from 'node:crypto';

const u32be = (v: number) => { const b = Buffer.alloc(4); b.writeUInt32BE(v >>> 0); return b; };

export function pulseReference(seed: Uint8Array, context: Uint8Array, bits: number): Uint8Array {
  const n = Math.ceil(bits / 8);
  const out = Buffer.alloc(Math.ceil(n / 32) * 32);
  for (let i = 0; i * 32 < n; i++) {
    createHash('sha256').update('svc/pulse/v1').update(u32be(bits)).update(u32be(seed.length)).update(seed)
      .update(u32be(context.length)).update(context).update(u32be(i)).digest().copy(out, i * 32);
  }
  const r = out.subarray(0, n);
  if (bits % 8) r[n - 1]! &= (0xff << (8 - (bits % 8))) & 0xff;
  return new Uint8Array(r);
}
