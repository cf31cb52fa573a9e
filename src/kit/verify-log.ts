// The transparency-log verifiers (docs/verify.md §Timestamps): a signed checkpoint, an entry's inclusion
// under it, two checkpoints' consistency, and the two log-backed results, TIMESTAMP_PROOF and
// MACHINE_EVENT_LOG, whose `log` fields must restate the proof they carry.
import type { Kernels } from '../kernels/kernels.ts';
import { equalBytes, fromCanonicalBase64, fromUtf8, isObject, toBase64, toHex, utf8 } from './bytes.ts';
import { verifyEd25519 } from './ed25519.ts';
import {
  noteKeyHash, parseCheckpoint, parseNote, parseTlogProof, type ParsedCheckpoint, type ParsedTlogProof,
} from './tlog.ts';
import {
  asIs, canonicalBytes, inWindow, keyFields, originOption, restated, sameUint, shown, str, trustedKeys, verdictOf,
  verifySigned, why, type Checks, type NodeKeys, type TrustedKey, type Verdict, type VerifyOptions,
} from './verdict.ts';

export interface LogOptions extends VerifyOptions {
  /** the log the proof must come from (svc/<node_id>/timestamps or …/machine-events) */
  origin?: string;
}

/** A checkpoint that parsed, and the trusted key whose signature on it verified (null: none did). */
interface SignedCheckpoint { cp: ParsedCheckpoint; key: TrustedKey | null }

/** A signed checkpoint: the note's signature line named after the origin, by a trusted key. */
async function checkCheckpoint(
  k: Kernels, c: Checks, label: string, note: unknown, keys: TrustedKey[], origin?: string,
): Promise<SignedCheckpoint | null> {
  let cp: ParsedCheckpoint, parsed: ReturnType<typeof parseNote>;
  try {
    parsed = parseNote(note as string);
    cp = parseCheckpoint(parsed.text);
  } catch (e) {
    c.add('malformed', `${label} parses`, false, why(e));
    return null;
  }
  if (origin !== undefined) {
    c.add('wrong_origin', `${label} origin is the expected log`, cp.origin === origin, cp.origin);
  }
  let signer: TrustedKey | null = null;
  for (const key of keys) {
    const hash = noteKeyHash(k, cp.origin, key.raw);
    const sig = parsed.signatures.find((s) => s.name === cp.origin && equalBytes(s.keyHash, hash));
    if (sig && await verifyEd25519(key.raw, utf8(parsed.text), sig.signature)) { signer = key; break; }
  }
  c.add('bad_checkpoint_signature', `${label} signed by the node key (signed note, Ed25519)`, signer !== null);
  return { cp, key: signer };
}

/**
 * A c2sp.org/tlog-proof@v1 text for `entry` (TIMESTAMP_PROOF, MACHINE_EVENT_LOG): the checkpoint's
 * signature, then RFC 6962 inclusion of SHA-256(0x00 ‖ entry) at the proof's index under its root.
 */
export async function verifyLogInclusion(
  proofText: string, entry: Uint8Array, nodeKeys: NodeKeys, opts?: LogOptions,
): Promise<Verdict> {
  return verdictOf(opts, async (k, c, o) => {
    const origin = originOption(c, o);
    if (origin === false) return;
    if (!(entry instanceof Uint8Array)) {
      c.add('malformed', 'the entry is bytes (a Uint8Array)', false);
      return;
    }
    const proof = parseProof(proofText);
    if (typeof proof === 'string') c.add('malformed', 'proof parses', false, proof);
    else await checkInclusion(k, c, proof, entry, trustedKeys(k, nodeKeys), origin);
  }, asIs);
}

/** The parsed proof, or why it does not parse. */
function parseProof(text: unknown): ParsedTlogProof | string {
  try {
    return parseTlogProof(text as string);
  } catch (e) {
    return why(e);
  }
}

/** The checkpoint's signature, then RFC 6962 inclusion of SHA-256(0x00 ‖ entry) under its size and root. */
async function checkInclusion(
  k: Kernels, c: Checks, proof: ParsedTlogProof, entry: Uint8Array, keys: TrustedKey[], origin?: string,
): Promise<SignedCheckpoint | null> {
  const signed = await checkCheckpoint(k, c, 'checkpoint', proof.checkpoint, keys, origin);
  if (!signed) return null;
  const { cp } = signed;
  const v = k.verifyInclusion(k.merkleLeafHash(entry), proof.index, cp.size, proof.proof, cp.root);
  const name = `entry included at index ${proof.index} of ${cp.size} (RFC 6962)`;
  c.add('not_included', name, v.ok, v.ok ? undefined : v.reason);
  return signed;
}

/**
 * The `log` object of a log-backed result restates the proof (origin, leaf_index, tree_size, leaf_hash,
 * root, inclusion_proof, checkpoint) and the key that signed the checkpoint (public_key, key_id).
 */
function checkLogFields(
  k: Kernels, c: Checks, log: Record<string, unknown>, proof: ParsedTlogProof, signed: SignedCheckpoint,
  entry: Uint8Array,
): void {
  const { cp, key } = signed;
  restated(c, 'log fields', log, {
    origin: (v) => v === cp.origin,
    leaf_index: (v) => sameUint(v, proof.index),
    tree_size: (v) => sameUint(v, cp.size),
    leaf_hash: (v) => v === toBase64(k.merkleLeafHash(entry)),
    root: (v) => v === toBase64(cp.root),
    inclusion_proof: (v) => Array.isArray(v) && v.length === proof.proof.length
      && v.every((h, i) => h === toBase64(proof.proof[i]!)),
    checkpoint: (v) => v === proof.checkpoint,
    ...(key ? keyFields(key) : {}),
  });
}

/**
 * Two signed checkpoints of one log and an RFC 9162 consistency proof between them (hashes as
 * bytes or base64): the newer tree extends the older one.
 */
export async function verifyLogConsistency(
  oldCheckpoint: string, newCheckpoint: string, proof: readonly (Uint8Array | string)[], nodeKeys: NodeKeys,
  opts?: LogOptions,
): Promise<Verdict> {
  return verdictOf(opts, async (k, c, o) => {
    const origin = originOption(c, o);
    if (origin === false) return;
    const keys = trustedKeys(k, nodeKeys);
    const a = await checkCheckpoint(k, c, 'old checkpoint', oldCheckpoint, keys, origin);
    const b = await checkCheckpoint(k, c, 'new checkpoint', newCheckpoint, keys, origin ?? a?.cp.origin);
    if (!a || !b) return;
    const hashes = Array.isArray(proof)
      ? proof.map((h: unknown) => (typeof h === 'string' ? fromCanonicalBase64(h) : h instanceof Uint8Array ? h : null))
      : [null];
    if (!c.add('malformed', 'proof hashes are bytes or base64', hashes.every((h) => h !== null))) return;
    const [from, to] = [a.cp, b.cp];
    if (!c.add('inconsistent', 'old tree is not larger than the new one', from.size <= to.size)) return;
    const v = from.size === 0n
      ? { ok: hashes.length === 0, reason: 'invalid_proof' }
      : k.verifyConsistency(from.size, to.size, from.root, to.root, hashes as Uint8Array[]);
    c.add('inconsistent', `tree ${to.size} extends tree ${from.size} (RFC 9162 §2.1.4)`, v.ok,
      v.ok ? undefined : v.reason);
  }, asIs);
}

export interface TimestampOptions extends LogOptions {
  /** the 32-byte digest you asked to timestamp: the token must carry it */
  digest?: Uint8Array;
}

/**
 * A TIMESTAMP_PROOF result: the token is the logged entry (its RFC 8785 JSON), its own signature,
 * its serial is its index in the log, the signed checkpoint includes it, and the `log` fields restate
 * the proof and the checkpoint's key.
 */
export async function verifyTimestampProof(
  result: unknown, nodeKeys: NodeKeys, opts?: TimestampOptions,
): Promise<Verdict> {
  return verdictOf(opts, async (k, c, o) => {
    const r = result as { token?: Record<string, unknown>; token_signature?: string; log?: Record<string, unknown>;
      tlog_proof?: string };
    if (!c.add('malformed', 'a token, its signature, the log entry and a tlog proof', isObject(result)
      && isObject(r.token) && str(r.token_signature) && isObject(r.log) && str(r.log.entry_base64)
      && str(r.tlog_proof))) return;
    const origin = originOption(c, o);
    if (origin === false) return;
    const token = r.token!, log = r.log!;
    const entry = fromCanonicalBase64(log.entry_base64) ?? new Uint8Array(0);
    const bytes = canonicalBytes(token);
    c.add('entry_mismatch', 'the logged entry is the RFC 8785 JSON of the token',
      !str(bytes) && equalBytes(entry, bytes), str(bytes) ? bytes : undefined);
    const keys = trustedKeys(k, nodeKeys);
    const key = keys.find((t) => t.keyId === token.key_id);
    if (c.add('unknown_key', `token signed by a trusted key (key_id ${shown(token.key_id)})`, !!key)) {
      c.add('bad_token_signature', 'token signature (Ed25519 over the entry bytes)',
        await verifySigned(key!.raw, entry, r.token_signature, true));
      c.add('outside_key_window', 'token time lies in the key\'s validity window', inWindow(key!, token.time));
    }
    const digest = o.digest;
    if (digest !== undefined && digest !== null) {
      const bytesGiven = digest instanceof Uint8Array;
      c.add('digest_mismatch', 'the token is for your digest', bytesGiven && token.digest_sha256 === toHex(digest),
        bytesGiven ? undefined : 'the digest option is not bytes (a Uint8Array)');
    }
    const proof = parseProof(r.tlog_proof);
    const parsed = typeof proof !== 'string';
    // a safe integer first: BigInt() throws on a fraction or NaN
    c.add('wrong_serial', 'token serial = its index in the log', parsed && Number.isSafeInteger(token.serial)
      && BigInt(token.serial as number) === proof.index);
    if (!parsed) {
      c.add('malformed', 'proof parses', false, proof);
      return;
    }
    const signed = await checkInclusion(k, c, proof, entry, keys, origin ?? (str(token.log_origin)
      ? token.log_origin : undefined));
    if (signed) checkLogFields(k, c, log, proof, signed, entry);
  }, asIs);
}

/**
 * A MACHINE_EVENT_LOG result: the logged entry (log.entry_base64) is the RFC 8785 JSON of `entry`, names
 * its own index and log, the signed checkpoint includes it, and the `log` fields restate the proof and
 * the checkpoint's key.
 */
export async function verifyMachineEventLog(
  result: unknown, nodeKeys: NodeKeys, opts?: LogOptions,
): Promise<Verdict> {
  return verdictOf(opts, async (k, c, o) => {
    const r = result as { entry?: unknown; log?: Record<string, unknown>; tlog_proof?: string };
    if (!c.add('malformed', 'the log entry and a tlog proof', isObject(result) && isObject(r.log)
      && str(r.log.entry_base64) && str(r.tlog_proof))) return;
    const origin = originOption(c, o);
    if (origin === false) return;
    const log = r.log!;
    const entry = fromCanonicalBase64(log.entry_base64) ?? new Uint8Array(0);
    if (r.entry !== undefined) {
      const bytes = canonicalBytes(r.entry);
      c.add('entry_mismatch', 'the logged entry is the RFC 8785 JSON of entry', !str(bytes) && equalBytes(entry, bytes),
        str(bytes) ? bytes : undefined);
    }
    let logged: Record<string, unknown> = {};
    try {
      const v: unknown = JSON.parse(fromUtf8(entry));
      if (isObject(v)) logged = v;
    } catch { /* no index: reported below */ }
    const proof = parseProof(r.tlog_proof);
    if (typeof proof === 'string') {
      c.add('malformed', 'proof parses', false, proof);
      return;
    }
    c.add('wrong_index', 'the entry\'s index = its index in the log', sameUint(logged.index, proof.index));
    const signed = await checkInclusion(k, c, proof, entry, trustedKeys(k, nodeKeys), origin
      ?? (str(logged.log_origin) ? logged.log_origin : undefined));
    if (signed) checkLogFields(k, c, log, proof, signed, entry);
  }, asIs);
}
