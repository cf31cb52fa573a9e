// Paid executions (DESIGN.md §5): the quote must be accepted, unexpired, this machine's, for this
// service, and the request's input must be the quoted one. The kernel runs first; then capture +
// receipt + quote state + stored result are one synced batch. A failure before that batch charges
// nothing and leaves the quote accepted for a retry; repeating a finished execution with the same
// request returns the stored result, with a different request it is 409.
import { ServiceError } from '../errors.ts';
import { executionInputs, serviceByName, type ExecutionCommand } from '../protocol/services.ts';
import { del, put, type Op } from '../store/store.ts';
import type { CoreContext } from './context.ts';
import { canonicalDigest, sha256Hex } from '../protocol/canonical.ts';
import { QUOTES_ENTERING, expiredQuote, expiryKey, findQuote, isExpired, type QuoteRecord } from './quotes.ts';
import { issueReceipt } from './receipts.ts';
import { EXECUTORS, type ExecutionArgs } from './executors/index.ts';

export type { ExecutionArgs };

/** Whether this node runs a command's executions (CAPS reports it; others answer service_unavailable). */
export function isOffered(command: string): boolean {
  return Object.hasOwn(EXECUTORS, command);
}

/**
 * The request's input against what the quote bound (the schema already refused fields this
 * command does not take): the quoted digest (MAKE_BCT/VERIFY_BCT quoted with their input), the
 * exact size (the same two quoted by `bytes`), or at most the quoted size (every other service).
 */
function checkInput(q: QuoteRecord, a: ExecutionArgs): void {
  if (a.bits !== undefined && a.bits > q.bits) {
    throw new ServiceError('input_mismatch', `bits ${a.bits} exceeds the quoted ${q.bits}`, { field: 'bits' });
  }
  const svc = serviceByName(q.service)!;
  const fields = executionInputs(svc).map((i) => i.field);
  const size = fields.reduce((n, f) => n + ((a[f] ?? '').length >> 1), 0);
  if (q.input_field) {
    if (sha256Hex(Buffer.from(a[q.input_field]!, 'hex')) !== q.input_digest) {
      throw new ServiceError('input_mismatch', `${q.input_field} is not the quoted input`, { field: q.input_field });
    }
  } else if (svc.quoteInput) {
    if (size !== q.bytes) {
      const msg = `${svc.quoteInput} is ${size} bytes, the quote is for exactly ${q.bytes}`;
      throw new ServiceError('input_mismatch', msg, { field: svc.quoteInput });
    }
  } else if (size > q.bytes) {
    const msg = `input is ${size} bytes, the quote covers ${q.bytes} (quote with bytes >= ${size})`;
    throw new ServiceError('input_mismatch', msg, { field: 'bytes' });
  }
}

/**
 * Runs an accepted quote's execution once: the capture, the executed quote, the receipt and the
 * execution record go in one synced batch, with `seal`'s ops when the request carries an idempotency
 * key (its reply record: one synced write for a keyed execution). An executed quote replays the same
 * request's result and refuses another.
 */
export async function execute(
  ctx: CoreContext, command: ExecutionCommand, a: ExecutionArgs, seal?: (result: Record<string, unknown>) => Op[],
): Promise<Record<string, unknown>> {
  // the account as the lock read it: nothing before the capture's batch writes it (an executor appends
  // to its log, never to the ledger; an expired quote's release throws)
  return ctx.ledger.withMachine(a.machine_id, async (_held, acct, reads) => {
    const { q, stored } = await findQuote(ctx, a.quote_id, a.machine_id, reads);
    if (q.command !== command) {
      throw new ServiceError('quote_wrong_service', `the quote is for ${q.service}, not ${command}`);
    }
    const inputs = { bits: a.bits ?? null, plain_hex: a.plain_hex ?? null, packet_hex: a.packet_hex ?? null };
    const requestDigest = canonicalDigest({ command, ...inputs });
    if (q.state === 'executed') {
      const done = await ctx.store.get('executions', q.quote_id);
      if (done && done.request_digest === requestDigest) {
        return { ...(done.result as Record<string, unknown>), replayed: true };
      }
      throw new ServiceError('execution_mismatch', 'this quote was already executed with a different request');
    }
    if (isExpired(ctx, q)) throw await expiredQuote(ctx, q, stored);
    if (q.state !== 'accepted') throw new ServiceError('quote_not_accepted', `quote is ${q.state}: accept it first`);
    checkInput(q, a);
    const executor = EXECUTORS[command];
    if (!executor) {
      const msg = `${command} executions are not offered by this node yet; ` +
        'the reservation stays until the quote expires';
      throw new ServiceError('service_unavailable', msg);
    }
    const outcome = await executor(ctx, q, a);

    const now = ctx.now();
    const units = BigInt(q.quote_units);
    const signed = issueReceipt(ctx.kernels, ctx.identity, {
      service: q.service, command, quote_id: q.quote_id, machine_id: q.machine_id, units_charged: units,
      input_digest: outcome.input_digest, output_digest: outcome.output_digest, status: outcome.status, at: now,
      payment: q.payment,
    });
    const result = {
      service: q.service, command, quote_id: q.quote_id, machine_id: q.machine_id, units_charged: q.quote_units,
      receipt_id: signed.receipt.receipt_id, result_tag: signed.receipt.result_tag, status: outcome.status,
      input_digest: outcome.input_digest, output_digest: outcome.output_digest, ...outcome.fields,
      ...(q.payment ? { payment: q.payment } : {}),
    };
    const receipt_id = signed.receipt.receipt_id;
    const ref = { quote_id: q.quote_id, receipt_id };
    const { ops } = ctx.ledger.change(q.machine_id, acct, 'capture', 0n, -units, ref, now);
    const executed: QuoteRecord = { ...q, state: 'executed', executed_at: now.toISOString(), receipt_id };
    await ctx.store.write([
      put('quotes', q.quote_id, executed),
      del('quote_expiry', expiryKey(q)),
      put('receipts', signed.receipt.receipt_id, signed),
      put('executions', q.quote_id, { request_digest: requestDigest, result }),
      ...ops,
      ...(seal ? seal(result) : []),
    ]);
    QUOTES_ENTERING.executed.v++;
    return result;
  });
}
