// RFC 8785 (JCS) canonical JSON: members sorted by the UTF-16 code units of their names, strings and
// numbers as ECMAScript's JSON.stringify writes them, no whitespace. Everything the node signs, tags or
// compares by digest is this text, on the service and in the embedding kit's offline verifiers alike,
// so this file imports nothing: it runs in Node, Deno, Bun and browsers.
//
// Written here rather than taken from the `canonicalize` package, which stays as a test oracle: that
// package scans every string for lone surrogates one character at a time in JavaScript, allocates a
// Set per call and joins arrays of parts; a paid flow canonicalises four times, and this text is the
// same bytes in about a third of the time (docs/performance.md). test/oracles/canonical.test.ts
// holds it to the RFC's reference vectors and to two independent implementations on random values.

/** A UTF-16 surrogate without its other half: I-JSON (RFC 7493 §2.1) has no such strings. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Refuses a lone surrogate in what JSON.stringify wrote: it writes one as `\udXXX` (ES2019) and a pair as
 * itself, so text without `\ud` had none, and only text with it (a lone one, or a backslash followed by
 * "ud") has its strings looked at.
 */
function refuseLone(out: string, strings: () => readonly unknown[]): string {
  // (a number, boolean or null among them reads as its text, which has no surrogate)
  if (out.includes('\\ud') && strings().some((s) => LONE_SURROGATE.test(String(s)))) {
    throw new Error('Lone surrogate is not allowed');
  }
  return out;
}

const text = (s: string): string => refuseLone(JSON.stringify(s), () => [s]);

/** The member or element text of `v`, or undefined where JSON has no value (undefined, functions, symbols). */
function member(v: unknown, open: object[]): string | undefined {
  switch (typeof v) {
    case 'string':
      return text(v);
    case 'number':
      if (!Number.isFinite(v)) throw new Error(`${v} is not allowed`);
      return JSON.stringify(v);
    case 'object':
      return v === null ? 'null' : composite(v, open);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      throw new TypeError('a BigInt has no JSON form: write it as a string');
  }
  return undefined; // undefined, a function, a symbol
}

function composite(o: object, open: object[]): string | undefined {
  if (open.includes(o)) throw new Error('Circular reference detected');
  open.push(o);
  let out: string | undefined;
  const toJSON = (o as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    out = member(toJSON.call(o), open);
  } else if (Array.isArray(o)) {
    out = '[';
    for (let i = 0; i < o.length; i++) out += `${i ? ',' : ''}${member(o[i], open) ?? 'null'}`;
    out += ']';
  } else {
    const rec = o as Record<string, unknown>;
    const names = Object.keys(rec).sort();
    out = flat(rec, names);
    if (out !== undefined) {
      open.pop();
      return out;
    }
    out = '{';
    let first = true;
    for (const name of names) {
      const v = member(rec[name], open);
      if (v === undefined) continue;
      out += `${first ? '' : ','}${text(name)}:${v}`;
      first = false;
    }
    out += '}';
  }
  open.pop();
  return out;
}

/**
 * An object whose members are all strings, finite numbers, booleans, null or nothing (undefined,
 * functions, symbols: left out) in one native JSON.stringify with its sorted names as the property
 * list; undefined when a member is an object, an array or a number JSON cannot write (the general path).
 */
function flat(rec: Record<string, unknown>, names: string[]): string | undefined {
  for (const name of names) {
    const v = rec[name];
    if (typeof v === 'object' ? v !== null : typeof v === 'number' && !Number.isFinite(v)) return undefined;
  }
  return refuseLone(JSON.stringify(rec, names), () => [...names, ...Object.values(rec)]);
}

/** RFC 8785 canonical JSON text of a value; throws when the value has no JSON form. */
export function canonicalJson(value: unknown): string {
  const s = member(value, []);
  if (s === undefined) throw new TypeError('value cannot be canonicalized');
  return s;
}
