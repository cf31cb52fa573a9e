// Key encoding for LevelDB: composite keys whose byte order is the order we scan in. Free-form
// identifiers (machine_id may hold any character) are hex-encoded so no separator can collide;
// numbers are fixed-width big-endian hex so lexicographic order is numeric order (drand's lesson).
// Ill-formed UTF-16 is refused: UTF-8 would turn an unpaired surrogate into U+FFFD, so two
// different identifiers would share one key (the schemas refuse them first; this is the backstop).
import { ServiceError } from '../errors.ts';

export const SEP = '!';

/** With the `u` flag an unpaired surrogate is a code point of its own; a pair never matches. */
const UNPAIRED_SURROGATE = /[\uD800-\uDFFF]/u;

export function isWellFormed(s: string): boolean {
  return !UNPAIRED_SURROGATE.test(s);
}

function wellFormed(s: string): string {
  if (!isWellFormed(s)) {
    throw new ServiceError('invalid_request', 'identifier is not well-formed Unicode (unpaired surrogate)');
  }
  return s;
}

export function idPart(id: string): string {
  return Buffer.from(wellFormed(id)).toString('hex');
}

export function idFromPart(part: string): string {
  return Buffer.from(part, 'hex').toString('utf8');
}

/** Fixed-width (16 hex digits) encoding of a non-negative safe integer. */
export function numPart(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`key number out of range: ${n}`);
  return n.toString(16).padStart(16, '0');
}

export function numFromPart(part: string): number {
  return parseInt(part, 16);
}

export function key(...parts: string[]): string {
  return parts.map(wellFormed).join(SEP);
}
