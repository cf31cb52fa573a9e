// VERIFY_RESULT (DESIGN.md §8): is a result_tag genuine? The material (packet_hex) is the UTF-8
// JSON {service, quote_id, input_digest, output_digest, result_tag} of a receipt or execution
// result; the node recomputes the HMAC under each key of its result key set (a tag from before a
// rotation still checks) and compares each in constant time.
import { timingSafeEqual } from 'node:crypto';
import { canonicalDigest, sha256Hex } from '../../protocol/canonical.ts';
import { resultTags } from '../receipts.ts';
import { bytesOf, type Executor } from './types.ts';

const FIELDS = ['service', 'quote_id', 'input_digest', 'output_digest', 'result_tag'] as const;

export const verifyResult: Executor = async (ctx, _q, a) => {
  const material = bytesOf(a.packet_hex);
  let verdict: { valid: boolean; reason?: string };
  let m: Record<string, unknown> | null = null;
  try { m = JSON.parse(material.toString('utf8')) as Record<string, unknown>; } catch { /* reported below */ }
  if (!m || typeof m !== 'object' || FIELDS.some((f) => typeof m![f] !== 'string')) {
    const reason = `malformed: packet_hex must be UTF-8 JSON with string fields ${FIELDS.join(', ')}`;
    verdict = { valid: false, reason };
  } else {
    const wants = resultTags(ctx.kernels, ctx.identity, m as Record<(typeof FIELDS)[number], string>);
    const got = Buffer.from(m.result_tag as string, 'hex');
    const ok = wants.some((want) => got.length === want.length && timingSafeEqual(got, want));
    verdict = ok ? { valid: true } : { valid: false, reason: 'tag_mismatch' };
  }
  return {
    fields: verdict,
    input_digest: sha256Hex(material),
    output_digest: canonicalDigest(verdict),
    status: verdict.valid ? 'valid' : 'invalid',
  };
};
