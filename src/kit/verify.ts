// The offline verifiers (docs/verify.md, docs/embedding.md): everything the service signs, checked
// with nothing but the node's published Ed25519 public key. Each returns { valid, reason, checks }:
// `reason` is null when valid, else the code of the first failed check; `checks` names every check
// in order for people. Any input gets a verdict, never an exception: what the checks cannot read (a
// wrong type, a getter that throws, text with no RFC 8785 form) is a failed check. Only a kernels.wasm
// that cannot be loaded rejects, since then nothing was checked. A verdict vouches for the signed
// content and for each field beside it that restates what was verified (field_mismatch when one does
// not); signatures, keys and hashes count only in the one encoding the node writes. One
// implementation: the CLI and the client's verify-pulse / verify-log run these too (src/client/verify.ts).
import type { Kernels } from '../kernels/kernels.ts';
import {
  concat, fromCanonicalBase64, fromLowerHex, fromUtf8, isObject, lp, toBase64Url, toHex, utf8, wellFormed,
} from './bytes.ts';
import { verifyEd25519 } from './ed25519.ts';
import { hpkeOpenBase } from './hpke.ts';
import {
  asIs, boundOf, canonicalBytes, inWindow, keyFields, keyIdOf, restated, sameJson, sameWindow, shown, str,
  trustedKeys, verdictOf, verifySigned, why, type Checks, type NodeKeys, type TrustedKey, type Verdict,
  type VerifyOptions,
} from './verdict.ts';

export { keyIdOf, type Check, type NodeKey, type NodeKeys, type Verdict, type VerifyOptions } from './verdict.ts';
export {
  verifyLogConsistency, verifyLogInclusion, verifyMachineEventLog, verifyTimestampProof, type LogOptions,
  type TimestampOptions,
} from './verify-log.ts';

/**
 * A signed receipt (VERIFY_RECEIPT / GET_RECEIPT result, or { receipt, signature }): Ed25519 by a
 * trusted key over the RFC 8785 JSON of `receipt`, issued_at within that key's window. Reasons as the
 * server's own: unknown_key, bad_signature, outside_key_window (and malformed for what is not a receipt);
 * field_mismatch when receipt_id, key_id, public_key, alg or the key's window beside it differ.
 */
export async function verifyReceipt(signed: unknown, nodeKeys: NodeKeys, opts?: VerifyOptions): Promise<Verdict> {
  return verdictOf(opts, async (k, c) => {
    if (!c.add('malformed', 'a receipt object and a signature string',
      isObject(signed) && isObject(signed.receipt) && str(signed.signature))) return;
    const s = signed as Record<string, unknown> & { receipt: Record<string, unknown> };
    const receipt = s.receipt;
    const key = trustedKeys(k, nodeKeys).find((t) => t.keyId === receipt.key_id);
    if (!c.add('unknown_key', `signed by a trusted key (key_id ${shown(receipt.key_id)})`, !!key)) return;
    const bytes = canonicalBytes(receipt);
    c.add('bad_signature', 'signature (Ed25519 over the RFC 8785 JSON of receipt)',
      await verifySigned(key!.raw, str(bytes) ? null : bytes, s.signature, true), str(bytes) ? bytes : undefined);
    c.add('outside_key_window', 'issued_at lies in the key\'s validity window', inWindow(key!, receipt.issued_at));
    restated(c, 'the fields beside the receipt', s, {
      ...keyFields(key!),
      receipt_id: (v) => v === receipt.receipt_id,
      key_valid_from: (v) => !key!.windowStated || boundOf(v) === key!.from,
      key_valid_until: (v) => !key!.windowStated || boundOf(v) === key!.until,
    });
  }, asIs);
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
 * The key set a pulse carries (node_keys): each entry that names a public key names a key, its key_id
 * its own, the signing key among them, and every window it states for a key you trust the window you trust.
 */
function nodeKeysAgree(k: Kernels, v: unknown, keys: TrustedKey[], signer: TrustedKey): boolean {
  if (!Array.isArray(v)) return false;
  let signerListed = false;
  for (const e of v) {
    if (!isObject(e) || e.public_key === undefined) continue;
    const raw = fromCanonicalBase64(e.public_key, true);
    if (!raw || raw.length !== 32) return false;
    const id = keyIdOf(k, raw);
    if ((e.key_id !== undefined && e.key_id !== id) || (e.alg !== undefined && e.alg !== 'Ed25519')) return false;
    const trusted = keys.find((t) => t.keyId === id);
    if (trusted && !sameWindow(trusted, e.valid_from, e.valid_until)) return false;
    signerListed ||= id === signer.keyId;
  }
  return signerListed;
}

/**
 * output_hash = SHA-256(signed bytes ‖ raw signature); signed bytes = RFC 8785 JSON of `pulse`;
 * time_start within the key's window; node_id = the node that published the trusted keys, or
 * svc-node-<key_id> of a trusted key (a node is named after its first key, which stays in its key set).
 */
async function checkPulse(k: Kernels, c: Checks, label: string, p: SignedPulse, keys: TrustedKey[]): Promise<void> {
  const key = keys.find((t) => t.keyId === p.pulse.key_id);
  if (!c.add('unknown_key', `${label} signed by a trusted key (key_id ${shown(p.pulse.key_id)})`, !!key)) return;
  const bytes = canonicalBytes(p.pulse);
  const signed = str(bytes) ? null : bytes;
  const sig = fromCanonicalBase64(p.signature, true) ?? new Uint8Array(0);
  c.add('bad_signature', `${label} signature (Ed25519, node key)`,
    signed !== null && await verifyEd25519(key!.raw, signed, sig), signed ? undefined : bytes as string);
  c.add('bad_output_hash', `${label} output_hash = SHA-256(signed bytes ‖ signature)`,
    signed !== null && toHex(k.sha256(concat(signed, sig))) === p.output_hash);
  c.add('outside_key_window', `${label} time_start lies in the key's validity window`,
    inWindow(key!, p.pulse.time_start));
  c.add('wrong_node_id', `${label} node_id names a trusted key's node (svc-node-<key_id of its first key>)`,
    str(p.pulse.node_id)
      && keys.some((t) => t.nodeId === p.pulse.node_id || p.pulse.node_id === `svc-node-${t.keyId}`));
  restated(c, `${label}'s fields beside it`, p as unknown as Record<string, unknown>, {
    public_key: (v) => v === toBase64Url(key!.raw),
    node_keys: (v) => nodeKeysAgree(k, v, keys, key!),
  });
}

/** HMAC-SHA256(seed, lp(quote_id) ‖ lp(machine_id)) expanded to `bits` (docs/verify.md §GET_PULSE). */
export function pulseOutput(
  k: Kernels, seed: Uint8Array, quoteId: string, machineId: string, bits: number,
): Uint8Array {
  const key = k.hmacSha256(seed, concat(lp(quoteId), lp(machineId)));
  return k.pulseExpand(key, new Uint8Array(0), bits);
}

/** quote_id and machine_id as the node wrote them: text UTF-8 carries as it is. */
const idsOf = (r: Record<string, unknown>): [string, string] => {
  const ids = [r.quote_id, r.machine_id];
  if (!ids.every((s) => str(s) && wellFormed(s))) throw new Error('quote_id and machine_id must be well-formed text');
  return ids as [string, string];
};

/**
 * A pulse: its signature and output hash; with `previous`, the chain link (index, chain, prev_output,
 * commit = previous.commit_next) and the reveal (SHA-256(revealed_seed) = previous.commit); with
 * `opts.result` (a GET_PULSE result of the previous period), the recomputed expansion.
 */
export async function verifyPulse(pulse: unknown, previous?: unknown, opts?: PulseOptions): Promise<Verdict> {
  return verdictOf(opts, async (k, c, o) => {
    const label = previous === undefined ? 'pulse' : 'pulse k+1';
    if (!c.add('malformed', `${label} is a signed pulse`, isPulse(pulse))) return;
    if (previous !== undefined && !c.add('malformed', 'pulse k is a signed pulse', isPulse(previous))) return;
    const p = pulse as SignedPulse, prev = previous as SignedPulse | undefined;
    // a result recomputes only from the seed pulse k+1 reveals: without pulse k nothing would check it
    if (!prev && o.result !== undefined
      && !c.add('malformed', 'a GET_PULSE result comes with pulse k (previous) to check it against', false)) return;
    const keys = trustedKeys(k, o.nodeKeys ?? p.public_key ?? prev?.public_key ?? []);
    if (prev) await checkPulse(k, c, 'pulse k', prev, keys);
    await checkPulse(k, c, label, p, keys);
    if (!prev) return;
    const r = o.result;
    if (r !== undefined) {
      // period_ms and revealed_by_index restate pulse k: held to it when the result carries them
      c.add('wrong_pulse', 'pulse k is the result\'s pulse', isObject(r) && isObject(r.pulse)
        && r.pulse.index === prev.pulse.index && r.pulse.chain_id === prev.pulse.chain_id
        && r.pulse.commit === prev.pulse.commit
        && (r.pulse.period_ms === undefined || r.pulse.period_ms === prev.pulse.period_ms)
        && (r.pulse.revealed_by_index === undefined || r.pulse.revealed_by_index === prev.pulse.index + 1));
    }
    c.add('not_next', 'pulse k+1 follows pulse k (index, chain, prev_output)', p.pulse.index === prev.pulse.index + 1
      && p.pulse.chain_id === prev.pulse.chain_id && p.pulse.prev_output === prev.output_hash);
    c.add('commit_mismatch', 'pulse k+1 commit = pulse k commit_next', p.pulse.commit === prev.pulse.commit_next);
    const revealed = p.pulse.revealed_index === prev.pulse.index && str(p.pulse.revealed_seed);
    c.add('no_reveal', 'pulse k+1 reveals seed k', revealed);
    const seed = fromLowerHex(p.pulse.revealed_seed);
    c.add('bad_reveal', 'SHA-256(revealed seed) = commit of pulse k',
      revealed && seed !== null && toHex(k.sha256(seed)) === prev.pulse.commit);
    if (!isObject(r)) return;
    let recomputed = '';
    try {
      const [quoteId, machineId] = idsOf(r);
      recomputed = toHex(pulseOutput(k, seed ?? new Uint8Array(0), quoteId, machineId, r.bits as number));
    } catch (e) {
      c.add('bad_output', 'recompute output', false, why(e));
      return;
    }
    const same = recomputed === r.output_hex;
    const detail = same ? undefined : `recomputed ${recomputed.slice(0, 32)}…`;
    c.add('bad_output', 'recomputed output = output_hex', same, detail);
  }, asIs);
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
 * trusted key, then exactly those payload bytes parsed as the in-toto Statement v1; a result's
 * `statement` and `public_key` beside the envelope must be those.
 */
export async function verifyAttestation(
  result: unknown, nodeKeys: NodeKeys, opts?: AttestationOptions,
): Promise<AttestationVerdict> {
  const none = (v: Verdict): AttestationVerdict => ({ ...v, statement: null });
  return verdictOf(opts, async (k, c, o) => {
    const outer = isObject(result) && isObject(result.envelope);
    const env = (outer ? (result as { envelope: unknown }).envelope : result) as Record<string, unknown>;
    const sigs = isObject(env) && Array.isArray(env.signatures) ? env.signatures.filter(isObject) : [];
    if (!c.add('malformed', 'a DSSE envelope (payloadType, payload, signatures)',
      isObject(env) && str(env.payloadType) && str(env.payload) && sigs.length > 0)) return none(c.verdict());
    c.add('wrong_payload_type', `payloadType is ${IN_TOTO_PAYLOAD_TYPE}`, env.payloadType === IN_TOTO_PAYLOAD_TYPE);
    const body = fromCanonicalBase64(env.payload);
    if (!body) c.add('malformed', 'payload is base64', false);
    const keys = trustedKeys(k, nodeKeys);
    const signed = pae(env.payloadType as string, body ?? new Uint8Array(0));
    const known = sigs.filter((s) => keys.some((t) => t.keyId === s.keyid));
    let signer: TrustedKey | null = null;
    for (const s of known) {
      const key = keys.find((t) => t.keyId === s.keyid)!;
      if (await verifySigned(key.raw, signed, s.sig, false)) { signer = key; break; }
    }
    if (c.add('unknown_key', 'signed by a trusted key (keyid)', known.length > 0)) {
      c.add('bad_signature', 'signature (Ed25519 over the DSSE PAE of the payload bytes)', signer !== null);
    }
    let statement: Record<string, unknown> | null = null;
    try {
      const parsed: unknown = JSON.parse(fromUtf8(body ?? new Uint8Array(0)));
      if (isObject(parsed)) statement = parsed;
    } catch { /* reported below */ }
    const st = statement ?? {};
    c.add('malformed', 'payload is an in-toto Statement v1 of the attest-event predicate',
      st._type === 'https://in-toto.io/Statement/v1' && st.predicateType === ATTEST_PREDICATE_TYPE);
    const event = o.event;
    if (event !== undefined && event !== null) {
      const subject = Array.isArray(st.subject) && isObject(st.subject[0]) ? st.subject[0] : {};
      const digest = isObject(subject.digest) ? subject.digest.sha256 : undefined;
      const given = event instanceof Uint8Array;
      c.add('subject_mismatch', 'subject digest = SHA-256(your event)', given && digest === toHex(k.sha256(event)),
        given ? undefined : 'the event option is not bytes (a Uint8Array)');
    }
    if (outer) {
      restated(c, 'the fields beside the envelope', result as Record<string, unknown>, {
        statement: (v) => statement !== null && sameJson(v, statement),
        ...(signer ? keyFields(signer) : {}),
      });
    }
    const v = c.verdict();
    return { ...v, statement: v.valid ? statement : null };
  }, none);
}

export const SEALED_INFO = 'svc sealed-message v1';
export type SealedVerdict = Verdict & { plaintext: Uint8Array | null };

const SUITE_NAMES = { kem: 'DHKEM(X25519, HKDF-SHA256)', kdf: 'HKDF-SHA256', aead: 'ChaCha20Poly1305' } as const;

/** The suite docs/verify.md names: its ids and mode, and its names where the result gives them. */
const isSealedSuite = (s: unknown): boolean => s === undefined || (isObject(s)
  && s.kem_id === 0x0020 && s.kdf_id === 0x0001 && s.aead_id === 0x0003 && s.mode === 'base'
  && Object.entries(SUITE_NAMES).every(([n, name]) => s[n] === undefined || s[n] === name));

/**
 * Opens a SEALED_MESSAGE result ({ enc_hex, ciphertext_hex, info_hex?, aad_hex?, suite? }, lowercase hex)
 * with the recipient's raw 32-byte X25519 private key: HPKE base mode, the suite docs/verify.md names.
 */
export async function openSealedMessage(
  result: unknown, recipientPrivateKey: Uint8Array, opts?: VerifyOptions,
): Promise<SealedVerdict> {
  const none = (v: Verdict): SealedVerdict => ({ ...v, plaintext: null });
  return verdictOf(opts, async (k, c) => {
    const r = isObject(result) ? result : {};
    const optional = (v: unknown, fallback: Uint8Array) => (v === undefined ? fallback : fromLowerHex(v));
    const enc = fromLowerHex(r.enc_hex), ct = fromLowerHex(r.ciphertext_hex);
    const info = optional(r.info_hex, utf8(SEALED_INFO)), aad = optional(r.aad_hex, new Uint8Array(0));
    if (!c.add('malformed', 'enc_hex and ciphertext_hex (and info_hex, aad_hex when given) are lowercase hex',
      isObject(result) && !!enc && !!ct && !!info && !!aad)) return none(c.verdict());
    c.add('unsupported_suite', 'HPKE suite 0x0020/0x0001/0x0003, base mode', isSealedSuite(r.suite));
    const plain = recipientPrivateKey instanceof Uint8Array
      ? hpkeOpenBase(k, recipientPrivateKey, enc!, ct!, info!, aad!) : null;
    c.add('not_authentic', 'opens with this private key (the AEAD tag verifies)', plain !== null);
    const v = c.verdict();
    return { ...v, plaintext: v.valid ? plain : null };
  }, none);
}
