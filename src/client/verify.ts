// Offline verification for the client kit (svc verify-pulse, svc pulse, svc verify-log): the embedding kit's
// verifiers (src/kit/verify.ts, the package's @svc/kit/verify) on the kit's own kernels (build/kernels.wasm,
// loaded once per process) — one implementation for the CLI, the tests and every embedder. docs/verify.md
// gives the checks. The keys may be a key set (after a key rotation, pulses and checkpoints name retired
// keys too).
import {
  verifyLogInclusion, verifyPulse as verifyPulseKit, type Check, type NodeKey, type NodeKeys, type PulseResult,
} from '../kit/verify.ts';
import type { SignedPulse } from '../protocol/pulse-format.ts';

export type { Check, NodeKey, NodeKeys, PulseResult };

/**
 * A GET_PULSE result, given pulse k (which committed the seed) and pulse k+1 (which revealed it):
 * both signatures with the node's public key, the chain link, SHA-256(revealed seed) = commit, and
 * the output recomputed with the same WASM kernels.
 */
export async function verifyPulse(
  result: PulseResult,
  committed: SignedPulse,
  revealing: SignedPulse,
  nodeKeys: NodeKeys,
): Promise<{ ok: boolean; checks: Check[] }> {
  const v = await verifyPulseKit(revealing, committed, { result, nodeKeys });
  return { ok: v.valid, checks: v.checks };
}

/**
 * A published pulse (PULSE: `svc pulse`), with the pulse before it when there is one: both
 * signatures and output hashes, key_id and node_id, and the chain link with the seed it reveals.
 */
export async function verifyPublishedPulse(
  pulse: SignedPulse,
  previous: SignedPulse | undefined,
  nodeKeys: NodeKeys,
): Promise<{ ok: boolean; checks: Check[] }> {
  const v = await verifyPulseKit(pulse, previous, { nodeKeys });
  return { ok: v.valid, checks: v.checks };
}

/**
 * A c2sp.org/tlog-proof@v1 text for an entry (TIMESTAMP_PROOF, MACHINE_EVENT_LOG): the
 * checkpoint's signed-note signature by the node key under the log's origin, then the RFC 6962
 * inclusion of SHA-256(0x00 ‖ entry) at the proof's index under its root.
 */
export async function verifyTlogProof(
  proofText: string,
  entry: Uint8Array,
  nodeKeys: NodeKeys,
  expectedOrigin?: string,
): Promise<{ ok: boolean; checks: Check[] }> {
  const v = await verifyLogInclusion(proofText, entry, nodeKeys, { origin: expectedOrigin });
  return { ok: v.valid, checks: v.checks };
}
