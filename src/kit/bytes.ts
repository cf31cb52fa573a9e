// Byte and text encodings the verifiers need, without Node's Buffer: hex, base64, base64url,
// UTF-8, RFC 8785 canonical JSON (the `canonicalize` library), and comparisons.
import canonicalize from 'canonicalize';

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { fatal: true });

export const utf8 = (s: string): Uint8Array => enc.encode(s);
/** Strict UTF-8 decoding: throws on invalid sequences. */
export const fromUtf8 = (b: Uint8Array): string => dec.decode(b);

export function toHex(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += x.toString(16).padStart(2, '0');
  return s;
}

/** Lower- or upper-case hex of even length; throws otherwise. */
export function fromHex(s: string): Uint8Array {
  if (typeof s !== 'string' || s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) throw new Error('not hex');
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(i * 2, i * 2 + 2), 16);
  return out;
}

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

export function concat(...parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i]! ^ b[i]!;
  return d === 0;
}

/** u32be(len(UTF-8 s)) ‖ UTF-8 s: the length prefix of the pulse key and BCT AAD (docs/verify.md). */
export function lp(s: string): Uint8Array {
  const b = utf8(s);
  const out = new Uint8Array(4 + b.length);
  new DataView(out.buffer).setUint32(0, b.length);
  out.set(b, 4);
  return out;
}

/** RFC 8785 canonical JSON text of a value (throws when the value has no JSON form). */
export function canonicalJson(value: unknown): string {
  const s = canonicalize(value);
  if (s === undefined) throw new TypeError('value cannot be canonicalized');
  return s;
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
