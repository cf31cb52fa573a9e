// Which invoice a chain transfer pays, decided from the transfer's block time and the rail's amount
// index: the invoice that held the transfer's exact amount when the transfer was made, if any, and
// whether it could still take it. A transfer never pays an invoice opened after it was made, and an
// amount is not handed to a new invoice until its old one's expiry plus the hold (invoices.ts), so a
// payment that became final late is matched to the invoice it was for or queued, never to a stranger's.
// Reads only; deposits.ts writes what this decides. Policy: docs/settlement.md "Matching and crediting".
import type { UNMATCHED_REASONS } from '../protocol/schemas.ts';
import { key } from '../store/key-codec.ts';
import type { Json } from '../store/store.ts';
import type { Rail } from './rails.ts';
import type { CoreContext } from './context.ts';
import { referenceIndexKey } from './solana-pay.ts';
import { amountHolders, type InvoiceRecord, type SettleMode } from './invoices.ts';

/**
 * How far a block's time may run behind the node's clock and still count as after an invoice's creation
 * (chain timestamps and the node's clock differ by seconds; Solana's block times are estimates).
 */
export const CLOCK_SKEW_MS = 120_000;
/**
 * An over- or underpayment names an invoice only when within this part of its amount due (1 in 20: 5%,
 * which covers a rounded amount and an exchange's withdrawal fee on all but the smallest invoices).
 */
export const AMOUNT_TOLERANCE_DIVISOR = 20n;

/**
 * Why a deposit is in the queue (docs/settlement.md "Matching and crediting"). Of the invoice holding its
 * exact amount at the transfer's time: `invoice_expired` (paid after it expired), `invoice_already_settled`
 * (settled by hand meanwhile), `duplicate_payment` (already paid by another transfer),
 * `reference_already_credited` (settled by hand with this very transfer, for another invoice). No invoice
 * held it then: `before_invoice` (the amount's invoice was opened after the transfer), `amount_mismatch`
 * (an invoice open then asked for an amount within AMOUNT_TOLERANCE_DIVISOR of it: named), `unknown_amount`
 * (invoices were open, none near), `no_open_invoice` (none was open on the rail).
 */
export type UnmatchedReason = (typeof UNMATCHED_REASONS)[number];

/**
 * What to do with a transfer: credit an invoice (in a mode settle() takes), or queue it, naming why; `reference`:
 * the Solana Pay reference the transfer named its invoice by.
 */
export type QueueMatch = { queue: UnmatchedReason; invoice?: InvoiceRecord; candidates?: number; reference?: string };
export type Match =
  | { credit: InvoiceRecord; mode: Extract<SettleMode, 'open' | 'paid_in_time'>; reference?: string }
  | QueueMatch;

const createdMs = (inv: InvoiceRecord): number => Date.parse(inv.created_at);

/** The transfer's time, when its chain gave one (a block time it could not have had is no time). */
export function paidAtMs(blockTime: string | undefined): number | null {
  const ms = Date.parse(blockTime ?? '');
  return Number.isFinite(ms) ? ms : null;
}

/**
 * The invoice a transfer made at `paidMs` pays, of the amount's holder and the invoice before it: the
 * newest one opened before the transfer. A transfer without a time can only be the holder's.
 */
export function invoiceAt(
  holders: { holder?: InvoiceRecord; previous?: InvoiceRecord }, paidMs: number | null,
): InvoiceRecord | undefined {
  if (paidMs === null) return holders.holder;
  return [holders.holder, holders.previous].find((inv) => inv && paidMs >= createdMs(inv) - CLOCK_SKEW_MS);
}

/** What a transfer of `inv`'s exact amount does to it, made at `paidMs` and recorded at `nowMs`. */
export function decide(inv: InvoiceRecord, paidMs: number | null, nowMs: number): Match {
  if (inv.state === 'settled') {
    return { queue: inv.deposit_id !== undefined ? 'duplicate_payment' : 'invoice_already_settled', invoice: inv };
  }
  // made before the expiry: the invoice's, however long it took to become final (its amount is still held)
  if (paidMs !== null) {
    return paidMs < inv.expires_ms ? { credit: inv, mode: 'paid_in_time' } : { queue: 'invoice_expired', invoice: inv };
  }
  return nowMs < inv.expires_ms ? { credit: inv, mode: 'open' } : { queue: 'invoice_expired', invoice: inv };
}

/**
 * The match for a transfer of `amount` on `rail`, made at `paidMs` and recorded at `nowMs`. A transfer naming an
 * invoice's Solana Pay reference among `accounts` is that invoice's, whatever amount holds what; else its amount
 * decides.
 */
export async function matchTransfer(
  ctx: CoreContext, rail: Rail['rail'], amount: string, paidMs: number | null, nowMs: number,
  accounts: readonly string[] = [],
): Promise<Match> {
  const named = await referencedInvoice(ctx, rail, accounts);
  if (named) return { ...byReference(named.inv, amount, paidMs, nowMs), reference: named.reference };
  const holders = await amountHolders(ctx, rail, amount);
  const inv = invoiceAt(holders, paidMs);
  if (inv) return decide(inv, paidMs, nowMs);
  if (holders.holder) return { queue: 'before_invoice' };
  return nearby(ctx, rail, BigInt(amount), paidMs ?? nowMs);
}

/** The invoice whose reference is among a transaction's `accounts`, if any (the first such account). */
export async function referencedInvoice(
  ctx: CoreContext, rail: Rail['rail'], accounts: readonly string[],
): Promise<{ inv: InvoiceRecord; reference: string } | null> {
  for (const a of accounts) {
    const entry = await ctx.store.get('invoice_refs', referenceIndexKey(rail, a));
    if (!entry) continue;
    const inv = await ctx.store.get<InvoiceRecord>('invoices', entry.invoice_id as string);
    if (inv) return { inv, reference: a };
  }
  return null;
}

/** What a transfer naming `inv` by its reference does to it: its exact amount, made while it was open, pays it. */
function byReference(inv: InvoiceRecord, amount: string, paidMs: number | null, nowMs: number): Match {
  if (paidMs !== null && paidMs < createdMs(inv) - CLOCK_SKEW_MS) return { queue: 'before_invoice', invoice: inv };
  if (BigInt(amount) !== BigInt(inv.amount_due) && inv.state !== 'settled') {
    return { queue: 'amount_mismatch', invoice: inv, candidates: 1 };
  }
  return decide(inv, paidMs, nowMs);
}

/**
 * A transfer whose amount no invoice held: the unsettled invoices open at its time `atMs` whose amount due
 * is within the tolerance, the nearest named (on a tie, the lower amount). Scans the rail's amount index:
 * for unmatched transfers only.
 */
async function nearby(ctx: CoreContext, rail: Rail['rail'], amount: bigint, atMs: number): Promise<Match> {
  let open = 0, candidates = 0;
  let best: { inv: InvoiceRecord; gap: bigint } | null = null;
  for await (const [k, v] of ctx.store.entries('invoice_amounts', { gte: key(rail, ''), lt: key(rail, '\uffff') })) {
    if (!openAt(v, atMs)) continue;
    open++;
    const due = BigInt(k.slice(rail.length + 1));
    const gap = due > amount ? due - amount : amount - due;
    if (gap * AMOUNT_TOLERANCE_DIVISOR > due) continue;
    const inv = await ctx.store.get<InvoiceRecord>('invoices', v.invoice_id as string);
    if (!inv || inv.state === 'settled') continue;
    candidates++;
    if (!best || gap < best.gap) best = { inv, gap };
  }
  if (!best) return { queue: open > 0 ? 'unknown_amount' : 'no_open_invoice' };
  return { queue: 'amount_mismatch', invoice: best.inv, candidates };
}

/** An amount entry's invoice was open at `atMs` (entries from before created_ms count from any time). */
function openAt(entry: Json, atMs: number): boolean {
  const created = typeof entry.created_ms === 'number' ? entry.created_ms : -Infinity;
  return atMs >= created - CLOCK_SKEW_MS && atMs < (entry.expires_ms as number);
}
