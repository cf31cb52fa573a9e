// Identifiers: random ids with a type prefix (unguessable: 120 bits). Canonical JSON and digests
// live in protocol/canonical.ts (shared with offline verifiers).
import { randomBytes } from 'node:crypto';

export function newId(prefix: 'q' | 'inv' | 'rcpt' | 'chain'): string {
  return `${prefix}_${randomBytes(15).toString('base64url')}`;
}
