// The published pulse format (docs/verify.md §GET_PULSE): field set, the exact signed bytes, the
// output hash, and the message a GET_PULSE expansion seed is derived from. Shared by the core
// (which signs) and the client kit (which verifies offline).
import { canonicalJson, sha256Hex } from './canonical.ts';

export const PULSE_FORMAT = 'svc_pulse_v1';

export interface PulseBody {
  format: typeof PULSE_FORMAT;
  chain_id: string;
  index: number;
  time_start: string;
  period_ms: number;
  status: 'genesis' | 'ok' | 'gap';
  commit: string;
  commit_next: string;
  revealed_index: number | null;
  revealed_seed: string | null;
  prev_output: string | null;
  node_id: string;
  key_id: string;
}

export interface SignedPulse { pulse: PulseBody; signature: string; output_hash: string }

/** Length-prefixed UTF-8: u32be(len) ‖ bytes. */
export function lp(s: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  const n = Buffer.alloc(4); n.writeUInt32BE(b.length);
  return Buffer.concat([n, b]);
}

/** The HMAC message for a GET_PULSE expansion seed: lp(quote_id) ‖ lp(machine_id). */
export function pulseKeyMessage(quoteId: string, machineId: string): Buffer {
  return Buffer.concat([lp(quoteId), lp(machineId)]);
}

export function signedBytes(p: PulseBody): Buffer {
  return Buffer.from(canonicalJson(p), 'utf8');
}

/** output_hash = SHA-256(signed bytes ‖ signature), as NIST Beacon 2.0 does. */
export function outputHash(p: PulseBody, signature: Uint8Array): string {
  return sha256Hex(Buffer.concat([signedBytes(p), signature]));
}
