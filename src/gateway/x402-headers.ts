// x402's HTTP headers at the paid execution routes (docs/x402.md): the payment a request carries
// (PAYMENT-SIGNATURE) passed to the core as it came; a 402's PaymentRequired in
// the PAYMENT-REQUIRED header, its resource made this request's absolute URL; and the settlement in
// PAYMENT-RESPONSE beside the paid result.
import type Koa from 'koa';
import { ServiceError } from '../errors.ts';
import {
  MAX_PAYMENT_CHARS, PAYMENT_REQUIRED_HEADER, PAYMENT_RESPONSE_HEADER, PAYMENT_SIGNATURE_HEADER, encodeHeader,
  settleResponseOf, type PaymentRequired,
} from '../protocol/x402.ts';
import { CoreError } from './http-errors.ts';

/** The request's payment header, or undefined; one longer than any payment is refused before the core. */
export function paymentHeader(ctx: Koa.Context): string | undefined {
  const v = ctx.get(PAYMENT_SIGNATURE_HEADER);
  if (!v) return undefined;
  if (v.length > MAX_PAYMENT_CHARS) {
    throw new ServiceError('invalid_request', `${PAYMENT_SIGNATURE_HEADER} exceeds ${MAX_PAYMENT_CHARS} characters`);
  }
  return v;
}

/** A 402 from the core: its PaymentRequired, for this request's URL under `base`, in the header x402 clients read. */
export function setPaymentRequired(ctx: Koa.Context, e: unknown, base: string): void {
  const pr = e instanceof CoreError ? (e.inner.details?.payment_required as PaymentRequired | undefined) : undefined;
  if (!pr) return;
  pr.resource = { ...pr.resource, url: `${base.replace(/\/+$/, '')}${ctx.path}` };
  ctx.set(PAYMENT_REQUIRED_HEADER, encodeHeader(pr));
  ctx.set('Cache-Control', 'no-store');
}

/** A result an x402 payment paid: its settlement, in the header x402 clients read. */
export function setPaymentResponse(ctx: Koa.Context, result: Record<string, unknown>): void {
  const settled = settleResponseOf(result);
  if (settled) ctx.set(PAYMENT_RESPONSE_HEADER, encodeHeader(settled));
}
