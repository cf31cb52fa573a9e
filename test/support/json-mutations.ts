// Seeded mutations of JSON material for property tests of the verifiers (test/kit/fuzz.test.ts): one
// to three edits at random places of a document — a value replaced by odd JSON (1e400 as JSON.parse
// reads it, lone surrogates, wrong types) or by what JSON cannot carry (cycles, throwing getters and
// Proxies, BigInt, 5,000-deep nesting), text edited the ways encodings go wrong (another base64
// alphabet, padding, stray low bits, case, whitespace, lines of a proof), numbers moved, members added,
// dropped or swapped, values spliced from a sibling document — and whether what changed is content a
// verifier vouches for: `altered` (it must not be valid), `same` (it must stay valid) or neither.
import type { Prng } from '../helpers.ts';

export type Path = (string | number)[];
/** A vouched path: `*` stands for every index of an array; `required` content may not go missing. */
export interface Rule { path: Path; required?: boolean }

const MISSING = Symbol('missing');
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const HEX = '0123456789abcdef';

const isRecord = (v: unknown): v is Record<string | number, unknown> => typeof v === 'object' && v !== null;

/**
 * The value at `path`, MISSING where there is none; a member set to undefined is none either (JSON has no
 * such member). Reading may throw: a hostile getter.
 */
function at(v: unknown, path: Path): unknown {
  let cur = v;
  for (const p of path) {
    if (!isRecord(cur) || cur instanceof Uint8Array || !Object.prototype.hasOwnProperty.call(cur, p)) return MISSING;
    cur = cur[p];
  }
  return absent(cur) ? MISSING : cur;
}

/** What JSON.stringify (and RFC 8785) leaves out of an object: a member so valued is no member. */
const absent = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/**
 * Every path below the root into arrays and plain objects, at most 12 deep (the material is shallower;
 * an odd value put in earlier may be 5,000 deep, or a Proxy that throws when read: not walked).
 */
function pathsOf(v: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (prefix.length > 12) return out;
  let entries: [string | number, unknown][] = [];
  try {
    if (Array.isArray(v)) entries = v.map((x, i) => [i, x]);
    else if (isRecord(v) && Object.getPrototypeOf(v) === Object.prototype) entries = Object.entries(v);
  } catch { /* a hostile value: a leaf */ }
  for (const [k, x] of entries) { out.push([...prefix, k]); pathsOf(x, [...prefix, k], out); }
  return out;
}

/**
 * A text of any value, equal for values a verifier must treat alike (as JSON reads them: members in any
 * order, -0 as 0, no member for undefined or a function) and different otherwise; throws where reading throws.
 */
function textOf(v: unknown, open: object[] = []): string {
  switch (typeof v) {
    case 'number': return Object.is(v, -0) ? '0' : String(v);
    case 'string': return JSON.stringify(v);
    case 'bigint': return `${v}n`;
    case 'undefined': return 'undefined';
    case 'boolean': return String(v);
    case 'symbol': case 'function': return typeof v;
  }
  if (v === null) return 'null';
  const o = v as object;
  if (open.includes(o)) return '<cycle>';
  if (o instanceof Uint8Array) return `bytes:${Buffer.from(o).toString('hex')}`;
  if (open.length > 200) return '<deep>';
  open.push(o);
  const rec = o as Record<string, unknown>;
  const out = Array.isArray(o) ? `[${o.map((x) => (absent(x) ? 'null' : textOf(x, open))).join(',')}]`
    : `{${Object.keys(o).sort().filter((k) => !absent(rec[k]))
      .map((k) => `${JSON.stringify(k)}:${textOf(rec[k], open)}`).join(',')}}`
      + (Object.getPrototypeOf(o) === Object.prototype ? '' : `<${Object.prototype.toString.call(o)}>`);
  open.pop();
  return out;
}

/** Every concrete path of `rule` in either document (a `*` over both documents' indexes). */
function expand(rule: Path, a: unknown, b: unknown): Path[] {
  const i = rule.indexOf('*');
  if (i < 0) return [rule];
  const head = rule.slice(0, i);
  const len = (v: unknown) => { const x = at(v, head); return Array.isArray(x) ? x.length : 0; };
  const n = Math.max(len(a), len(b));
  return Array.from({ length: n }, (_, j) => expand([...head, j, ...rule.slice(i + 1)], a, b)).flat();
}

export type Change = 'altered' | 'same' | 'other';

/**
 * What a mutation did to vouched content: `altered` when a vouched value present in `mutated` differs
 * from the original (or required content went missing, or cannot be read), `same` when every vouched
 * path reads as before, `other` when only optional content went missing.
 */
export function changeOf(original: unknown, mutated: unknown, rules: readonly Rule[]): Change {
  let missing = false;
  for (const rule of rules) {
    for (const p of expand(rule.path, original, mutated)) {
      let a: unknown, b: unknown, ta: string, tb: string;
      try {
        a = at(original, p); b = at(mutated, p);
        ta = a === MISSING ? '<missing>' : textOf(a);
        tb = b === MISSING ? '<missing>' : textOf(b);
      } catch {
        return 'altered';
      }
      if (b === MISSING && a !== MISSING) {
        if (rule.required) return 'altered';
        missing = true;
      } else if (ta !== tb) {
        return 'altered';
      }
    }
  }
  return missing ? 'other' : 'same';
}

// --- what goes in -------------------------------------------------------------------------------

function deep(n: number): unknown {
  let v: unknown = 'bottom';
  for (let i = 0; i < n; i++) v = i % 2 ? [v] : { d: v };
  return v;
}

/** Values JSON.parse can give (1e400 reads as Infinity), and what a JavaScript caller can pass besides. */
function oddValue(r: Prng): unknown {
  const json = [
    null, true, false, 0, -1, 1, 0.5, 2 ** 53 + 2, Infinity, -Infinity, 1e21, '', ' ', 'x', '\ud800', 'a\udc00b',
    '\ud83d\ude00', '0', 'null', 'A'.repeat(43), 'A'.repeat(86), '00'.repeat(32), [], {}, [null], { a: 1 },
    [[[[]]]], 'x'.repeat(5000), deep(40),
  ];
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  const js = [
    undefined, NaN, -0, 1n, Symbol('s'), () => 1, cyclic, deep(5000), new Uint8Array(4), new Date(0),
    Object.create(null), { toJSON() { throw new Error('toJSON'); } },
    { toString() { throw new Error('toString'); }, valueOf() { throw new Error('valueOf'); } },
    Object.defineProperty({}, 'public_key', { get() { throw new Error('getter'); }, enumerable: true }),
    new Proxy({}, { get() { throw new Error('proxy get'); }, has() { throw new Error('proxy has'); },
      ownKeys() { throw new Error('proxy keys'); } }),
    new Proxy([], { get() { throw new Error('proxy get'); } }),
  ];
  return r.chance(0.7) ? r.pick(json) : r.pick(js);
}

/** The last significant character of a base64 text swapped for one that decodes alike (stray low bits). */
function strayBits(r: Prng, s: string, url: boolean): string | null {
  const body = s.replace(/=+$/, '');
  const pad = s.slice(body.length);
  const alphabet = url ? B64URL : B64;
  const last = alphabet.indexOf(body.at(-1) ?? '');
  const bits = [0, 0, 4, 2][body.length % 4]!;
  if (last < 0 || bits === 0) return null;
  const twin = alphabet[last ^ (1 + r.int((1 << bits) - 1))]!;
  return body.slice(0, -1) + twin + pad;
}

function editText(r: Prng, s: string): string {
  const b64url = /^[A-Za-z0-9_-]+$/.test(s) && s.length >= 22;
  const b64 = /^[A-Za-z0-9+/]+=*$/.test(s) && s.length >= 8;
  const hex = /^[0-9a-f]+$/.test(s);
  const i = r.int(s.length);
  const ops: (() => string | null)[] = [
    () => s.slice(0, i) + r.pick([...(hex ? HEX : b64url ? B64URL : B64)].filter((c) => c !== s[i])) + s.slice(i + 1),
    () => strayBits(r, s, b64url),
    () => (b64url ? s.replace(/[-_]/, (c) => (c === '-' ? '+' : '/'))
      : s.replace(/[+/]/, (c) => (c === '+' ? '-' : '_'))),
    () => (b64url ? `${s}=` : b64 ? s.replace(/=+$/, '') : null),
    () => (b64 ? `${s}=` : null),
    () => s.slice(0, i) + r.pick(['\ud800', '\udfff', '\ud83d\ude00', '\u0000', '\u2014', '\n']) + s.slice(i),
    () => s.slice(0, i) + s.charAt(i).toUpperCase() + s.slice(i + 1),
    () => s.toUpperCase(),
    () => r.pick([` ${s}`, `${s} `, `${s}\n`, s.replace('\n', '\r\n')]),
    () => s.slice(0, -1),
    () => s + s.charAt(i),
    () => s + s,
    () => editLines(r, s),
  ];
  for (let n = 0; n < 5; n++) {
    const out = r.pick(ops)();
    if (out !== null && out !== s) return out;
  }
  return `${s}x`;
}

/** A multi-line text (a tlog proof, a checkpoint): a line dropped, doubled, swapped or its number moved. */
function editLines(r: Prng, s: string): string | null {
  const lines = s.split('\n');
  if (lines.length < 3) return null;
  const i = r.int(lines.length), j = r.int(lines.length);
  switch (r.int(5)) {
    case 0: lines.splice(i, 1); break;
    case 1: lines.splice(i, 0, lines[i]!); break;
    case 2: [lines[i], lines[j]] = [lines[j]!, lines[i]!]; break;
    case 3: lines[i] = lines[i]!.replace(/\d+/, (d) => r.pick([String(Number(d) + 1), '99999999999999999999999',
      '18446744073709551616', '-1', '1e3', `0${d}`])); break;
    default: lines[i] = `${lines[i]} `;
  }
  return lines.join('\n');
}

function editNumber(r: Prng, n: number): unknown {
  return r.pick([n + 1, n - 1, -n - 1, n + 0.5, Infinity, -Infinity, NaN, String(n), 2 ** 53, 2 ** 64, n * 2 + 1,
    n === 0 ? 1 : 0]);
}

// --- how it changes -----------------------------------------------------------------------------

function setAt(root: unknown, path: Path, value: unknown): void {
  const parent = at(root, path.slice(0, -1)) as Record<string | number, unknown>;
  parent[path.at(-1)!] = value;
}

function deleteAt(root: unknown, path: Path): void {
  const parent = at(root, path.slice(0, -1));
  const key = path.at(-1)!;
  if (Array.isArray(parent)) parent.splice(key as number, 1);
  else delete (parent as Record<string | number, unknown>)[key];
}

export interface Mutated { doc: unknown; what: string[] }

/**
 * One to three edits of a copy of `doc` (plain JSON, Uint8Array leaves allowed), none at a path listed in
 * `avoid`; `siblings` are documents of the same kind to splice values from.
 */
export function mutate(r: Prng, doc: unknown, siblings: readonly unknown[] = [], avoid: Path[] = []): Mutated {
  // one splice at most: two could put a sibling's content and its signature together, a genuine document
  const copy = (v: unknown): unknown => (v instanceof Uint8Array ? v.slice()
    : Array.isArray(v) ? v.map(copy) : isRecord(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copy(x)]))
      : v);
  const out = copy(doc);
  const what: string[] = [];
  const edits = r.pick([1, 1, 1, 1, 2, 2, 3]);
  for (let e = 0; e < edits; e++) {
    const all = pathsOf(out).filter((p) => !avoid.some((a) => a.length === p.length && a.every((x, i) => p[i] === x)));
    if (all.length === 0) break;
    const path = r.pick(all);
    const v = at(out, path);
    const name = path.join('.');
    try {
      edit(r, out, path, v, name, siblings, what, copy);
    } catch {
      what.push(`${name}: no edit (a hostile value put there before)`);
    }
  }
  return { doc: out, what };
}

function edit(
  r: Prng, out: unknown, path: Path, v: unknown, name: string, siblings: readonly unknown[], what: string[],
  copy: (v: unknown) => unknown,
): void {
  {
    const op = r.int(10);
    if (op <= 1) {
      setAt(out, path, oddValue(r));
      what.push(`${name} = odd value`);
    } else if (op <= 4 && typeof v === 'string') {
      setAt(out, path, editText(r, v));
      what.push(`${name}: text edited`);
    } else if (op <= 4 && typeof v === 'number') {
      setAt(out, path, editNumber(r, v));
      what.push(`${name}: number moved`);
    } else if (op <= 4 && v instanceof Uint8Array) {
      const b = v.slice();
      if (b.length) b[r.int(b.length)]! ^= 1 << r.int(8);
      setAt(out, path, r.chance(0.8) ? b : r.pick([Array.from(v), Buffer.from(v).toString('hex'), new Uint8Array(0)]));
      what.push(`${name}: bytes edited`);
    } else if (op === 5) {
      deleteAt(out, path);
      what.push(`${name} removed`);
    } else if (op === 6 && isRecord(v)) {
      const key = r.pick(['extra', 'public_key', 'key_id', 'valid', '__proto__', 'x'.repeat(3), 'index', 'sig']);
      // an own member, as JSON.parse makes it (assigning __proto__ would set the prototype instead)
      if (Array.isArray(v)) v.push(oddValue(r));
      else Object.defineProperty(v, key, { value: oddValue(r), enumerable: true, writable: true, configurable: true });
      what.push(`${name}: member added`);
    } else if (op === 7 && isRecord(v) && !Array.isArray(v)) {
      const keys = Object.keys(v);
      const [a, b] = [r.pick(keys), r.pick(keys)];
      if (a !== undefined && b !== undefined) [v[a], v[b]] = [v[b], v[a]];
      what.push(`${name}: members swapped`);
    } else if (op === 8 && siblings.length && !what.some((w) => w.endsWith('sibling'))) {
      const other = at(r.pick(siblings), path);
      if (other !== MISSING) setAt(out, path, copy(other));
      what.push(`${name}: spliced from a sibling`);
    } else {
      const parent = at(out, path.slice(0, -1));
      if (isRecord(parent) && !Array.isArray(parent)) {
        const key = path.at(-1) as string;
        // the member moved to the end: the same document in another order
        const value = parent[key];
        delete parent[key];
        parent[key] = value;
        what.push(`${name}: moved last`);
      } else {
        setAt(out, path, oddValue(r));
        what.push(`${name} = odd value`);
      }
    }
  }
}

/** Whether `v` is what JSON (or the bytes beside it) can carry: a hostile value cannot be read, so it is no
 * document a verifier must find unchanged. */
export function plainJson(v: unknown, depth = 0): boolean {
  try {
    if (v === null || typeof v === 'string' || typeof v === 'boolean' || v instanceof Uint8Array) return true;
    if (typeof v === 'number') return Number.isFinite(v);
    if (depth > 64 || typeof v !== 'object') return false;
    const proto = Object.getPrototypeOf(v);
    if (proto !== Array.prototype && proto !== Object.prototype) return false;
    return Object.values(v as object).every((x) => plainJson(x, depth + 1));
  } catch {
    return false;
  }
}

export { oddValue };
