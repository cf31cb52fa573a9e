// What every offline verifier is made of (src/kit/verify.ts and verify-log.ts): the verdict and its
// checks, the run that turns whatever the checks throw on into one more failed check, the trusted keys
// and their windows, and the fields beside signed content that must restate what was verified.
import type { Kernels } from '../kernels/kernels.ts';
import { canonicalJson, equalBytes, fromCanonicalBase64, isObject, toBase64Url, toHex, utf8 } from './bytes.ts';
import { verifyEd25519 } from './ed25519.ts';
import { loadKernels } from './load.ts';

export interface Check { name: string; ok: boolean; detail?: string }
export interface Verdict { valid: boolean; reason: string | null; checks: Check[] }

/**
 * A node key as nodes.json, node.json, the manifest's `node` and every signed result publish it. A key
 * set (after a key rotation) adds `keys`: every signing key with its window (valid_from/valid_until,
 * ISO 8601; null or absent: unbounded), retired ones too.
 */
export interface NodeKey {
  public_key: string;
  key_id?: string;
  valid_from?: string | null;
  valid_until?: string | null;
  node_id?: string;
  keys?: readonly NodeKey[];
}
/**
 * The keys a verifier trusts: one base64url raw public key, a NodeKey, a list of them, the
 * /.well-known/svc/nodes.json document ({ nodes: [...] }) or the manifest ({ node: {...} }).
 */
export type NodeKeys = string | NodeKey | readonly NodeKey[] | { nodes: readonly NodeKey[] } | { node: NodeKey };

export interface VerifyOptions {
  /** the kernels to use (default: the package's kernels.wasm, loaded once) */
  kernels?: Kernels;
}

/**
 * A trusted key, its window (ms; unbounded when absent), the node that published it, if named, and
 * whether the trusted document states the window at all (a bare key does not: then no window the
 * material claims can be held against it).
 */
export interface TrustedKey {
  keyId: string;
  raw: Uint8Array;
  from?: number;
  until?: number;
  nodeId?: string;
  windowStated: boolean;
}

export class Checks {
  readonly list: Check[] = [];
  #reason: string | null = null;

  /** Records a check; the first failure's code becomes the verdict's reason. */
  add(code: string, name: string, ok: boolean, detail?: string): boolean {
    this.list.push({ name, ok, ...(detail !== undefined ? { detail } : {}) });
    if (!ok) this.#reason ??= code;
    return ok;
  }

  verdict(): Verdict {
    const valid = this.#reason === null && this.list.length > 0;
    return { valid, reason: valid ? null : this.#reason ?? 'malformed', checks: this.list };
  }
}

/** What a thrown value says, as text whose making cannot throw in turn (a hostile getter or toString). */
export function why(e: unknown): string {
  try {
    return e instanceof Error ? String(e.message) : `a thrown ${typeof e}`;
  } catch {
    return 'an unreadable error';
  }
}

/** A value of the material as a check's name shows it: text clipped, anything else by its type. */
export const shown = (v: unknown): string => (typeof v === 'string' ? v.slice(0, 64) : `(${typeof v})`);

/**
 * Runs a verifier's checks; whatever they throw on (a getter or a Proxy that throws, a value no check
 * foresaw) is one more failed check, so every input gets a verdict. The package's kernels load first and
 * outside: when kernels.wasm cannot load, nothing was checked, and the promise rejects.
 */
export async function verdictOf<V extends Verdict>(
  opts: unknown, checks: (k: Kernels, c: Checks, o: Record<string, unknown>) => Promise<V | void>,
  shape: (v: Verdict) => V,
): Promise<V> {
  const c = new Checks();
  let o: Record<string, unknown> = {}, given: unknown;
  try {
    if (isObject(opts)) { o = opts; given = o.kernels ?? undefined; }
  } catch (e) {
    c.add('malformed', 'the options can be read', false, why(e));
    return shape(c.verdict());
  }
  const k = given === undefined ? await loadKernels() : given as Kernels;
  try {
    return (await checks(k, c, o)) ?? shape(c.verdict());
  } catch (e) {
    c.add('malformed', 'the material can be read through', false, why(e));
    return shape(c.verdict());
  }
}
export const asIs = (v: Verdict): Verdict => v;

/** key_id = first 16 hex digits of SHA-256(raw public key) (docs/verify.md §Receipts). */
export function keyIdOf(k: Kernels, publicKey: Uint8Array): string {
  return toHex(k.sha256(publicKey)).slice(0, 16);
}

export const timeOf = (v: unknown): number | undefined => {
  if (typeof v !== 'string') return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
};

export function trustedKeys(k: Kernels, keys: unknown): TrustedKey[] {
  const list: unknown[] = typeof keys === 'string' ? [{ public_key: keys }]
    : Array.isArray(keys) ? keys
      : isObject(keys) && Array.isArray(keys.nodes) ? keys.nodes
        : isObject(keys) && isObject(keys.node) ? [keys.node]
          : [keys];
  const out: TrustedKey[] = [];
  const add = (e: unknown, nodeId: unknown, bare: boolean) => {
    if (!isObject(e)) return;
    const raw = fromCanonicalBase64(e.public_key, true);
    if (!raw || raw.length !== 32) return; // not a key: ignored, so it can match nothing
    const keyId = keyIdOf(k, raw);
    if (out.some((t) => t.keyId === keyId)) return;
    const from = timeOf(e.valid_from), until = timeOf(e.valid_until);
    out.push({
      keyId, raw, ...(from !== undefined ? { from } : {}), ...(until !== undefined ? { until } : {}),
      ...(typeof nodeId === 'string' ? { nodeId } : {}),
      windowStated: !bare && ('valid_from' in e || 'valid_until' in e),
    });
  };
  for (const e of list) {
    // a key set's entries carry the windows; the bare current key of the same document adds nothing new
    if (isObject(e) && Array.isArray(e.keys)) for (const x of e.keys) add(x, e.node_id, false);
    add(e, isObject(e) ? e.node_id : undefined, typeof keys === 'string');
  }
  return out;
}

/** Whether a signed time lies in the key's window (both ends inclusive); no window: always. */
export function inWindow(key: TrustedKey, at: unknown): boolean {
  if (key.from === undefined && key.until === undefined) return true;
  const t = timeOf(at);
  return t !== undefined && (key.from === undefined || key.from <= t) && (key.until === undefined || t <= key.until);
}

/** A window end as material states it: null or absent is unbounded (undefined); NaN when no time at all. */
export const boundOf = (v: unknown): number | undefined =>
  (v === null || v === undefined ? undefined : timeOf(v) ?? NaN);

export const str = (v: unknown): v is string => typeof v === 'string';
export const sameUint = (v: unknown, n: bigint): boolean => Number.isSafeInteger(v) && BigInt(v as number) === n;

/** The RFC 8785 bytes of signed content, or why it has none (a lone surrogate, a number JSON cannot write). */
export function canonicalBytes(v: unknown): Uint8Array | string {
  try {
    return utf8(canonicalJson(v));
  } catch (e) {
    return `no RFC 8785 form: ${why(e)}`;
  }
}

export function sameJson(a: unknown, b: unknown): boolean {
  const x = canonicalBytes(a), y = canonicalBytes(b);
  return typeof x !== 'string' && typeof y !== 'string' && equalBytes(x, y);
}

export type Restated = Record<string, (v: unknown) => boolean>;

/**
 * Fields beside the signed content that restate what was verified (the key, the log position): each
 * one present must equal what the checks established, or a reader would take an unchecked value for a
 * verified one. Nothing is listed when none of them is present.
 */
export function restated(c: Checks, what: string, o: Record<string, unknown>, want: Restated): void {
  const present = Object.keys(want).filter((f) => o[f] !== undefined);
  if (present.length === 0) return;
  const wrong = present.filter((f) => !want[f]!(o[f]));
  c.add('field_mismatch', `${what} (${present.join(', ')}) restate what was verified`, wrong.length === 0,
    wrong.length ? `not as verified: ${wrong.join(', ')}` : undefined);
}

/** The fields naming the key that verified: its public key, key id and algorithm. */
export const keyFields = (key: TrustedKey): Restated => ({
  public_key: (v) => v === toBase64Url(key.raw),
  key_id: (v) => v === key.keyId,
  alg: (v) => v === 'Ed25519',
});

/** A window the material states for a trusted key: the trusted document's own, where it states one. */
export const sameWindow = (key: TrustedKey, from: unknown, until: unknown): boolean =>
  !key.windowStated || (boundOf(from) === key.from && boundOf(until) === key.until);

/** Ed25519 over `bytes` (null: the content has no signed form) by `key`, the signature in its one spelling. */
export async function verifySigned(
  key: Uint8Array, bytes: Uint8Array | null, signature: unknown, url: boolean,
): Promise<boolean> {
  const sig = fromCanonicalBase64(signature, url);
  return bytes !== null && sig !== null && verifyEd25519(key, bytes, sig);
}

/** The origin option: absent (undefined), the log's name, or false after recording that it is no text. */
export function originOption(c: Checks, o: Record<string, unknown>): string | undefined | false {
  const v = o.origin;
  if (v === undefined || v === null) return undefined;
  return str(v) ? v : (c.add('wrong_origin', 'the origin option is the log\'s name (text)', false), false);
}
