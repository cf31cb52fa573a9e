// What the /verify page does with a pasted document, without the page: recognise its kind (a signed
// receipt, a signed pulse or two of them, a TIMESTAMP_PROOF or MACHINE_EVENT_LOG result, a DSSE
// attestation — as the CLI's --json and the HTTP API return them) and run the embedding kit's own
// verifier on it with the trusted keys. Browser-safe: src/discovery/verify-browser.ts bundles it.
import type { Kernels } from '../kernels/kernels.ts';
import { isObject } from '../kit/bytes.ts';
import {
  verifyAttestation, verifyMachineEventLog, verifyPulse, verifyReceipt, verifyTimestampProof, type NodeKeys,
  type Verdict,
} from '../kit/verify.ts';

export type DocumentKind = 'receipt' | 'pulse' | 'pulse-pair' | 'timestamp' | 'log-entry' | 'attestation';

export const KIND_LABELS: Readonly<Record<DocumentKind, string>> = {
  receipt: 'signed receipt',
  pulse: 'signed pulse',
  'pulse-pair': 'two consecutive pulses (chain link and seed reveal)',
  timestamp: 'timestamp proof',
  'log-entry': 'machine event log proof',
  attestation: 'attestation (DSSE envelope)',
};

/** What the page shows: the kind it recognised (null: none) and the verdict, or why nothing was checked. */
export interface Outcome { kind: DocumentKind | null; verdict: Verdict | null; message: string }

export const NOT_RECOGNISED = 'This is not a receipt, pulse or proof svc signs: nothing was checked.';
const BARE_PROOF = 'This is a bare transparency-log proof: paste the whole timestamp-proof or machine-event-log'
  + ' result, which carries the logged entry the proof is about.';

const isPulse = (v: unknown) => isObject(v) && isObject(v.pulse) && typeof v.signature === 'string'
  && typeof v.output_hash === 'string';
const indexOf = (v: unknown) => Number((v as { pulse: { index: unknown } }).pulse.index);

/** The kind of a parsed document, or null. */
export function kindOf(doc: unknown): DocumentKind | null {
  if (Array.isArray(doc)) return doc.length === 2 && doc.every(isPulse) ? 'pulse-pair' : null;
  if (!isObject(doc)) return null;
  if (isObject(doc.receipt) && typeof doc.signature === 'string') return 'receipt';
  if (isPulse(doc)) return 'pulse';
  if (isObject(doc.token) && typeof doc.tlog_proof === 'string') return 'timestamp';
  if (typeof doc.tlog_proof === 'string' && isObject(doc.log)) return 'log-entry';
  const env = isObject(doc.envelope) ? doc.envelope : doc;
  if (typeof env.payloadType === 'string' && Array.isArray(env.signatures)) return 'attestation';
  return null;
}

/**
 * The trusted keys from the page's key box: JSON (the manifest, its `node`, nodes.json, a key or a
 * list of keys) or one base64url raw public key. Null when the box holds neither.
 */
export function parseKeys(text: string): NodeKeys | null {
  const t = text.trim();
  if (/^[A-Za-z0-9_-]{43}$/.test(t)) return t;
  try {
    const v: unknown = JSON.parse(t);
    return isObject(v) || Array.isArray(v) ? v as NodeKeys : null;
  } catch {
    return null;
  }
}

/** Recognises `text` and verifies it with `keys` on `kernels`. Never throws on bad material. */
export async function checkDocument(text: string, keys: NodeKeys, kernels: Kernels): Promise<Outcome> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    const bare = text.trimStart().startsWith('c2sp.org/tlog-proof@v1');
    return { kind: null, verdict: null, message: bare ? BARE_PROOF : NOT_RECOGNISED };
  }
  const kind = kindOf(doc);
  if (!kind) return { kind: null, verdict: null, message: NOT_RECOGNISED };
  const o = { kernels };
  const d = doc as Record<string, unknown>;
  let verdict: Verdict;
  switch (kind) {
    case 'receipt': verdict = await verifyReceipt(d, keys, o); break;
    case 'pulse': verdict = await verifyPulse(d, undefined, { ...o, nodeKeys: keys }); break;
    case 'pulse-pair': {
      const [a, b] = [...(doc as unknown[])].sort((x, y) => indexOf(x) - indexOf(y));
      verdict = await verifyPulse(b, a, { ...o, nodeKeys: keys });
      break;
    }
    case 'timestamp': verdict = await verifyTimestampProof(d, keys, o); break;
    case 'log-entry': verdict = await verifyMachineEventLog(d, keys, o); break;
    case 'attestation': verdict = await verifyAttestation(d, keys, o); break;
  }
  // why, in words: the first failed check (its code is the verdict's reason, shown apart)
  const failed = verdict.checks.find((c) => !c.ok);
  const message = verdict.valid ? `Valid ${KIND_LABELS[kind]}.`
    : `Invalid ${KIND_LABELS[kind]}. ${failed ? `Failed check: ${failed.name}` : 'Nothing could be checked'}.`;
  return { kind, verdict, message };
}
