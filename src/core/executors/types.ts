// The shape every execution handler has: given the accepted quote and the validated request, do
// the work (kernels, signatures) and describe the result. Handlers never touch the ledger: the
// capture, receipt and state change are written by executions.ts in one batch afterwards.
import type { CoreContext } from '../context.ts';
import type { QuoteRecord } from '../quotes.ts';

export interface ExecutionArgs {
  machine_id: string;
  quote_id: string;
  bits?: number;
  plain_hex?: string;
  packet_hex?: string;
}

export interface Outcome {
  /** service-specific result fields (merged into the reply) */
  fields: Record<string, unknown>;
  input_digest: string;
  output_digest: string;
  /** recorded in the receipt: 'ok', or the service's own verdict ('invalid', a BVM trap, ...) */
  status: string;
}

export type Executor = (ctx: CoreContext, q: QuoteRecord, a: ExecutionArgs) => Promise<Outcome>;

export const bytesOf = (hex: string | undefined): Buffer => Buffer.from(hex ?? '', 'hex');

/** The quote's priority as a kernel pool lane: `low` waits behind the others, `high` goes first. */
export function laneOf(q: QuoteRecord): 'high' | 'normal' | 'low' {
  return q.priority === 'high' ? 'high' : q.priority === 'low' ? 'low' : 'normal';
}
