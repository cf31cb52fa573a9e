// Offline verification for the client kit. GET_PULSE results (docs/verify.md): given the result,
// pulse k (which committed the seed) and pulse k+1 (which revealed it), verifies both pulse
// signatures with the node's public key, SHA-256(revealed seed) = commit, the chain link, and
// recomputes the output with the same WASM kernels. Needs no trust in the service beyond its
// published public key.
import { createHash } from 'node:crypto';
import { Kernels } from '../kernels/index.ts';
import { verifyWithRawKey } from '../protocol/ed25519.ts';
import { outputHash, pulseKeyMessage, signedBytes, type SignedPulse } from '../protocol/pulse-format.ts';
import { noteKeyHash, parseCheckpoint, parseNote, parseTlogProof } from '../protocol/tlog-format.ts';

export interface PulseResult {
  quote_id: string;
  machine_id: string;
  bits: number;
  output_hex: string;
  pulse: { chain_id: string; index: number; commit: string };
}

export type Check = { name: string; ok: boolean; detail?: string };

export function verifyPulse(
  result: PulseResult,
  committed: SignedPulse,
  revealing: SignedPulse,
  publicKeyB64url: string,
): { ok: boolean; checks: Check[] } {
  const k = Kernels.create();
  const pub = Buffer.from(publicKeyB64url, 'base64url');
  const checks: Check[] = [];
  const add = (name: string, ok: boolean, detail?: string) => checks.push({ name, ok, ...(detail ? { detail } : {}) });
  for (const [label, p] of [['pulse k', committed], ['pulse k+1', revealing]] as const) {
    const sig = Buffer.from(p.signature, 'base64url');
    add(`${label} signature (Ed25519, node key)`, verifyWithRawKey(pub, signedBytes(p.pulse), sig));
    add(`${label} output_hash = SHA-256(signed bytes ‖ signature)`, outputHash(p.pulse, sig) === p.output_hash);
  }
  add('pulse k is the result\'s pulse', committed.pulse.index === result.pulse.index
    && committed.pulse.chain_id === result.pulse.chain_id
    && committed.pulse.commit === result.pulse.commit);
  add('pulse k+1 follows pulse k (index, chain, prev_output)', revealing.pulse.index === committed.pulse.index + 1
    && revealing.pulse.chain_id === committed.pulse.chain_id
    && revealing.pulse.prev_output === committed.output_hash);
  add('pulse k+1 reveals seed k', revealing.pulse.revealed_index === committed.pulse.index
    && typeof revealing.pulse.revealed_seed === 'string');
  const seed = Buffer.from(revealing.pulse.revealed_seed ?? '', 'hex');
  add('SHA-256(revealed seed) = commit of pulse k',
    createHash('sha256').update(seed).digest('hex') === committed.pulse.commit);
  let recomputed = '';
  try {
    const key = k.hmacSha256(seed, pulseKeyMessage(result.quote_id, result.machine_id));
    recomputed = Buffer.from(k.pulseExpand(key, new Uint8Array(0), result.bits)).toString('hex');
  } catch (e) { add('recompute output', false, String(e)); }
  const matches = recomputed === result.output_hex;
  add('recomputed output = output_hex', matches, matches ? undefined : `recomputed ${recomputed.slice(0, 32)}…`);
  return { ok: checks.every((c) => c.ok), checks };
}

/**
 * Verifies a c2sp.org/tlog-proof@v1 text for an entry (TIMESTAMP_PROOF, MACHINE_EVENT_LOG;
 * docs/verify.md): the checkpoint's signed-note signature by the node key under the log's origin,
 * then the RFC 6962 inclusion of SHA-256(0x00 ‖ entry) at the proof's index under its root.
 */
export function verifyTlogProof(
  proofText: string,
  entry: Uint8Array,
  publicKeyB64url: string,
  expectedOrigin?: string,
): { ok: boolean; checks: Check[] } {
  const checks: Check[] = [];
  const add = (name: string, ok: boolean, detail?: string) => checks.push({ name, ok, ...(detail ? { detail } : {}) });
  const pub = Buffer.from(publicKeyB64url, 'base64url');
  try {
    const proof = parseTlogProof(proofText);
    const note = parseNote(proof.checkpoint);
    const cp = parseCheckpoint(note.text);
    if (expectedOrigin !== undefined) {
      add('checkpoint origin is the expected log', cp.origin === expectedOrigin, cp.origin);
    }
    const keyHash = noteKeyHash(cp.origin, pub);
    const sig = note.signatures.find((s) => s.name === cp.origin && s.keyHash.equals(keyHash));
    add('checkpoint signed by the node key (signed note, Ed25519)',
      !!sig && verifyWithRawKey(pub, Buffer.from(note.text, 'utf8'), sig.signature));
    const k = Kernels.create();
    const v = k.verifyInclusion(k.merkleLeafHash(entry), proof.index, cp.size, proof.proof, cp.root);
    add(`entry included at index ${proof.index} of ${cp.size} (RFC 6962)`, v.ok, v.ok ? undefined : v.reason);
  } catch (e) {
    add('proof parses', false, (e as Error).message);
  }
  return { ok: checks.length > 0 && checks.every((c) => c.ok), checks };
}
