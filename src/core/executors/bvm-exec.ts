// BVM_EXEC (DESIGN.md §8, docs/bvm.md): runs the program image in plain_hex with packet_hex as its
// input; fuel is the request's (at most the quoted) `bits`, output is capped by the quote's
// max_output. A trap is a result: charged like a halt, and the receipt's status names it.
import { canonicalDigest, sha256Hex } from '../../protocol/canonical.ts';
import { bytesOf, laneOf, type Executor } from './types.ts';

export const bvmExec: Executor = async (ctx, q, a) => {
  const image = bytesOf(a.plain_hex), input = bytesOf(a.packet_hex);
  const fuel = a.bits ?? q.bits;
  const r = await ctx.pool.run('bvmRun', [image, input, { fuel, maxOutput: q.max_output }], { priority: laneOf(q) });
  const outputSha = sha256Hex(r.output);
  return {
    fields: {
      bvm: { status: r.status, halted: r.halted, steps: r.steps, pc: r.pc, fuel, max_output: q.max_output },
      output_hex: Buffer.from(r.output).toString('hex'),
    },
    input_digest: canonicalDigest({
      image_sha256: sha256Hex(image),
      input_sha256: sha256Hex(input),
      fuel,
      max_output: q.max_output,
    }),
    output_digest: canonicalDigest({ status: r.status, steps: r.steps, pc: r.pc, output_sha256: outputSha }),
    status: r.status,
  };
};
