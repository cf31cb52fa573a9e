// Identifier and digest helpers: random ids with a type prefix (unguessable: 120 bits), and the
// canonical digests everything signed or compared is built from.
import { createHash, randomBytes } from 'node:crypto';
import canonicalize from 'canonicalize';

export function newId(prefix: 'q' | 'inv' | 'rcpt' | 'chain'): string {
  return `${prefix}_${randomBytes(15).toString('base64url')}`;
}

export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** RFC 8785 canonical JSON text of a value (the `canonicalize` package). */
export function canonicalJson(value: unknown): string {
  const s = (canonicalize as unknown as (v: unknown) => string | undefined)(value);
  if (s === undefined) throw new TypeError('value cannot be canonicalized');
  return s;
}

export function canonicalDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
