// The reply fields every log-backed execution shares: where the entry sits, its inclusion proof
// under a freshly signed checkpoint, and the same as one c2sp.org/tlog-proof@v1 text.
import type { Appended, TransparencyLog } from '../tlog.ts';

/** `public_key`: the key that signed this checkpoint (after a rotation, not necessarily the entry's). */
export function logFields(log: TransparencyLog, a: Appended & { entry: Uint8Array }): Record<string, unknown> {
  return {
    log: {
      origin: log.origin, leaf_index: a.index, tree_size: a.size,
      // the exact leaf bytes (RFC 8785 JSON of the token/entry): what the leaf hash covers
      entry_base64: Buffer.from(a.entry).toString('base64'),
      leaf_hash: Buffer.from(a.leafHash).toString('base64'), root: Buffer.from(a.root).toString('base64'),
      inclusion_proof: a.proof.map((h) => Buffer.from(h).toString('base64')),
      checkpoint: a.checkpoint, public_key: a.publicKey, key_id: a.keyId,
    },
    tlog_proof: a.tlogProof,
  };
}
