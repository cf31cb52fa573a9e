// Reading the transparency-log texts the service signs, byte for byte as C2SP defines them
// (docs/verify.md §Timestamps): signed notes (c2sp.org/signed-note), checkpoints
// (c2sp.org/tlog-checkpoint) and proofs (c2sp.org/tlog-proof@v1). Each parser throws with a
// reason when its text is malformed; the verifiers turn that into { valid: false, reason }. Base64 is
// taken only as the node writes it (padded, no stray bits): one text per signed note, never two.
import { concat, fromCanonicalBase64, utf8 } from './bytes.ts';
import type { Kernels } from '../kernels/kernels.ts';

export const EM_DASH = '\u2014';
export const ED25519_NOTE_TYPE = 0x01;
export const TLOG_PROOF_HEADER = 'c2sp.org/tlog-proof@v1';

export interface NoteSignature { name: string; keyHash: Uint8Array; signature: Uint8Array }
export interface ParsedNote { text: string; signatures: NoteSignature[] }
export interface ParsedCheckpoint { origin: string; size: bigint; root: Uint8Array; extensions: string[] }
export interface ParsedTlogProof { extra: Uint8Array | null; index: bigint; proof: Uint8Array[]; checkpoint: string }

const SIGNATURE_LINE = new RegExp(`^${EM_DASH} (\\S+) (\\S+)$`);
/** A uint64 in decimal without leading zeros: sizes and indexes of a log (C2SP) */
const UINT64 = /^(0|[1-9]\d{0,19})$/;
const MAX_UINT64 = (1n << 64n) - 1n;

/** Canonical standard base64, or an error saying what `what` is not. */
function base64(s: string, what: string): Uint8Array {
  const b = fromCanonicalBase64(s);
  if (!b) throw new Error(what);
  return b;
}

/** A uint64 decimal, or an error saying what `what` is not. */
function uint64(s: string | undefined, what: string): bigint {
  const n = s !== undefined && UINT64.test(s) ? BigInt(s) : -1n;
  if (n < 0n || n > MAX_UINT64) throw new Error(what);
  return n;
}

/** Ed25519 key hash of a signed note: SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)[:4]. */
export function noteKeyHash(k: Kernels, name: string, publicKey: Uint8Array): Uint8Array {
  return k.sha256(concat(utf8(name), Uint8Array.of(0x0a, ED25519_NOTE_TYPE), publicKey)).slice(0, 4);
}

export function parseNote(note: string): ParsedNote {
  if (typeof note !== 'string') throw new Error('note: not text');
  const split = note.indexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new Error('note: no blank line before signatures, or no final newline');
  const text = note.slice(0, split + 1);
  const signatures = note.slice(split + 2, -1).split('\n').map((line) => {
    const m = SIGNATURE_LINE.exec(line);
    const raw = m && fromCanonicalBase64(m[2]!);
    if (!m || !raw) throw new Error(`note: bad signature line ${JSON.stringify(line.slice(0, 80))}`);
    if (raw.length < 5) throw new Error('note: signature too short');
    return { name: m[1]!, keyHash: raw.slice(0, 4), signature: raw.slice(4) };
  });
  return { text, signatures };
}

export function parseCheckpoint(text: string): ParsedCheckpoint {
  if (typeof text !== 'string') throw new Error('checkpoint: not text');
  const lines = text.split('\n');
  if (lines.length < 4 || lines[lines.length - 1] !== '') {
    throw new Error('checkpoint: needs origin, size and root lines');
  }
  const [origin, size, root, ...rest] = lines.slice(0, -1) as [string, string, string, ...string[]];
  const malformed = 'checkpoint: malformed origin, size or root';
  if (!origin) throw new Error(malformed);
  const n = uint64(size, malformed);
  const rootBytes = base64(root, malformed);
  if (rootBytes.length !== 32) throw new Error('checkpoint: root is not 32 bytes');
  return { origin, size: n, root: rootBytes, extensions: rest };
}

export function parseTlogProof(text: string): ParsedTlogProof {
  if (typeof text !== 'string') throw new Error('tlog-proof: not text');
  const lines = text.split('\n');
  let i = 0;
  if (lines[i++] !== TLOG_PROOF_HEADER) throw new Error(`tlog-proof: first line must be ${TLOG_PROOF_HEADER}`);
  let extra: Uint8Array | null = null;
  if (lines[i]?.startsWith('extra ')) { extra = base64(lines[i]!.slice(6), 'tlog-proof: extra is not base64'); i++; }
  const im = /^index (\S+)$/.exec(lines[i++] ?? '');
  if (!im) throw new Error('tlog-proof: missing index line');
  const index = uint64(im[1], 'tlog-proof: index is not a uint64');
  const proof: Uint8Array[] = [];
  while (i < lines.length && lines[i] !== '') {
    proof.push(base64(lines[i++]!, 'tlog-proof: proof line is not base64'));
  }
  if (lines[i++] !== '') throw new Error('tlog-proof: no blank line before the checkpoint');
  return { extra, index, proof, checkpoint: lines.slice(i).join('\n') };
}
