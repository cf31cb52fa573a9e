// Key encoding for LevelDB: composite keys whose byte order is the order we scan in. Free-form
// identifiers (machine_id may hold any character) are hex-encoded so no separator can collide;
// numbers are fixed-width big-endian hex so lexicographic order is numeric order (drand's lesson).

export const SEP = '!';

export function idPart(id: string): string {
  return Buffer.from(id, 'utf8').toString('hex');
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
  return parts.join(SEP);
}
