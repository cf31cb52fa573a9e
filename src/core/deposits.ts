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
import type { DEPOSIT_STATES } from '../protocol/schemas.ts';
import { key, numPart } from '../store/key-codec.ts';
import { create, del, isStoreConflict, put, replace, type Op } from '../store/store.ts';
import type { Rail } from './rails.ts';
import type { CoreContext } from './context.ts';
import { decide, matchTransfer, paidAtMs, type QueueMatch, type UnmatchedReason } from './deposit-match.ts';
import {
  UNITS_PER_BASE_UNIT, decimal, loadInvoice, settle, type DepositAttachment, type InvoiceRecord, type SettleMode,
  type Settled,
} from './invoices.ts';
import { transferIndexOp } from './transfers.ts';
import { lockTable, type Held } from './lock-order.ts';
import { webhookOps } from './webhooks.ts';

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

export type { UnmatchedReason };

/** What an operator did with a queued deposit instead of crediting it (DISMISS). */
export interface Dismissal {
  outcome: 'refunded' | 'written_off';
  note: string;
  at: string;
  /** the refund's own transaction, when the operator names it */
  refund_reference?: string;
}

export interface DepositRecord extends Deposit {
  deposit_id: string;
  /**
   * credited: settled its invoice on sight; unmatched: in the queue; claimed: credited by the operator;
   * dismissed: taken out of the queue by the operator without a credit (refunded or written off)
   */
  state: (typeof DEPOSIT_STATES)[number];
  amount_decimal: string;
  seen_at: string;
  invoice_id?: string;
  machine_id?: string;
  credited_at?: string;
  reason?: UnmatchedReason;
  nearest_invoice_id?: string;
  nearest_amount_due?: string;
  /** amount_mismatch: how many invoices open at the transfer's time were within the tolerance (the nearest named) */
  candidates?: number;
  dismissal?: Dismissal;
  /** the unmatched queue's key while it waits there */
  queue_key?: string;
  /** a watcher saw its block replaced after it was recorded (docs/settlement.md "Reorgs"): reported, not reversed */
  reorged_at?: string;
  /** the Solana Pay reference the transfer named its invoice by (solana-pay.ts) */
  reference?: string;
}

/** Hex transaction ids (0x…, TRON's 64 hex) compare in any case; a base58 one (Solana) is case-sensitive. */
export const txKey = (txId: string): string => (/^0x|^[0-9a-fA-F]{64}$/i.test(txId) ? txId.toLowerCase() : txId);

/** Deterministic: the same transfer always gets the same id, which is its store key. */
export function depositId(rail: Rail['rail'], txId: string, logIndex: number): string {
  const h = createHash('sha256').update(`${rail}\n${txKey(txId)}\n${logIndex}`).digest('hex');
  return `dep_${h.slice(0, 32)}`;
}

/** The payment reference a deposit settles its invoice with. */
export const depositReference = (d: Deposit): string => `${d.tx_id}:${d.log_index}`;

/** Check-then-write on one deposit's record: one transfer at a time in a node (the outermost lock). */
const depositLocks = lockTable('deposit');
const withDeposit = <T>(ctx: CoreContext, id: string, fn: (held: Held) => Promise<T>) =>
  depositLocks(ctx.store, id, null, fn);

export async function loadDeposit(ctx: CoreContext, id: string): Promise<DepositRecord | undefined> {
  return ctx.store.get<DepositRecord>('deposits', id);
}

/** What the operator sees: the record less its queue bookkeeping. */
export function depositView(d: DepositRecord): Record<string, unknown> {
  const { queue_key: _q, ...rest } = d;
  return rest;
}

const codeOf = (e: unknown) => (e as { code?: unknown } | null)?.code;

/**
 * Records a deposit once: the first time it credits the invoice it pays (deposit-match.ts), or joins the
 * unmatched queue naming why; any later time (a re-scan, a restart, another watcher) it returns the
 * stored record and changes nothing (`fresh` false). `accounts`: the transaction's accounts that may be an
 * invoice's Solana Pay reference.
 */
export async function recordDeposit(
  ctx: CoreContext, d: Deposit, accounts: readonly string[] = [],
): Promise<{ deposit: DepositRecord; fresh: boolean }> {
  const id = depositId(d.rail, d.tx_id, d.log_index);
  return withDeposit(ctx, id, async (held) => {
    const known = await loadDeposit(ctx, id);
    if (known) return { deposit: known, fresh: false };
    const now = ctx.now();
    const paidMs = paidAtMs(d.block_time);
    const match = await matchTransfer(ctx, d.rail, d.amount, paidMs, now.getTime(), accounts);
    const seen: DepositRecord = {
      ...d, tx_id: txKey(d.tx_id), deposit_id: id, state: 'unmatched',
      amount_decimal: decimal(BigInt(d.amount)), seen_at: now.toISOString(),
      ...(match.reference ? { reference: match.reference } : {}),
    };
    let toQueue: QueueMatch;
    if ('credit' in match) {
      const credited = await creditOnSight(ctx, seen, match.credit, match.mode, held);
      if ('deposit' in credited) return credited;
      toQueue = credited;
    } else {
      toQueue = match;
    }
    const rec = queued(seen, toQueue, now);
    try {
      await ctx.store.write([
        create('deposits', id, rec), put('unmatched_deposits', rec.queue_key!, { deposit_id: id }),
        transferIndexOp(d.rail, seen.tx_id, d.log_index, id),
        ...webhookOps(ctx, 'deposit.unmatched', depositView(rec), now),
      ]);
    } catch (e) {
      if (isStoreConflict(e)) return recordedElsewhere(ctx, id, e);
      throw e;
    }
    return { deposit: rec, fresh: true };
  });
}

/**
 * Settles `inv` with the deposit, its record in the same batch: the recorded deposit, or (the invoice
 * could not take it after all: settled or expired meanwhile, its reference used by hand) the queue entry
 * to write instead.
 */
async function creditOnSight(
  ctx: CoreContext, seen: DepositRecord, inv: InvoiceRecord, mode: SettleMode, held: Held,
): Promise<{ deposit: DepositRecord; fresh: boolean } | QueueMatch> {
  const id = seen.deposit_id;
  const rec: DepositRecord = {
    ...seen, state: 'credited', invoice_id: inv.invoice_id, machine_id: inv.machine_id,
    credited_at: ctx.now().toISOString(),
  };
  const attach: DepositAttachment = {
    deposit_id: id, held, ref: { deposit_id: id }, ...(seen.block_time ? { paidAt: seen.block_time } : {}),
    ops: [create('deposits', id, rec), transferIndexOp(seen.rail, seen.tx_id, seen.log_index, id)],
  };
  try {
    const settled = await settle(ctx, inv.invoice_id, depositReference(seen), mode, attach);
    if (settled.landed) return { deposit: rec, fresh: true };
    // another node recorded this deposit first and settled the invoice with it
    if (settled.invoice.deposit_id === id) return { deposit: (await loadDeposit(ctx, id)) ?? rec, fresh: false };
    // settled by hand with this very reference: it credited once already
    return { queue: 'invoice_already_settled', invoice: settled.invoice };
  } catch (e) {
    if (isStoreConflict(e)) return recordedElsewhere(ctx, id, e);
    const code = codeOf(e);
    // its reference settled another invoice by hand: queued naming that invoice
    if (code === 'deposit_already_credited') {
      const other = (e as ServiceError).details?.invoice_id as string;
      return { queue: 'reference_already_credited', invoice: await loadInvoice(ctx, other) };
    }
    if (code !== 'invoice_expired' && code !== 'invoice_already_settled') throw e;
    const now = await loadInvoice(ctx, inv.invoice_id);
    const again = decide(now, paidAtMs(seen.block_time), ctx.now().getTime());
    return 'queue' in again ? again : { queue: 'invoice_expired', invoice: now };
  }
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

/** The queue entry for a deposit no invoice took, naming why and the invoice it concerns, if any. */
function queued(seen: DepositRecord, match: QueueMatch, now: Date): DepositRecord {
  const inv = match.invoice;
  return {
    ...seen, reason: match.queue, queue_key: queueKey(now, seen.deposit_id),
    ...(inv ? { nearest_invoice_id: inv.invoice_id, nearest_amount_due: inv.amount_due } : {}),
    ...(match.candidates !== undefined ? { candidates: match.candidates } : {}),
  };
}

/** UNMATCHED's filters, validated against its schema (state and limit defaulted). */
export interface DepositFilter {
  rail?: Rail['rail']; reason?: UnmatchedReason; state: DepositRecord['state']; limit: number;
}

/**
 * UNMATCHED: the queue, oldest first, or (another `state`) every deposit in that state in id order; at
 * most `limit`, filtered by rail and reason. The queue is read through its index; other states scan.
 */
export async function listUnmatched(
  ctx: CoreContext, f: DepositFilter = { state: 'unmatched', limit: 1000 },
): Promise<{ deposits: DepositRecord[]; more: boolean }> {
  const deposits: DepositRecord[] = [];
  const fits = (d: DepositRecord) => d.state === f.state && (f.rail === undefined || d.rail === f.rail)
    && (f.reason === undefined || d.reason === f.reason);
  const records = f.state === 'unmatched' ? queuedRecords(ctx) : allRecords(ctx);
  for await (const d of records) {
    if (!fits(d)) continue;
    if (deposits.length === f.limit) return { deposits, more: true };
    deposits.push(d);
  }
  return { deposits, more: false };
}

async function* queuedRecords(ctx: CoreContext): AsyncGenerator<DepositRecord> {
  for await (const [, v] of ctx.store.entries('unmatched_deposits')) {
    const d = await loadDeposit(ctx, v.deposit_id as string);
    if (d) yield d;
  }
}

async function* allRecords(ctx: CoreContext): AsyncGenerator<DepositRecord> {
  for await (const [, v] of ctx.store.entries<DepositRecord>('deposits')) yield v;
}

/** The refusal for acting on a deposit that has left the queue (credited, claimed or dismissed). */
function notQueued(dep: DepositRecord): ServiceError {
  if (dep.state === 'dismissed') {
    const d = dep.dismissal!;
    const msg = `deposit ${dep.deposit_id} was dismissed (${d.outcome}) at ${d.at}: it can never be credited`;
    return new ServiceError('deposit_dismissed', msg, { outcome: d.outcome, at: d.at });
  }
  const msg = `deposit ${dep.deposit_id} was already credited to invoice ${dep.invoice_id ?? '?'} (${dep.state})`;
  return new ServiceError('deposit_already_credited', msg, { invoice_id: dep.invoice_id ?? null, state: dep.state });
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
  return withDeposit(ctx, id, async (held) => {
    const dep = await loadDeposit(ctx, id);
    if (!dep) throw new ServiceError('not_found', `no deposit ${id}`);
    if (dep.state !== 'unmatched') throw notQueued(dep);
    // an x402 settlement seen by a watcher before its payment named it: x402 credited it (x402/desk.ts)
    const x402 = await ctx.store.get<{ payment_id: string }>('x402_txs', txKey(dep.tx_id));
    if (x402) {
      const msg = `deposit ${id} is the settlement of x402 payment ${x402.payment_id}`;
      throw new ServiceError('deposit_already_credited', msg, { payment_id: x402.payment_id });
    }
    const inv = await loadInvoice(ctx, invoiceId);
    if (inv.rail !== dep.rail) {
      throw new ServiceError('invalid_request', `deposit ${id} is on ${dep.rail}, invoice ${invoiceId} on ${inv.rail}`);
    }
    const { queue_key, ...rest } = dep;
    const rec: DepositRecord = {
      ...rest, state: 'claimed', invoice_id: inv.invoice_id, machine_id: inv.machine_id,
      credited_at: ctx.now().toISOString(),
    };
    let settled: Settled;
    try {
      settled = await settle(ctx, invoiceId, depositReference(dep), 'claim', {
        deposit_id: id,
        held,
        // compared with the unmatched record read above: a claim of it on another node meanwhile refuses this one
        ops: [replace('deposits', id, rec, dep),
          ...(queue_key ? [del('unmatched_deposits', queue_key)] : [])],
        ref: { deposit_id: id, claim: 'true' },
        creditUnits: BigInt(dep.amount) * UNITS_PER_BASE_UNIT,
        ...(dep.block_time ? { paidAt: dep.block_time } : {}),
      });
    } catch (e) {
      const now = isStoreConflict(e) ? await loadDeposit(ctx, id) : undefined;
      if (now && now.state !== 'unmatched') throw notQueued(now);
      throw e;
    }
    if (!settled.landed) {
      const ref = JSON.stringify(settled.invoice.settlement_reference);
      const msg = `invoice ${invoiceId} was already settled with reference ${ref}`;
      const details = { settlement_reference: settled.invoice.settlement_reference };
      throw new ServiceError('invoice_already_settled', msg, details);
    }
    return { deposit: rec, invoice: settled.invoice };
  });
}

/**
 * DISMISS: the operator takes a queued deposit out of the queue without crediting it: refunded to its
 * payer or written off, with a note. Final: a dismissed deposit can never be claimed. The record keeps
 * the dismissal, and the audit lists it.
 */
export async function dismissDeposit(
  ctx: CoreContext, id: string, d: Omit<Dismissal, 'at'>,
): Promise<DepositRecord> {
  return withDeposit(ctx, id, async () => {
    const dep = await loadDeposit(ctx, id);
    if (!dep) throw new ServiceError('not_found', `no deposit ${id}`);
    if (dep.state !== 'unmatched') throw notQueued(dep);
    const { queue_key, ...rest } = dep;
    const rec: DepositRecord = { ...rest, state: 'dismissed', dismissal: { ...d, at: ctx.now().toISOString() } };
    try {
      await ctx.store.write([
        replace('deposits', id, rec, dep), ...(queue_key ? [del('unmatched_deposits', queue_key)] : []),
      ]);
    } catch (e) {
      const now = isStoreConflict(e) ? await loadDeposit(ctx, id) : undefined;
      if (now && now.state !== 'unmatched') throw notQueued(now);
      throw e;
    }
    return rec;
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
      const now = ctx.now();
      const rec: DepositRecord = { ...dep, reorged_at: now.toISOString() };
      try {
        await ctx.store.write([
          replace('deposits', id, rec, dep), reorgIndexOp(rec),
          ...webhookOps(ctx, 'deposit.reorged', depositView(rec), now),
        ]);
        return rec;
      } catch (e) {
        if (!isStoreConflict(e) || run >= MARK_RUNS) throw e;
      }
    }
  });
}

const MARK_RUNS = 5;

/** The reorg index's entry of a deposit marked reorged (its rail's list, for REORGS and the status). */
export const reorgIndexOp = (d: DepositRecord): Op =>
  put('deposit_reorgs', key(d.rail, d.deposit_id), { deposit_id: d.deposit_id, reorged_at: d.reorged_at ?? null });

/** REORGS: the deposits a watcher saw reorged out after recording them, by rail (or all), in id order. */
export async function listReorged(ctx: CoreContext, rail?: Rail['rail']): Promise<DepositRecord[]> {
  const range = rail ? { gte: key(rail, ''), lt: key(rail, '\uffff') } : {};
  const out: DepositRecord[] = [];
  for await (const [, v] of ctx.store.entries('deposit_reorgs', range)) {
    const d = await loadDeposit(ctx, v.deposit_id as string);
    if (d) out.push(d);
  }
  return out;
}
