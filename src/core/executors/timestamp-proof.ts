// TIMESTAMP_PROOF (DESIGN.md §8): a signed timestamp token for a SHA-256 digest (plain_hex, 32
// bytes) — time, accuracy, serial — appended to the node's timestamp log, with an RFC 6962
// inclusion proof into a C2SP signed checkpoint (docs/verify.md §Timestamps). The serial is the
// token's index in the log. Accuracy is the node's clock claim (system time, ±1 s).
import { ServiceError } from '../../errors.ts';
import { canonicalJson, sha256Hex } from '../../protocol/canonical.ts';
import { logFields } from './log-result.ts';
import { bytesOf, type Executor } from './types.ts';

export const TIMESTAMP_ACCURACY_MS = 1000;

export const timestampProof: Executor = async (ctx, _q, a) => {
  const digest = bytesOf(a.plain_hex);
  if (digest.length !== 32) {
    throw new ServiceError('invalid_request', 'plain_hex must be a 32-byte SHA-256 digest', { field: 'plain_hex' });
  }
  const log = ctx.logs.timestamps;
  let token: Record<string, unknown> = {};
  // the token names its key before the append awaits: it is signed with that key, rotation or not
  let signer = ctx.identity.signer();
  const appended = await log.append((index) => {
    const now = ctx.now();
    signer = ctx.identity.signerAt(now);
    token = {
      format: 'svc_timestamp_v1', log_origin: log.origin, serial: index, digest_sha256: digest.toString('hex'),
      time: now.toISOString(), accuracy_ms: TIMESTAMP_ACCURACY_MS,
      node_id: ctx.identity.nodeId, key_id: signer.keyId,
    };
    return Buffer.from(canonicalJson(token), 'utf8');
  });
  const tokenSignature = signer.sign(appended.entry).toString('base64url');
  return {
    fields: { token, token_signature: tokenSignature, ...logFields(log, appended) },
    input_digest: sha256Hex(digest),
    output_digest: sha256Hex(canonicalJson({
      token,
      token_signature: tokenSignature,
      checkpoint: appended.checkpoint,
    })),
    status: 'ok',
  };
};
