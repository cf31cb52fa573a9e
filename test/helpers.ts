// Shared test helpers: hex codecs, the project's own vectors, and the optional shared/vectors
// folder (absent in a user's clone: tests over it skip with a visible message; with CI set they fail,
// see support/needs.ts).
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext, TestFn } from 'ava';
import { testNeeding } from './support/needs.ts';

export const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
export const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
export const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

export function ownVectors<T = any>(name: string): T {
  return JSON.parse(readFileSync(fileURLToPath(new URL(`./vectors/${name}`, import.meta.url)), 'utf8')) as T;
}

/**
 * The upstream conformance vectors (Wycheproof, NIST CAVP, RFC 8785, RFC 6962, RFC 9180): byte-exact
 * copies in test/vectors/upstream, their provenance and licences in its README.md and their hashes in
 * its SHA256SUMS. SVC_SHARED_VECTORS points the tests at another copy.
 */
export const SHARED_VECTORS = process.env.SVC_SHARED_VECTORS
  ?? fileURLToPath(new URL('./vectors/upstream/', import.meta.url));

export function sharedPath(rel: string): string | null {
  const p = `${SHARED_VECTORS.replace(/\/$/, '')}/${rel}`;
  return existsSync(p) ? p : null;
}

/**
 * Declares a test over a file in ../shared/vectors; when it is absent the test is registered as
 * skipped with the reason in its title (or as failing when CI is set: support/needs.ts).
 */
export function sharedTest(
  test: TestFn,
  title: string,
  rel: string,
  fn: (t: ExecutionContext, path: string) => void | Promise<void>,
): void {
  const p = sharedPath(rel);
  const need = { what: `../shared/vectors/${rel}`, present: p !== null, hint: 'set SVC_SHARED_VECTORS' };
  testNeeding(test, title, need, (t) => fn(t, p!));
}

export function readJson<T = any>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/** Deterministic PRNG (xorshift32) so a failing random case can be replayed from its seed. */
export function prng(seed: number) {
  let s = seed >>> 0 || 1;
  const next = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s; };
  /** 0 ≤ int(n) < n (0 when n is 0) */
  const int = (n: number) => (n > 0 ? next() % n : 0);
  return {
    next,
    int,
    /** n random bytes, none of them in `avoid` */
    bytes: (n: number, avoid: readonly number[] = []) => {
      const b = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        let v;
        do v = next() & 0xff; while (avoid.includes(v));
        b[i] = v;
      }
      return b;
    },
    pick: <T>(xs: readonly T[]): T => xs[int(xs.length)]!,
    /** true with probability p */
    chance: (p: number) => next() / 0x1_0000_0000 < p,
    /** up to `max` characters of `alphabet` */
    text: (max: number, alphabet = 'abcXYZ019_-.~%/:;?&=+ ,"\'\\{}[]<>') =>
      Array.from({ length: int(max + 1) }, () => alphabet[int(alphabet.length)]).join(''),
  };
}

export type Prng = ReturnType<typeof prng>;

/** Lengths around every block boundary up to 70,000 bytes, plus random ones. */
export function interestingLengths(seed = 1, randomCount = 200): number[] {
  const r = prng(seed);
  const set = new Set<number>([
    0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 55, 56, 57, 63, 64, 65, 111, 112, 119, 120, 127, 128, 129,
    191, 192, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 4095, 4096, 4097, 8191, 8192, 8193,
    65535, 65536, 65537, 70000,
  ]);
  while (set.size < 44 + randomCount) set.add(r.int(70001));
  return [...set].sort((a, b) => a - b);
}
