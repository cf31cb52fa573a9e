// Nesting depth of JSON text, measured on the text before JSON.parse builds anything: a 50,000-deep
// value parses, but the recursive walks after it (JSON.stringify, structuredClone)
// overflow the stack. One pass, no recursion, no allocation; it does not validate JSON.

/** The deepest nesting of arrays and objects accepted in a request (svc/1 line or HTTP body). */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22, BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b, OPEN_ARRAY = 0x5b, CLOSE_OBJECT = 0x7d, CLOSE_ARRAY = 0x5d;

/**
 * True when `text` nests more than `max` arrays/objects at some point. Brackets inside strings do
 * not count. On invalid JSON the count may be off after the first error, where JSON.parse stops.
 */
export function exceedsJsonDepth(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++; // the escaped character cannot end the string
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

/**
 * `text` with every array/object nested deeper than `keep` levels replaced by `null`, so the top
 * of a value too deep to parse whole can still be read (a svc/1 frame's id, to answer it).
 */
export function pruneJsonBelow(text: string, keep: number): string {
  const out: string[] = [];
  let depth = 0;
  let inString = false;
  let from = 0; // start of the text not yet copied
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth++ === keep) out.push(text.slice(from, i), 'null');
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (--depth === keep) from = i + 1;
    }
  }
  if (depth <= keep) out.push(text.slice(from));
  return out.join('');
}
