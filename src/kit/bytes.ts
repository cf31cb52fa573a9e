// Byte and text encodings the verifiers need, without Node's Buffer: hex, concatenation and
// constant-time comparison from @noble/curves (a runtime dependency of the kit; it throws on odd-length
// or non-hex text, as the verifiers need), base64 and base64url (strict, and canonical-only decoders for
// the verifiers), UTF-8, RFC 8785 canonical JSON (protocol/jcs.ts, the service's own).
import { bytesToHex, concatBytes, equalBytes, hexToBytes } from '@noble/curves/utils.js';

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { fatal: true });

export const utf8 = (s: string): Uint8Array => enc.encode(s);
/** Strict UTF-8 decoding: throws on invalid sequences. */
export const fromUtf8 = (b: Uint8Array): string => dec.decode(b);

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** No UTF-16 surrogate without its other half: text UTF-8 can carry as it is (I-JSON, RFC 7493). */
export const wellFormed = (s: string): boolean => !LONE_SURROGATE.test(s);

export const toHex: (b: Uint8Array) => string = bytesToHex;
/** Lower- or upper-case hex of even length; throws otherwise. */
export const fromHex: (s: string) => Uint8Array = hexToBytes;
export const concat: (...parts: Uint8Array[]) => Uint8Array = concatBytes;
export { equalBytes };

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_INDEX = new Map([...B64].map((c, i) => [c, i]));

export function toBase64(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i += 3) {
    const n = (b[i]! << 16) | ((b[i + 1] ?? 0) << 8) | (b[i + 2] ?? 0);
    s += B64[n >>> 18]! + B64[(n >>> 12) & 63]!;
    s += i + 1 < b.length ? B64[(n >>> 6) & 63]! : '=';
    s += i + 2 < b.length ? B64[n & 63]! : '=';
  }
  return s;
}

/** Standard base64 (padding optional) or, with url = true, base64url; throws on any other character. */
export function fromBase64(s: string, url = false): Uint8Array {
  if (typeof s !== 'string') throw new Error('not base64');
  let t = url ? s.replace(/-/g, '+').replace(/_/g, '/') : s;
  if (!url && /[-_]/.test(s)) throw new Error('not base64');
  t = t.replace(/=+$/, '');
  if (t.length % 4 === 1 || s.length - t.length > 2) throw new Error('not base64');
  const out = new Uint8Array(Math.floor((t.length * 3) / 4));
  let bits = 0, acc = 0, j = 0;
  for (const c of t) {
    const v = B64_INDEX.get(c);
    if (v === undefined) throw new Error('not base64');
    acc = (acc << 6) | v; bits += 6;
    if (bits >= 8) { bits -= 8; out[j++] = (acc >>> bits) & 0xff; }
  }
  return out;
}

export const fromBase64Url = (s: string): Uint8Array => fromBase64(s, true);
export const toBase64Url = (b: Uint8Array): string =>
  toBase64(b).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

/**
 * The bytes of `s` only when `s` is exactly how toBase64 (url: toBase64Url) writes them, else null: no
 * missing or extra padding, no stray bits in the last character, no character of the other alphabet.
 * Signatures, keys and hashes have one spelling, so a second one cannot pass as the same material.
 */
export function fromCanonicalBase64(s: unknown, url = false): Uint8Array | null {
  if (typeof s !== 'string') return null;
  let b: Uint8Array;
  try { b = fromBase64(s, url); } catch { return null; }
  return (url ? toBase64Url(b) : toBase64(b)) === s ? b : null;
}

/** The bytes of lowercase hex of even length (the one spelling the node writes), else null. */
export function fromLowerHex(s: unknown): Uint8Array | null {
  return typeof s === 'string' && /^(?:[0-9a-f]{2})*$/.test(s) ? hexToBytes(s) : null;
}

/** u32be(len(UTF-8 s)) ‖ UTF-8 s: the length prefix of the pulse key and BCT AAD (docs/verify.md). */
export function lp(s: string): Uint8Array {
  const b = utf8(s);
  const out = new Uint8Array(4 + b.length);
  new DataView(out.buffer).setUint32(0, b.length);
  out.set(b, 4);
  return out;
}

// RFC 8785 canonical JSON text of a value (throws when the value has no JSON form)
export { canonicalJson } from '../protocol/jcs.ts';

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
