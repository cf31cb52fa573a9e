// Chain deposits: one record per token transfer a watcher saw final, keyed by (rail, transaction id,
// log index), so one transfer credits at most once, across restarts and watchers. A transfer of an
// open invoice's exact amount settles it through invoices.ts (the deposit record in the credit's
// batch); anything else waits in the unmatched queue for the operator (UNMATCHED, CLAIM). Talks to
// no chain: watchers (watchers/) bring deposits here. Policy: docs/settlement.md.
// Several nodes on one shared store (docs/scale-out.md): the per-deposit lock is per node, so a deposit's
// first record is a create (two nodes that saw one transfer cannot both record it: the loser reads the
// winner's record) and each later change of it compares the record it read (a claim on one node and a
// claim or a reorg mark on another cannot both land).
import { createHash } from 'node:crypto';
import { ServiceError } from '../errors.ts';
import { key, numPart } from '../store/key-codec.ts';
import { create, del, isStoreConflict, put, replace } from '../store/store.ts';
import type { Rail } from './config.ts';
import type { CoreContext } from './context.ts';
import {
  UNITS_PER_BASE_UNIT, decimal, invoiceHoldingAmount, loadInvoice, nearestOpenInvoice, settleInvoice,
  type DepositAttachment, type InvoiceRecord,
} from './invoices.ts';
import { locksPerOwner } from './keyed-mutex.ts';

/** A token transfer to a rail's address, as a watcher saw it at its trusted head. */
export interface Deposit {
  rail: Rail['rail'];
  /** the chain's transaction id (EVM: 0x + 64 hex, lower case; TRON: 64 hex; Solana: the base58 signature) */
  tx_id: string;
  /** the transfer's position (EVM, TRON: the log index in its block; Solana: the token account's index in its
   * transaction's account list) */
  log_index: number;
  /** token base units, a decimal string */
  amount: string;
  from: string;
  to: string;
  block_number: number;
  /** EVM, TRON: the block's hash; Solana: '' (getTransaction names the slot only; finalized slots stay) */
  block_hash: string;
  /** the block's time (ISO 8601), when the chain gives one */
  block_time?: string;
  /** blocks on top of (and including) its block when it was recorded */
  confirmations: number;
}

/**
 * Why a deposit is in the queue: its amount is held by no invoice (`no_open_invoice`; with an open
 * invoice nearby: `amount_mismatch`, an over- or under-payment), or the invoice holding it could no
 * longer take it (`invoice_expired`: a late payment; `invoice_already_settled`: settled by hand).
 */
export type UnmatchedReason =
  | 'no_open_invoice' | 'amount_mismatch' | 'invoice_expired' | 'invoice_already_settled'
  // its reference (tx_id:log_index) already credited another invoice, settled by hand with it
  | 'reference_already_credited';

export interface DepositRecord extends Deposit {
  deposit_id: string;
  /** credited: settled its invoice on sight; unmatched: in the queue; claimed: credited by the operator */
  state: 'credited' | 'unmatched' | 'claimed';
  amount_decimal: string;
  seen_at: string;
  invoice_id?: string;
  machine_id?: string;
  credited_at?: string;
  reason?: UnmatchedReason;
  nearest_invoice_id?: string;
  nearest_amount_due?: string;
  /** the unmatched queue's key while it waits there */
  queue_key?: string;
  /** a watcher saw its block replaced after it was recorded (docs/settlement.md "Reorgs"): reported, not reversed */
  reorged_at?: string;
}

/** Hex transaction ids (0x…, TRON's 64 hex) compare in any case; a base58 one (Solana) is case-sensitive. */
const txKey = (txId: string): string => (/^0x|^[0-9a-fA-F]{64}$/i.test(txId) ? txId.toLowerCase() : txId);

/** Deterministic: the same transfer always gets the same id, which is its store key. */
export function depositId(rail: Rail['rail'], txId: string, logIndex: number): string {
  const h = createHash('sha256').update(`${rail}\n${txKey(txId)}\n${logIndex}`).digest('hex');
  return `dep_${h.slice(0, 32)}`;
}

/** The payment reference a deposit settles its invoice with. */
export const depositReference = (d: Deposit): string => `${d.tx_id}:${d.log_index}`;

/** Check-then-write on one deposit's record: one transfer at a time in a node (under it, machine then rail locks). */
const depositLocks = locksPerOwner();
const withDeposit = <T>(ctx: CoreContext, id: string, fn: () => Promise<T>) => depositLocks(ctx.store, id, fn);

export async function loadDeposit(ctx: CoreContext, id: string): Promise<DepositRecord | undefined> {
  return (await ctx.store.get('deposits', id)) as unknown as DepositRecord | undefined;
}

/** What the operator sees: the record less its queue bookkeeping. */
export function depositView(d: DepositRecord): Record<string, unknown> {
  const { queue_key: _q, ...rest } = d;
  return rest;
}

const asJson = (r: DepositRecord) => r as unknown as Record<string, unknown>;
const codeOf = (e: unknown) => (e as { code?: unknown } | null)?.code;

/**
 * Records a deposit once: the first time it credits the open invoice holding its exact amount, or
 * joins the unmatched queue; any later time (a re-scan, a restart, another watcher) it returns the
 * stored record and changes nothing (`fresh` false).
 */
export async function recordDeposit(
  ctx: CoreContext, d: Deposit,
): Promise<{ deposit: DepositRecord; fresh: boolean }> {
  const id = depositId(d.rail, d.tx_id, d.log_index);
  return withDeposit(ctx, id, async () => {
    const known = await loadDeposit(ctx, id);
    if (known) return { deposit: known, fresh: false };
    const now = ctx.now();
    const seen: DepositRecord = {
      ...d, tx_id: txKey(d.tx_id), deposit_id: id, state: 'unmatched',
      amount_decimal: decimal(BigInt(d.amount)), seen_at: now.toISOString(),
    };
    const inv = await invoiceHoldingAmount(ctx, d.rail, d.amount);
    let creditedBy: string | undefined;
    if (inv && inv.state === 'pending' && now.getTime() < inv.expires_ms) {
      const rec: DepositRecord = {
        ...seen, state: 'credited', invoice_id: inv.invoice_id, machine_id: inv.machine_id,
        credited_at: now.toISOString(),
      };
      const attach: DepositAttachment = {
        deposit_id: id, ops: [create('deposits', id, asJson(rec))], ref: { deposit_id: id },
      };
      try {
        const settled = await settleInvoice(ctx, inv.invoice_id, depositReference(d), false, attach);
        if (attach.landed) return { deposit: rec, fresh: true };
        // another node recorded this deposit first and settled the invoice with it
        if (settled.deposit_id === id) return { deposit: (await loadDeposit(ctx, id)) ?? rec, fresh: false };
        // settled by hand with this very reference: it credited once already; the deposit is queued
      } catch (e) {
        if (isStoreConflict(e)) return recordedElsewhere(ctx, id, e);
        // its reference settled another invoice by hand: the same, queued naming that invoice
        if (codeOf(e) === 'deposit_already_credited') creditedBy = (e as ServiceError).details?.invoice_id as string;
        else if (codeOf(e) !== 'invoice_expired' && codeOf(e) !== 'invoice_already_settled') throw e;
      }
    }
    const rec: DepositRecord = creditedBy !== undefined
      ? { ...seen, reason: 'reference_already_credited', nearest_invoice_id: creditedBy, queue_key: queueKey(now, id) }
      : await unmatched(ctx, seen, inv && (await loadInvoice(ctx, inv.invoice_id)), now);
    const queued = put('unmatched_deposits', rec.queue_key!, { deposit_id: id });
    try {
      await ctx.store.write([create('deposits', id, asJson(rec)), queued]);
    } catch (e) {
      if (isStoreConflict(e)) return recordedElsewhere(ctx, id, e);
      throw e;
    }
    return { deposit: rec, fresh: true };
  });
}

/** A store conflict while recording: another node recorded the deposit first (its record), or else the error. */
async function recordedElsewhere(
  ctx: CoreContext, id: string, e: unknown,
): Promise<{ deposit: DepositRecord; fresh: boolean }> {
  const known = await loadDeposit(ctx, id);
  if (!known) throw e;
  return { deposit: known, fresh: false };
}

/** A deposit's place in the unmatched queue: oldest first. */
const queueKey = (now: Date, depositId: string) => key(numPart(now.getTime()), depositId);

/** The queue entry for a deposit no open invoice took, naming the invoice it most likely meant. */
async function unmatched(
  ctx: CoreContext, seen: DepositRecord, holder: InvoiceRecord | undefined, now: Date,
): Promise<DepositRecord> {
  const queue_key = queueKey(now, seen.deposit_id);
  if (holder) {
    const reason: UnmatchedReason = holder.state === 'settled' ? 'invoice_already_settled' : 'invoice_expired';
    return { ...seen, reason, nearest_invoice_id: holder.invoice_id, nearest_amount_due: holder.amount_due, queue_key };
  }
  const near = await nearestOpenInvoice(ctx, seen.rail, BigInt(seen.amount), now.getTime());
  if (!near) return { ...seen, reason: 'no_open_invoice', queue_key };
  return {
    ...seen, reason: 'amount_mismatch', nearest_invoice_id: near.invoice_id, nearest_amount_due: near.amount_due,
    queue_key,
  };
}

/** UNMATCHED: the queue, oldest first (at most `limit`). */
export async function listUnmatched(
  ctx: CoreContext, limit = 1000,
): Promise<{ deposits: DepositRecord[]; more: boolean }> {
  const deposits: DepositRecord[] = [];
  let more = false;
  for await (const [, v] of ctx.store.entries('unmatched_deposits', { limit: limit + 1 })) {
    if (deposits.length === limit) { more = true; break; }
    const d = await loadDeposit(ctx, v.deposit_id as string);
    if (d) deposits.push(d);
  }
  return { deposits, more };
}

/**
 * CLAIM: the operator credits a queued deposit to an invoice, once: the amount actually paid (an
 * over- or under-payment credits what arrived), the invoice settled by it (`settled_late` when it
 * had expired), the deposit leaving the queue, all in one batch. The invoice must be on the deposit's
 * rail and not settled yet.
 */
export async function claimDeposit(
  ctx: CoreContext, id: string, invoiceId: string,
): Promise<{ deposit: DepositRecord; invoice: InvoiceRecord }> {
  return withDeposit(ctx, id, async () => {
    const dep = await loadDeposit(ctx, id);
    if (!dep) throw new ServiceError('not_found', `no deposit ${id}`);
    if (dep.state !== 'unmatched') {
      const msg = `deposit ${id} was already credited to invoice ${dep.invoice_id ?? '?'} (${dep.state})`;
      throw new ServiceError('deposit_already_credited', msg, { invoice_id: dep.invoice_id ?? null, state: dep.state });
    }
    const inv = await loadInvoice(ctx, invoiceId);
    if (inv.rail !== dep.rail) {
      throw new ServiceError('invalid_request', `deposit ${id} is on ${dep.rail}, invoice ${invoiceId} on ${inv.rail}`);
    }
    const now = ctx.now();
    const { queue_key, ...rest } = dep;
    const rec: DepositRecord = {
      ...rest, state: 'claimed', invoice_id: inv.invoice_id, machine_id: inv.machine_id, credited_at: now.toISOString(),
    };
    let settled: InvoiceRecord;
    try {
      settled = await settleInvoice(ctx, invoiceId, depositReference(dep), 'either', {
        deposit_id: id,
        // compared with the unmatched record read above: a claim of it on another node meanwhile refuses this one
        ops: [replace('deposits', id, asJson(rec), asJson(dep)),
          ...(queue_key ? [del('unmatched_deposits', queue_key)] : [])],
        ref: { deposit_id: id, claim: 'true' },
        creditUnits: BigInt(dep.amount) * UNITS_PER_BASE_UNIT,
      });
    } catch (e) {
      const now = isStoreConflict(e) ? await loadDeposit(ctx, id) : undefined;
      if (now && now.state !== 'unmatched') {
        const msg = `deposit ${id} was already credited to invoice ${now.invoice_id ?? '?'} (${now.state})`;
        const details = { invoice_id: now.invoice_id ?? null, state: now.state };
        throw new ServiceError('deposit_already_credited', msg, details);
      }
      throw e;
    }
    if (settled.deposit_id !== id) {
      const ref = JSON.stringify(settled.settlement_reference);
      const msg = `invoice ${invoiceId} was already settled with reference ${ref}`;
      throw new ServiceError('invoice_already_settled', msg, { settlement_reference: settled.settlement_reference });
    }
    return { deposit: rec, invoice: settled };
  });
}

/**
 * A watcher saw the block of a recorded deposit replaced: marked and reported, never reversed. The mark
 * compares the record it read (a claim on another node meanwhile is read again, never overwritten).
 */
export async function markReorged(ctx: CoreContext, id: string): Promise<DepositRecord | undefined> {
  return withDeposit(ctx, id, async () => {
    for (let run = 1; ; run++) {
      const dep = await loadDeposit(ctx, id);
      if (!dep || dep.reorged_at) return dep;
      const rec: DepositRecord = { ...dep, reorged_at: ctx.now().toISOString() };
      try {
        await ctx.store.write([replace('deposits', id, asJson(rec), asJson(dep))]);
        return rec;
      } catch (e) {
        if (!isStoreConflict(e) || run >= MARK_RUNS) throw e;
      }
    }
  });
}

const MARK_RUNS = 5;
