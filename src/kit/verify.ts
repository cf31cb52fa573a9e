// The offline verifiers (docs/verify.md, docs/embedding.md): everything the service signs, checked
// with nothing but the node's published Ed25519 public key. Each returns { valid, reason, checks }:
// `reason` is null when valid, else the code of the first failed check; `checks` names every check
// in order for people. Never throws on bad material (a malformed input is { valid: false }); only a
// kernels.wasm that cannot be loaded rejects. One implementation: the CLI and the client's
// verify-pulse / verify-log run these too (src/client/verify.ts).
import type { Kernels } from '../kernels/kernels.ts';
import {
  canonicalJson, concat, equalBytes, fromBase64, fromBase64Url, fromHex, fromUtf8, isObject, lp, toHex, utf8,
} from './bytes.ts';
import { verifyEd25519 } from './ed25519.ts';
import { hpkeOpenBase } from './hpke.ts';
import { loadKernels } from './load.ts';
import {
  noteKeyHash, parseCheckpoint, parseNote, parseTlogProof, type ParsedCheckpoint, type ParsedTlogProof,
} from './tlog.ts';

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

/** A trusted key, its window (ms; unbounded when absent) and the node that published it, if named. */
interface TrustedKey { keyId: string; raw: Uint8Array; from?: number; until?: number; nodeId?: string }

class Checks {
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

const kernelsOf = (o: VerifyOptions | undefined) => (o?.kernels ? Promise.resolve(o.kernels) : loadKernels());

/** key_id = first 16 hex digits of SHA-256(raw public key) (docs/verify.md §Receipts). */
export function keyIdOf(k: Kernels, publicKey: Uint8Array): string {
  return toHex(k.sha256(publicKey)).slice(0, 16);
}

const timeOf = (v: unknown): number | undefined => {
  if (typeof v !== 'string') return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
};

function trustedKeys(k: Kernels, keys: NodeKeys): TrustedKey[] {
  const o = keys as Record<string, unknown>;
  const list: unknown[] = typeof keys === 'string' ? [{ public_key: keys }]
    : Array.isArray(keys) ? keys
      : isObject(o) && Array.isArray(o.nodes) ? o.nodes
        : isObject(o) && isObject(o.node) ? [o.node]
          : [keys];
  const out: TrustedKey[] = [];
  const add = (e: unknown, nodeId?: unknown) => {
    if (!isObject(e) || typeof e.public_key !== 'string') return;
    try {
      const raw = fromBase64Url(e.public_key);
      if (raw.length !== 32) return;
      const keyId = keyIdOf(k, raw);
      if (out.some((t) => t.keyId === keyId)) return;
      const from = timeOf(e.valid_from), until = timeOf(e.valid_until);
      out.push({
        keyId, raw, ...(from !== undefined ? { from } : {}), ...(until !== undefined ? { until } : {}),
        ...(typeof nodeId === 'string' ? { nodeId } : {}),
      });
    } catch { /* not a key: ignored, so it can match nothing */ }
  };
  for (const e of list) {
    // a key set's entries carry the windows; the bare current key of the same document adds nothing new
    if (isObject(e) && Array.isArray(e.keys)) for (const x of e.keys) add(x, e.node_id);
    add(e, isObject(e) ? e.node_id : undefined);
  }
  return out;
}

/** Whether a signed time lies in the key's window (both ends inclusive); no window: always. */
function inWindow(key: TrustedKey, at: unknown): boolean {
  if (key.from === undefined && key.until === undefined) return true;
  const t = timeOf(at);
  return t !== undefined && (key.from === undefined || key.from <= t) && (key.until === undefined || t <= key.until);
}

const str = (v: unknown): v is string => typeof v === 'string';

/**
 * A signed receipt (VERIFY_RECEIPT / GET_RECEIPT result, or { receipt, signature }): Ed25519 by a
 * trusted key over the RFC 8785 JSON of `receipt`, issued_at within that key's window. Reasons as the
 * server's own: unknown_key, bad_signature, outside_key_window (and malformed for what is not a receipt).
 */
export async function verifyReceipt(signed: unknown, nodeKeys: NodeKeys, opts?: VerifyOptions): Promise<Verdict> {
  const k = await kernelsOf(opts);
  const c = new Checks();
  if (!c.add('malformed', 'a receipt object and a signature string',
    isObject(signed) && isObject(signed.receipt) && str(signed.signature))) return c.verdict();
  const { receipt, signature } = signed as { receipt: Record<string, unknown>; signature: string };
  const key = trustedKeys(k, nodeKeys).find((t) => t.keyId === receipt.key_id);
  if (!c.add('unknown_key', `signed by a trusted key (key_id ${String(receipt.key_id)})`, !!key)) return c.verdict();
  c.add('bad_signature', 'signature (Ed25519 over the RFC 8785 JSON of receipt)',
    await verifySigned(key!.raw, () => utf8(canonicalJson(receipt)), signature, true));
  c.add('outside_key_window', 'issued_at lies in the key\'s validity window', inWindow(key!, receipt.issued_at));
  return c.verdict();
}

async function verifySigned(
  key: Uint8Array, bytes: () => Uint8Array, signature: string, url: boolean,
): Promise<boolean> {
  try {
    return await verifyEd25519(key, bytes(), fromBase64(signature, url));
  } catch {
    return false;
  }
}

/** A published pulse as PULSE and GET /api/v1/pulses/{index} return it. */
export interface SignedPulse {
  pulse: {
    format: string; chain_id: string; index: number; commit: string; commit_next: string;
    revealed_index: number | null; revealed_seed: string | null; prev_output: string | null; key_id: string;
    node_id: string; [k: string]: unknown;
  };
  signature: string;
  output_hash: string;
  public_key?: string;
}

/** The fields of a GET_PULSE result the recomputation needs. */
export interface PulseResult {
  quote_id: string;
  machine_id: string;
  bits: number;
  output_hex: string;
  pulse: { chain_id: string; index: number; commit: string };
}

export interface PulseOptions extends VerifyOptions {
  /** trusted keys (default: the pulse's own public_key — pin yours from nodes.json) */
  nodeKeys?: NodeKeys;
  /** a GET_PULSE result of period previous.index: recompute its output from the seed `pulse` reveals */
  result?: PulseResult;
}

function isPulse(p: unknown): p is SignedPulse {
  return isObject(p) && isObject(p.pulse) && str(p.signature) && str(p.output_hash)
    && typeof p.pulse.index === 'number' && str(p.pulse.chain_id) && str(p.pulse.commit);
}

/**
 * output_hash = SHA-256(signed bytes ‖ raw signature); signed bytes = RFC 8785 JSON of `pulse`;
 * time_start within the key's window; node_id = the node that published the trusted keys, or
 * svc-node-<key_id> of a trusted key (a node is named after its first key, which stays in its key set).
 */
async function checkPulse(k: Kernels, c: Checks, label: string, p: SignedPulse, keys: TrustedKey[]): Promise<void> {
  const key = keys.find((t) => t.keyId === p.pulse.key_id);
  if (!c.add('unknown_key', `${label} signed by a trusted key (key_id ${p.pulse.key_id})`, !!key)) return;
  const signed = utf8(canonicalJson(p.pulse));
  let sig: Uint8Array = new Uint8Array(0);
  try { sig = fromBase64Url(p.signature); } catch { /* stays empty: fails below */ }
  c.add('bad_signature', `${label} signature (Ed25519, node key)`, await verifyEd25519(key!.raw, signed, sig));
  c.add('bad_output_hash', `${label} output_hash = SHA-256(signed bytes ‖ signature)`,
    toHex(k.sha256(concat(signed, sig))) === p.output_hash);
  c.add('outside_key_window', `${label} time_start lies in the key's validity window`,
    inWindow(key!, p.pulse.time_start));
  c.add('wrong_node_id', `${label} node_id names a trusted key's node (svc-node-<key_id of its first key>)`,
    str(p.pulse.node_id)
      && keys.some((t) => t.nodeId === p.pulse.node_id || p.pulse.node_id === `svc-node-${t.keyId}`));
}

/** HMAC-SHA256(seed, lp(quote_id) ‖ lp(machine_id)) expanded to `bits` (docs/verify.md §GET_PULSE). */
export function pulseOutput(
  k: Kernels, seed: Uint8Array, quoteId: string, machineId: string, bits: number,
): Uint8Array {
  const key = k.hmacSha256(seed, concat(lp(quoteId), lp(machineId)));
  return k.pulseExpand(key, new Uint8Array(0), bits);
}

/**
 * A pulse: its signature and output hash; with `previous`, the chain link (index, chain, prev_output,
 * commit = previous.commit_next) and the reveal (SHA-256(revealed_seed) = previous.commit); with
 * `opts.result` (a GET_PULSE result of the previous period), the recomputed expansion.
 */
export async function verifyPulse(pulse: unknown, previous?: unknown, opts?: PulseOptions): Promise<Verdict> {
  const k = await kernelsOf(opts);
  const c = new Checks();
  const label = previous === undefined ? 'pulse' : 'pulse k+1';
  if (!c.add('malformed', `${label} is a signed pulse`, isPulse(pulse))) return c.verdict();
  if (previous !== undefined && !c.add('malformed', 'pulse k is a signed pulse', isPulse(previous))) {
    return c.verdict();
  }
  const p = pulse as SignedPulse, prev = previous as SignedPulse | undefined;
  const keys = trustedKeys(k, opts?.nodeKeys ?? p.public_key ?? prev?.public_key ?? []);
  if (prev) await checkPulse(k, c, 'pulse k', prev, keys);
  await checkPulse(k, c, label, p, keys);
  if (!prev) return c.verdict();
  const r = opts?.result;
  if (r !== undefined) {
    c.add('wrong_pulse', 'pulse k is the result\'s pulse', isObject(r) && isObject(r.pulse)
      && r.pulse.index === prev.pulse.index && r.pulse.chain_id === prev.pulse.chain_id
      && r.pulse.commit === prev.pulse.commit);
  }
  c.add('not_next', 'pulse k+1 follows pulse k (index, chain, prev_output)', p.pulse.index === prev.pulse.index + 1
    && p.pulse.chain_id === prev.pulse.chain_id && p.pulse.prev_output === prev.output_hash);
  c.add('commit_mismatch', 'pulse k+1 commit = pulse k commit_next', p.pulse.commit === prev.pulse.commit_next);
  const revealed = p.pulse.revealed_index === prev.pulse.index && str(p.pulse.revealed_seed);
  c.add('no_reveal', 'pulse k+1 reveals seed k', revealed);
  let seed: Uint8Array | null = null;
  try { seed = fromHex(p.pulse.revealed_seed ?? ''); } catch { /* not hex: fails below */ }
  c.add('bad_reveal', 'SHA-256(revealed seed) = commit of pulse k',
    revealed && seed !== null && toHex(k.sha256(seed)) === prev.pulse.commit);
  if (!isObject(r)) return c.verdict();
  let recomputed = '';
  try {
    recomputed = toHex(pulseOutput(k, seed ?? new Uint8Array(0), r.quote_id, r.machine_id, r.bits));
  } catch (e) {
    c.add('bad_output', 'recompute output', false, String(e));
    return c.verdict();
  }
  const same = recomputed === r.output_hex;
  const detail = same ? undefined : `recomputed ${recomputed.slice(0, 32)}…`;
  c.add('bad_output', 'recomputed output = output_hex', same, detail);
  return c.verdict();
}

export interface LogOptions extends VerifyOptions {
  /** the log the proof must come from (svc/<node_id>/timestamps or …/machine-events) */
  origin?: string;
}

/** A signed checkpoint: the note's signature line named after the origin, by a trusted key. */
async function checkCheckpoint(
  k: Kernels, c: Checks, label: string, note: string, keys: TrustedKey[], origin?: string,
): Promise<ParsedCheckpoint | null> {
  let cp: ParsedCheckpoint, parsed: ReturnType<typeof parseNote>;
  try {
    parsed = parseNote(note);
    cp = parseCheckpoint(parsed.text);
  } catch (e) {
    c.add('malformed', `${label} parses`, false, (e as Error).message);
    return null;
  }
  if (origin !== undefined) {
    c.add('wrong_origin', `${label} origin is the expected log`, cp.origin === origin, cp.origin);
  }
  let ok = false;
  for (const key of keys) {
    const hash = noteKeyHash(k, cp.origin, key.raw);
    const sig = parsed.signatures.find((s) => s.name === cp.origin && equalBytes(s.keyHash, hash));
    if (sig && await verifyEd25519(key.raw, utf8(parsed.text), sig.signature)) { ok = true; break; }
  }
  c.add('bad_checkpoint_signature', `${label} signed by the node key (signed note, Ed25519)`, ok);
  return cp;
}

/**
 * A c2sp.org/tlog-proof@v1 text for `entry` (TIMESTAMP_PROOF, MACHINE_EVENT_LOG): the checkpoint's
 * signature, then RFC 6962 inclusion of SHA-256(0x00 ‖ entry) at the proof's index under its root.
 */
export async function verifyLogInclusion(
  proofText: string, entry: Uint8Array, nodeKeys: NodeKeys, opts?: LogOptions,
): Promise<Verdict> {
  const k = await kernelsOf(opts);
  const c = new Checks();
  const proof = parseProof(String(proofText));
  if (typeof proof === 'string') c.add('malformed', 'proof parses', false, proof);
  else await checkInclusion(k, c, proof, entry, trustedKeys(k, nodeKeys), opts?.origin);
  return c.verdict();
}

/** The parsed proof, or why it does not parse. */
function parseProof(text: string): ParsedTlogProof | string {
  try {
    return parseTlogProof(text);
  } catch (e) {
    return (e as Error).message;
  }
}

/** The checkpoint's signature, then RFC 6962 inclusion of SHA-256(0x00 ‖ entry) under its size and root. */
async function checkInclusion(
  k: Kernels, c: Checks, proof: ParsedTlogProof, entry: Uint8Array, keys: TrustedKey[], origin?: string,
): Promise<void> {
  const cp = await checkCheckpoint(k, c, 'checkpoint', proof.checkpoint, keys, origin);
  if (!cp) return;
  const v = k.verifyInclusion(k.merkleLeafHash(entry), proof.index, cp.size, proof.proof, cp.root);
  const name = `entry included at index ${proof.index} of ${cp.size} (RFC 6962)`;
  c.add('not_included', name, v.ok, v.ok ? undefined : v.reason);
}

/**
 * Two signed checkpoints of one log and an RFC 9162 consistency proof between them (hashes as
 * bytes or base64): the newer tree extends the older one.
 */
export async function verifyLogConsistency(
  oldCheckpoint: string, newCheckpoint: string, proof: readonly (Uint8Array | string)[], nodeKeys: NodeKeys,
  opts?: LogOptions,
): Promise<Verdict> {
  const k = await kernelsOf(opts);
  const c = new Checks();
  const keys = trustedKeys(k, nodeKeys);
  const a = await checkCheckpoint(k, c, 'old checkpoint', String(oldCheckpoint), keys, opts?.origin);
  const b = await checkCheckpoint(k, c, 'new checkpoint', String(newCheckpoint), keys, opts?.origin ?? a?.origin);
  if (!a || !b) return c.verdict();
  let hashes: Uint8Array[];
  try {
    hashes = proof.map((h) => (typeof h === 'string' ? fromBase64(h) : h));
  } catch {
    c.add('malformed', 'proof hashes are base64', false);
    return c.verdict();
  }
  if (!c.add('inconsistent', 'old tree is not larger than the new one', a.size <= b.size)) return c.verdict();
  const v = a.size === 0n
    ? { ok: hashes.length === 0, reason: 'invalid_proof' }
    : k.verifyConsistency(a.size, b.size, a.root, b.root, hashes);
  c.add('inconsistent', `tree ${b.size} extends tree ${a.size} (RFC 9162 §2.1.4)`, v.ok, v.ok ? undefined : v.reason);
  return c.verdict();
}

export interface TimestampOptions extends LogOptions {
  /** the 32-byte digest you asked to timestamp: the token must carry it */
  digest?: Uint8Array;
}

/**
 * A TIMESTAMP_PROOF result: the token is the logged entry (its RFC 8785 JSON), its own signature,
 * its serial is its index in the log, and the signed checkpoint includes it.
 */
export async function verifyTimestampProof(
  result: unknown, nodeKeys: NodeKeys, opts?: TimestampOptions,
): Promise<Verdict> {
  const k = await kernelsOf(opts);
  const c = new Checks();
  const r = result as { token?: Record<string, unknown>; token_signature?: string; log?: Record<string, unknown>;
    tlog_proof?: string };
  if (!c.add('malformed', 'a token, its signature, the log entry and a tlog proof', isObject(result)
    && isObject(r.token) && str(r.token_signature) && isObject(r.log) && str(r.log.entry_base64)
    && str(r.tlog_proof))) return c.verdict();
  const token = r.token!;
  let entry: Uint8Array;
  try { entry = fromBase64(r.log!.entry_base64 as string); } catch { entry = new Uint8Array(0); }
  c.add('entry_mismatch', 'the logged entry is the RFC 8785 JSON of the token',
    equalBytes(entry, utf8(canonicalJson(token))));
  const keys = trustedKeys(k, nodeKeys);
  const key = keys.find((t) => t.keyId === token.key_id);
  if (c.add('unknown_key', `token signed by a trusted key (key_id ${String(token.key_id)})`, !!key)) {
    c.add('bad_token_signature', 'token signature (Ed25519 over the entry bytes)',
      await verifySigned(key!.raw, () => entry, r.token_signature!, true));
    c.add('outside_key_window', 'token time lies in the key\'s validity window', inWindow(key!, token.time));
  }
  if (opts?.digest) {
    c.add('digest_mismatch', 'the token is for your digest', token.digest_sha256 === toHex(opts.digest));
  }
  const proof = parseProof(r.tlog_proof!);
  const parsed = typeof proof !== 'string';
  // a safe integer first: BigInt() throws on a fraction or NaN
  c.add('wrong_serial', 'token serial = its index in the log', parsed && Number.isSafeInteger(token.serial)
    && BigInt(token.serial as number) === proof.index);
  if (!parsed) {
    c.add('malformed', 'proof parses', false, proof);
    return c.verdict();
  }
  const origin = opts?.origin ?? (str(token.log_origin) ? token.log_origin : undefined);
  await checkInclusion(k, c, proof, entry, keys, origin);
  return c.verdict();
}

export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';
export const ATTEST_PREDICATE_TYPE = 'urn:svc:predicate:attest-event:v1';

/** DSSE pre-authentication encoding: "DSSEv1" SP len(type) SP type SP len(body) SP body. */
export function pae(payloadType: string, body: Uint8Array): Uint8Array {
  const t = utf8(payloadType);
  return concat(utf8(`DSSEv1 ${t.length} `), t, utf8(` ${body.length} `), body);
}

export interface AttestationOptions extends VerifyOptions {
  /** the event bytes you had attested: the statement's subject digest must be their SHA-256 */
  event?: Uint8Array;
}

export type AttestationVerdict = Verdict & { statement: Record<string, unknown> | null };

/**
 * An ATTEST_EVENT result (or its DSSE envelope): Ed25519 over PAE(payloadType, payload bytes) by a
 * trusted key, then exactly those payload bytes parsed as the in-toto Statement v1.
 */
export async function verifyAttestation(
  result: unknown, nodeKeys: NodeKeys, opts?: AttestationOptions,
): Promise<AttestationVerdict> {
  const k = await kernelsOf(opts);
  const c = new Checks();
  const env = (isObject(result) && isObject(result.envelope) ? result.envelope : result) as Record<string, unknown>;
  const sigs = isObject(env) && Array.isArray(env.signatures) ? env.signatures.filter(isObject) : [];
  if (!c.add('malformed', 'a DSSE envelope (payloadType, payload, signatures)',
    isObject(env) && str(env.payloadType) && str(env.payload) && sigs.length > 0)) {
    return { ...c.verdict(), statement: null };
  }
  c.add('wrong_payload_type', `payloadType is ${IN_TOTO_PAYLOAD_TYPE}`, env.payloadType === IN_TOTO_PAYLOAD_TYPE);
  let body: Uint8Array = new Uint8Array(0);
  try { body = fromBase64(env.payload as string); } catch { c.add('malformed', 'payload is base64', false); }
  const keys = trustedKeys(k, nodeKeys);
  const signed = pae(env.payloadType as string, body);
  const known = sigs.filter((s) => keys.some((t) => t.keyId === s.keyid));
  let ok = false;
  for (const s of known) {
    const key = keys.find((t) => t.keyId === s.keyid)!;
    if (str(s.sig) && await verifySigned(key.raw, () => signed, s.sig, false)) { ok = true; break; }
  }
  if (c.add('unknown_key', 'signed by a trusted key (keyid)', known.length > 0)) {
    c.add('bad_signature', 'signature (Ed25519 over the DSSE PAE of the payload bytes)', ok);
  }
  let statement: Record<string, unknown> | null = null;
  try {
    const parsed: unknown = JSON.parse(fromUtf8(body));
    if (isObject(parsed)) statement = parsed;
  } catch { /* reported below */ }
  const st = statement ?? {};
  c.add('malformed', 'payload is an in-toto Statement v1 of the attest-event predicate',
    st._type === 'https://in-toto.io/Statement/v1' && st.predicateType === ATTEST_PREDICATE_TYPE);
  if (opts?.event) {
    const subject = Array.isArray(st.subject) && isObject(st.subject[0]) ? st.subject[0] : {};
    const digest = isObject(subject.digest) ? subject.digest.sha256 : undefined;
    c.add('subject_mismatch', 'subject digest = SHA-256(your event)', digest === toHex(k.sha256(opts.event)));
  }
  const v = c.verdict();
  return { ...v, statement: v.valid ? statement : null };
}

export const SEALED_INFO = 'svc sealed-message v1';
export type SealedVerdict = Verdict & { plaintext: Uint8Array | null };

/**
 * Opens a SEALED_MESSAGE result ({ enc_hex, ciphertext_hex, info_hex?, aad_hex?, suite? }) with the
 * recipient's raw 32-byte X25519 private key: HPKE base mode, the suite docs/verify.md names.
 */
export async function openSealedMessage(
  result: unknown, recipientPrivateKey: Uint8Array, opts?: VerifyOptions,
): Promise<SealedVerdict> {
  const k = await kernelsOf(opts);
  const c = new Checks();
  const r = result as Record<string, unknown>;
  let enc: Uint8Array = new Uint8Array(0), ct: Uint8Array = new Uint8Array(0);
  let info: Uint8Array = utf8(SEALED_INFO), aad: Uint8Array = new Uint8Array(0);
  let parsed = false;
  try {
    // fromHex throws on anything but hex text (and reading a field of null throws): all are malformed
    enc = fromHex(r.enc_hex as string); ct = fromHex(r.ciphertext_hex as string);
    if (str(r.info_hex)) info = fromHex(r.info_hex);
    if (str(r.aad_hex)) aad = fromHex(r.aad_hex);
    parsed = true;
  } catch { /* not hex, or no object */ }
  if (!c.add('malformed', 'enc_hex and ciphertext_hex', parsed)) return { ...c.verdict(), plaintext: null };
  const suite = isObject(r.suite) ? r.suite : null;
  c.add('unsupported_suite', 'HPKE suite 0x0020/0x0001/0x0003, base mode', suite === null
    || (suite.kem_id === 0x0020 && suite.kdf_id === 0x0001 && suite.aead_id === 0x0003 && suite.mode === 'base'));
  const plain = recipientPrivateKey instanceof Uint8Array
    ? hpkeOpenBase(k, recipientPrivateKey, enc, ct, info, aad) : null;
  c.add('not_authentic', 'opens with this private key (the AEAD tag verifies)', plain !== null);
  const v = c.verdict();
  return { ...v, plaintext: v.valid ? plain : null };
}
