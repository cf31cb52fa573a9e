// GET_PULSE (DESIGN.md §8): bits of verifiable randomness from the current pulse period's seed;
// checkable offline once the next pulse reveals the seed (docs/verify.md).
import { canonicalDigest, sha256Hex } from '../../protocol/canonical.ts';
import { pulseKey } from '../pulse-chain.ts';
import { laneOf, type Executor } from './types.ts';

export const getPulse: Executor = async (ctx, q, a) => {
  const bits = a.bits ?? q.bits;
  const period = ctx.chain.current();
  // expand(HMAC(seed_k, lp(quote_id) ‖ lp(machine_id)), bits) — docs/verify.md; in the pool (inline when tiny)
  const out = await ctx.pool.run(
    'pulseExpand',
    [pulseKey(ctx.kernels, period.seed, q.quote_id, q.machine_id), new Uint8Array(0), bits],
    { priority: laneOf(q) },
  );
  return {
    fields: {
      bits, output_hex: Buffer.from(out).toString('hex'),
      pulse: {
        chain_id: ctx.chain.chainId,
        index: period.index,
        commit: period.commit,
        period_ms: ctx.chain.periodMs,
        revealed_by_index: period.index + 1,
      },
      verify: 'svc verify-pulse: once pulse index+1 is published, SHA-256(its revealed_seed) = commit ' +
        'and the output recomputes (docs/verify.md)',
    },
    input_digest: canonicalDigest({ service: 'get-pulse', bits, quote_id: q.quote_id, machine_id: q.machine_id }),
    output_digest: sha256Hex(out),
    status: 'ok',
  };
};
