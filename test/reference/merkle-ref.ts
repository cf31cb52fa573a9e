// Reference RFC 6962 §2.1 Merkle recursion, straight from the text, over node:crypto: the oracle
// for the WASM kernels and for the transparency log.
import { createHash } from 'node:crypto';

export const H = (...parts: Uint8Array[]): Buffer => createHash('sha256').update(Buffer.concat(parts)).digest();

const split = (n: number) => { let k = 1; while (k * 2 < n) k *= 2; return k; };

export function refRoot(l: Uint8Array[]): Uint8Array {
  if (l.length === 0) return H();
  if (l.length === 1) return l[0]!;
  const k = split(l.length);
  return H(Uint8Array.of(1), refRoot(l.slice(0, k)), refRoot(l.slice(k)));
}

export function refPath(m: number, l: Uint8Array[]): Uint8Array[] {
  if (l.length <= 1) return [];
  const k = split(l.length);
  return m < k
    ? [...refPath(m, l.slice(0, k)), refRoot(l.slice(k))]
    : [...refPath(m - k, l.slice(k)), refRoot(l.slice(0, k))];
}

export function refSubproof(m: number, l: Uint8Array[], b: boolean): Uint8Array[] {
  if (m === l.length) return b ? [] : [refRoot(l)];
  const k = split(l.length);
  return m <= k
    ? [...refSubproof(m, l.slice(0, k), b), refRoot(l.slice(k))]
    : [...refSubproof(m - k, l.slice(k), false), refRoot(l.slice(0, k))];
}
