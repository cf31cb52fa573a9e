// Canonical bytes: RFC 8785 JSON (jcs.ts) and SHA-256 digests of it. Everything signed or compared by
// digest is built from these, on the service and in offline verifiers alike.
import { createHash } from 'node:crypto';
import { canonicalJson } from './jcs.ts';

export { canonicalJson } from './jcs.ts';

export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

export function canonicalDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
