// Transparency-log text formats, byte for byte as C2SP defines them, written by the core (which
// signs them):
// - signed note (c2sp.org/signed-note): text lines, a blank line, then "— <name> <base64(key hash
//   ‖ signature)>" lines; Ed25519 key hash = SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)[:4];
// - checkpoint (c2sp.org/tlog-checkpoint): origin, tree size, base64 root hash;
// - proof (c2sp.org/tlog-proof@v1): header, optional extra, index, base64 hashes, blank line, the
//   signed checkpoint.
// Reading them back (for offline verification) is the embedding kit's: src/kit/tlog.ts.
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
