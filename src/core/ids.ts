// Identifiers: random ids with a type prefix (unguessable: 120 bits). Canonical JSON and digests
// live in protocol/canonical.ts (shared with offline verifiers).
//
// Random bytes come from a 4 KiB pool filled by the CSPRNG and handed out once each (as Node's
// randomUUID does with its own cache): one randomFillSync per ~270 ids instead of one per id, which
// was 5% of a free quote's CPU. A slice is copied out, so no two callers ever share bytes.
import { randomFillSync } from 'node:crypto';

const POOL = Buffer.allocUnsafe(4096);
let offset = POOL.length;

/** `n` (≤ 4096) fresh random bytes. */
export function randomBytesPooled(n: number): Buffer {
  if (n > POOL.length) throw new RangeError(`at most ${POOL.length} pooled random bytes at once`);
  if (offset + n > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  const out = Buffer.from(POOL.subarray(offset, offset + n));
  offset += n;
  return out;
}

export function newId(prefix: 'inv' | 'rcpt' | 'chain'): string {
  return `${prefix}_${randomBytesPooled(15).toString('base64url')}`;
}
