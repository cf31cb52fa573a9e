// Canonical bytes: RFC 8785 JSON (the `canonicalize` package) and SHA-256 digests of it. Everything
// signed or compared by digest is built from these, on the service and in offline verifiers alike.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** RFC 8785 canonical JSON text of a value. */
export function canonicalJson(value: unknown): string {
  const s = (canonicalize as unknown as (v: unknown) => string | undefined)(value);
  if (s === undefined) throw new TypeError('value cannot be canonicalized');
  return s;
}

export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

export function canonicalDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
