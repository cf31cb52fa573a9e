// Transparency-log text formats, byte for byte as C2SP defines them, shared by the core (which
// signs) and the client kit (which verifies):
// - signed note (c2sp.org/signed-note): text lines, a blank line, then "— <name> <base64(key hash
//   ‖ signature)>" lines; Ed25519 key hash = SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)[:4];
// - checkpoint (c2sp.org/tlog-checkpoint): origin, tree size, base64 root hash;
// - proof (c2sp.org/tlog-proof@v1): header, optional extra, index, base64 hashes, blank line, the
//   signed checkpoint.
import { createHash } from 'node:crypto';

export const EM_DASH = '\u2014';
export const ED25519_NOTE_TYPE = 0x01;
export const TLOG_PROOF_HEADER = 'c2sp.org/tlog-proof@v1';

export function noteKeyHash(name: string, publicKeyRaw: Uint8Array): Buffer {
  return createHash('sha256')
    .update(name, 'utf8')
    .update(Buffer.from([0x0a, ED25519_NOTE_TYPE]))
    .update(publicKeyRaw)
    .digest()
    .subarray(0, 4);
}

export function checkpointBody(origin: string, size: number | bigint, root: Uint8Array): string {
  return `${origin}\n${size}\n${Buffer.from(root).toString('base64')}\n`;
}

export function signatureLine(name: string, keyHash: Uint8Array, signature: Uint8Array): string {
  return `${EM_DASH} ${name} ${Buffer.concat([keyHash, signature]).toString('base64')}\n`;
}

export function formatTlogProof(
  index: number | bigint,
  proof: readonly Uint8Array[],
  signedCheckpoint: string,
  extra?: Uint8Array,
): string {
  const extraLine = extra ? `extra ${Buffer.from(extra).toString('base64')}\n` : '';
  const hashLines = proof.map((h) => `${Buffer.from(h).toString('base64')}\n`).join('');
  return `${TLOG_PROOF_HEADER}\n${extraLine}index ${index}\n${hashLines}\n${signedCheckpoint}`;
}

export interface ParsedNote { text: string; signatures: { name: string; keyHash: Buffer; signature: Buffer }[] }
export interface ParsedCheckpoint { origin: string; size: bigint; root: Buffer; extensions: string[] }
export interface ParsedTlogProof { extra: Buffer | null; index: bigint; proof: Buffer[]; checkpoint: string }

const B64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Splits a signed note; throws with a reason when it is malformed. */
export function parseNote(note: string): ParsedNote {
  const split = note.indexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new Error('note: no blank line before signatures, or no final newline');
  const text = note.slice(0, split + 1);
  const signatures = note.slice(split + 2, -1).split('\n').map((line) => {
    const m = new RegExp(`^${EM_DASH} (\\S+) (\\S+)$`).exec(line);
    if (!m || !B64.test(m[2]!)) throw new Error(`note: bad signature line ${JSON.stringify(line.slice(0, 80))}`);
    const raw = Buffer.from(m[2]!, 'base64');
    if (raw.length < 5) throw new Error('note: signature too short');
    return { name: m[1]!, keyHash: raw.subarray(0, 4), signature: raw.subarray(4) };
  });
  return { text, signatures };
}

export function parseCheckpoint(text: string): ParsedCheckpoint {
  const lines = text.split('\n');
  if (lines.length < 4 || lines[lines.length - 1] !== '') {
    throw new Error('checkpoint: needs origin, size and root lines');
  }
  const [origin, size, root, ...rest] = lines.slice(0, -1) as [string, string, string, ...string[]];
  if (!origin || !/^(0|[1-9]\d*)$/.test(size) || !B64.test(root)) {
    throw new Error('checkpoint: malformed origin, size or root');
  }
  const rootBytes = Buffer.from(root, 'base64');
  if (rootBytes.length !== 32) throw new Error('checkpoint: root is not 32 bytes');
  return { origin, size: BigInt(size), root: rootBytes, extensions: rest };
}

export function parseTlogProof(text: string): ParsedTlogProof {
  const lines = text.split('\n');
  let i = 0;
  if (lines[i++] !== TLOG_PROOF_HEADER) throw new Error(`tlog-proof: first line must be ${TLOG_PROOF_HEADER}`);
  let extra: Buffer | null = null;
  if (lines[i]?.startsWith('extra ')) { extra = Buffer.from(lines[i]!.slice(6), 'base64'); i++; }
  const im = /^index (0|[1-9]\d*)$/.exec(lines[i++] ?? '');
  if (!im) throw new Error('tlog-proof: missing index line');
  const proof: Buffer[] = [];
  while (i < lines.length && lines[i] !== '') {
    const l = lines[i++]!;
    if (!B64.test(l)) throw new Error('tlog-proof: proof line is not base64');
    proof.push(Buffer.from(l, 'base64'));
  }
  if (lines[i++] !== '') throw new Error('tlog-proof: no blank line before the checkpoint');
  return { extra, index: BigInt(im[1]!), proof, checkpoint: lines.slice(i).join('\n') };
}
