// SUBMIT_ID (DESIGN.md §8): a stable identifier derived from a public key or identity document
// (plain_hex) and a node-signed identity record. The id depends on the document alone:
//   id = "svcid_" ‖ hex(SHA-256("svc/id/v1" ‖ 0x00 ‖ document))[:32]
// The record (RFC 8785 JSON, Ed25519-signed like receipts) says who registered it and when.
import { createHash } from 'node:crypto';
import { canonicalJson, sha256Hex } from '../../protocol/canonical.ts';
import { bytesOf, type Executor } from './types.ts';

export function deriveId(document: Uint8Array): string {
  return `svcid_${createHash('sha256').update('svc/id/v1\0').update(document).digest('hex').slice(0, 32)}`;
}

export const submitId: Executor = async (ctx, q, a) => {
  const doc = bytesOf(a.plain_hex);
  const record = {
    format: 'svc_identity_v1', id: deriveId(doc), document_sha256: sha256Hex(doc), document_bytes: doc.length,
    machine_id: q.machine_id, quote_id: q.quote_id, registered_at: ctx.now().toISOString(),
    node_id: ctx.identity.nodeId, key_id: ctx.identity.keyId,
  };
  const signature = ctx.identity.sign(Buffer.from(canonicalJson(record), 'utf8')).toString('base64url');
  return {
    fields: { id: record.id, record, signature, public_key: ctx.identity.public.public_key },
    input_digest: sha256Hex(doc),
    output_digest: sha256Hex(canonicalJson({ record, signature })),
    status: 'ok',
  };
};
