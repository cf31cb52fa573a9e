// Funding invoices (DESIGN.md §4): `units` whole svcC on one of the four rails, paid to the rail's
// configured address. The amount due (token base units, 6 decimals, 1 svcC = 1.00 USD reference)
// carries a suffix of 1..99,999 base units that is unique among the rail's open invoices, so one
// address can match payments to invoices; the payer is credited exactly the amount due. A machine
// has at most SVC_MAX_OPEN_INVOICES pending invoices. States: pending → settled (credited exactly
// once, by one payment reference) or expired; an expired invoice is credited by the operator
// (CREDIT_LATE_PAYMENT, then `settled_late`), or by a chain transfer made before it expired. Chain
// deposits (deposits.ts) feed the same path, their deposit record written in the credit's batch. An
// amount stays with its invoice until its expiry plus SVC_INVOICE_AMOUNT_HOLD_MS, settled or not, so
// that a payment still on its way (or a second one) can only be matched to the invoice it was for.
import { randomInt } from 'node:crypto';
import { ServiceError } from '../errors.ts';
import { UNIT_SCALE } from '../protocol/pricing.ts';
import { LIMITS, type InvoiceState } from '../protocol/schemas.ts';
import { idPart, key, numPart } from '../store/key-codec.ts';
import { create, del, isStoreConflict, put, replace, type Json, type Op, type Store } from '../store/store.ts';
import { batchWriter } from '../store/batch-writer.ts';
import { DEFAULT_AMOUNT_HOLD_MS } from './config.ts';
import { NO_ADDRESS, RAIL_FAMILY, type Rail } from './rails.ts';
import { SOLANA_MINTS, newReference, referenceIndexKey, transferRequest } from './solana-pay.ts';
import type { CoreContext } from './context.ts';
import { newId } from './ids.ts';
import { clientInvoiceOps, withClient } from './invoice-clients.ts';
import { canonicalOrAsIs } from './payment-reference.ts';
import { resolveReference } from './transfers.ts';
import { lockTable, type Held } from './lock-order.ts';
import { checkToken, claimedRecord, getMachine, machineOps, newToken, type MachineRecord } from './machines.ts';
import { invoiceTransitions } from '../metrics/metrics.ts';
import { webhookOps } from './webhooks.ts';

/** svc_invoice_transitions_total: counted once the state is durable. */
const INVOICES_ENTERING = {
  created: invoiceTransitions.at('created'), settled: invoiceTransitions.at('settled'),
  settled_late: invoiceTransitions.at('settled_late'), expired: invoiceTransitions.at('expired'),
};


export interface InvoiceRecord {
  invoice_id: string;
  machine_id: string;
  state: InvoiceState;
  units: number;
  credit_units: string;
  rail: Rail['rail'];
  network: Rail['network'];
  asset: Rail['asset'];
  decimals: number;
  pay_to: string;
  amount_due: string;
  amount_due_decimal: string;
  created_at: string;
  expires_at: string;
  expires_ms: number;
  settled_at?: string;
  settlement_reference?: string;
  /** true when the operator credited a payment that arrived after expiry (CREDIT_LATE_PAYMENT) */
  settled_late?: boolean;
  /** the chain deposit that paid it (deposits.ts), when a watcher or a claim settled it */
  deposit_id?: string;
  /** when the payment was made (its block's time), when a chain transfer settled it */
  paid_at?: string;
  expired_at?: string;
  /** Solana rails: the Solana Pay reference a transfer names this invoice by, and its transfer request URI */
  reference?: string;
  payment_uri?: string;
  /** false: the rail had no free amount, so the amount due is not unique and only the reference matches it */
  amount_unique?: boolean;
}

/**
 * What a chain deposit adds to the settlement batch (deposits.ts): its own records, fields for the
 * journal entry, and for a claimed over- or under-payment the units actually paid.
 */
export interface DepositAttachment {
  deposit_id: string;
  /** the deposit's lock, when the settlement is taken under it (lock-order.ts) */
  held?: Held;
  ops: Op[];
  ref: Record<string, string>;
  creditUnits?: bigint;
  /** the transfer's block time, when the chain gives one: the invoice's paid_at */
  paidAt?: string;
}

/**
 * Which invoices a settlement takes: `open` (SETTLE_INVOICE) an unexpired one; `late`
 * (CREDIT_LATE_PAYMENT) an expired one, shown settled_late; `claim` (CLAIM) either, settled_late if
 * expired; `paid_in_time` (a watcher's transfer whose block time is within the invoice's life) either,
 * not late, however long the transfer took to become final.
 */
export type SettleMode = 'open' | 'late' | 'claim' | 'paid_in_time';

/** A settlement's outcome: the invoice, and whether this call's batch landed (false: it was settled already). */
export interface Settled { invoice: InvoiceRecord; landed: boolean }

/** The amount index's entry: the invoice holding an amount, and the one that held it before, if any. */
export interface AmountHolder extends Json {
  invoice_id: string; created_ms?: number; expires_ms: number;
  /** when the invoice was settled (its amount stays held until the expiry plus the hold) */
  settled_ms?: number;
}
interface AmountEntry extends AmountHolder, Json { previous?: AmountHolder }

const holdMs = (ctx: CoreContext): number => ctx.config.invoiceAmountHoldMs ?? DEFAULT_AMOUNT_HOLD_MS;

/**
 * Base units per whole token (6 decimals) and the suffix ranges: 1..99,999 base units (< 0.10 USD) first, then,
 * while those are all held, 100,000..999,999 (< 1.00 USD: never reaching the next whole unit's amounts).
 */
const BASE = 1_000_000n;
const SUFFIX_MAX = 99_999;
const WIDE_SUFFIX_MAX = 999_999;
/** Internal units per token base unit: 1 svcC = 1.00 USD = 10^6 base units = 10^8 internal units. */
export const UNITS_PER_BASE_UNIT = UNIT_SCALE / BASE;
const ALLOCATION_TRIES = 64;

/**
 * Amount allocation is check-then-write on an index shared by every machine: one rail at a time in a node.
 * Across nodes (a shared store) the amount's entry is a create, or a compare-and-set over an expired
 * invoice's, so two nodes that picked one amount cannot both write it: the loser's batch is refused and
 * withMachine runs fundAccount again, which picks afresh (a bounded number of times, then busy).
 */
const railLocks = lockTable('rail');

export function invoiceView(inv: InvoiceRecord): Record<string, unknown> {
  const { expires_ms: _e, ...rest } = inv;
  return rest;
}

export function decimal(baseUnits: bigint): string {
  return `${baseUnits / BASE}.${(baseUnits % BASE).toString().padStart(6, '0')}`;
}

export function railFor(ctx: CoreContext, network: string, asset: string): Rail {
  const r = ctx.config.rails.find((x) => x.network === network && x.asset === asset);
  if (!r) {
    const rails = ctx.config.rails.map((x) => `${x.asset}/${x.network}`).join(', ');
    throw new ServiceError('unsupported_rail', `${asset} on ${network} is not a payment rail (rails: ${rails})`);
  }
  if (!takesPayments(ctx, r)) {
    const open = ctx.config.rails.filter((x) => takesPayments(ctx, x)).map((x) => `${x.asset}/${x.network}`);
    const msg = `this node takes no payments in ${asset} on ${network}: its operator has set no receiving address ` +
      `(SVC_WALLET_${r.rail}); rails that take payments here: ${open.join(', ') || 'none'}`;
    throw new ServiceError('unsupported_rail', msg, { rail: r.rail, rails: open });
  }
  return r;
}

/** A rail takes payments when it has a receiving address, or on a node in local payments mode (by hand). */
export function takesPayments(ctx: CoreContext, r: Rail): boolean {
  return r.address !== NO_ADDRESS || ctx.config.payments === 'local';
}

export async function loadInvoice(ctx: CoreContext, invoiceId: string): Promise<InvoiceRecord> {
  const inv = await ctx.store.get<InvoiceRecord>('invoices', invoiceId);
  if (!inv) throw new ServiceError('not_found', `no invoice ${invoiceId}`);
  return inv;
}

/** Check-then-write on one payment reference: one settlement with it at a time in a node. */
const referenceLocks = lockTable('reference');

/** The settlement_refs key of a payment reference (the key codec's: any well-formed text, ordered). */
export const referenceKey = (reference: string): string => key(idPart(reference));

/**
 * The invoice a payment reference already settled, when it is another than `invoiceId`: one on-chain
 * payment credits one invoice, whichever path names it (SETTLE_INVOICE, CREDIT_LATE_PAYMENT, a
 * watcher's deposit, CLAIM).
 */
async function creditedElsewhere(ctx: CoreContext, reference: string, invoiceId: string): Promise<string | null> {
  const held = await ctx.store.get('settlement_refs', referenceKey(reference));
  const other = held?.invoice_id as string | undefined;
  return other !== undefined && other !== invoiceId ? other : null;
}

function referenceUsed(reference: string, other: string): ServiceError {
  const msg = `payment reference ${JSON.stringify(reference)} already credited invoice ${other}: one payment ` +
    'credits one invoice (a payment meant for several is settled with a distinct reference for each)';
  return new ServiceError('deposit_already_credited', msg, { invoice_id: other, reference });
}

/** The invoice that holds `amount` (base units) on the rail's amount index, whatever its state now. */
export async function invoiceHoldingAmount(
  ctx: CoreContext, rail: Rail['rail'], amount: string,
): Promise<InvoiceRecord | undefined> {
  const held = await ctx.store.get('invoice_amounts', key(rail, amount));
  if (!held) return undefined;
  return ctx.store.get<InvoiceRecord>('invoices', held.invoice_id as string);
}

/** The invoice holding `amount` on the rail, and the one that held it before (a late payment's likely invoice). */
export async function amountHolders(
  ctx: CoreContext, rail: Rail['rail'], amount: string,
): Promise<{ holder?: InvoiceRecord; previous?: InvoiceRecord }> {
  const held = (await ctx.store.get('invoice_amounts', key(rail, amount))) as AmountEntry | undefined;
  if (!held) return {};
  const load = async (h: AmountHolder | undefined) =>
    h && (await ctx.store.get<InvoiceRecord>('invoices', h.invoice_id));
  const [holder, previous] = await Promise.all([load(held), load(held.previous)]);
  return { ...(holder ? { holder } : {}), ...(previous ? { previous } : {}) };
}

/** The machine's invoices that are still open at `nowMs` (expired ones drop out by time). */
function openInvoices(rec: MachineRecord | undefined, nowMs: number): Record<string, number> {
  return Object.fromEntries(Object.entries(rec?.open_invoices ?? {}).filter(([, exp]) => exp > nowMs));
}

/**
 * FUND_ACCOUNT: creates an invoice. Who may do so is decided here, under the machine lock: an
 * unclaimed machine_id is claimed in the same batch (its token returned once, here); a claimed one
 * needs its token — decided outside the lock, two first calls could both see "unclaimed".
 */
/** A funding invoice, and the machine token when the call claimed the machine. */
export interface FundResult { invoice: InvoiceRecord; machine_token?: string }

export async function fundAccount(
  ctx: CoreContext,
  a: { machine_id: string; units: number; network: string; asset: string },
  token: string | undefined,
  idem?: { record: string; seal: (r: FundResult) => Op[] },
  client?: string,
): Promise<FundResult> {
  return ctx.ledger.withMachine(a.machine_id, async (machineHeld) => {
    const rec = await getMachine(ctx.store, a.machine_id);
    if (rec) checkToken(rec, token);
    const rail = railFor(ctx, a.network, a.asset);
    const now = ctx.now();
    const open = openInvoices(rec, now.getTime());
    const cap = ctx.config.maxOpenInvoices;
    if (Object.keys(open).length >= cap) {
      const msg = `machine_id has ${cap} open invoices (the most allowed): pay one or let one expire first`;
      throw new ServiceError('too_many_open_invoices', msg, { open_invoices: cap });
    }
    const claimToken = rec ? undefined : newToken();
    const invoiceId = newId('inv');
    const expiresMs = now.getTime() + ctx.config.invoiceTtlMs;
    // the client address's own bound, across machine_ids (none for a caller without an address: in process)
    const perClient = (fn: (ops: Op[], held: Held) => Promise<FundResult>) =>
      (client === undefined ? fn([], machineHeld) : withClient(ctx, client, machineHeld, async (held) =>
        fn(await clientInvoiceOps(ctx, client, invoiceId, expiresMs), held)));
    return perClient((clientOps, held) => railLocks(ctx.store, rail.rail, held, async () => {
      const { amount, taken, unique } = await amountFor(ctx, rail, a.units, now.getTime());
      const drafted: InvoiceRecord = {
        invoice_id: invoiceId, machine_id: a.machine_id, state: 'pending', units: a.units,
        credit_units: (amount * UNITS_PER_BASE_UNIT).toString(),
        rail: rail.rail, network: rail.network, asset: rail.asset, decimals: 6, pay_to: rail.address,
        amount_due: amount.toString(), amount_due_decimal: decimal(amount),
        created_at: now.toISOString(), expires_at: new Date(expiresMs).toISOString(), expires_ms: expiresMs,
        ...(unique ? {} : { amount_unique: false }),
      };
      const pay = solanaPay(ctx, rail, drafted);
      const inv: InvoiceRecord = { ...drafted, ...pay.fields };
      // a claim names the idempotency record that keeps its sealed token (keyed-requests.ts), if any
      const claimed = () => ({ ...claimedRecord(claimToken!, now), ...(idem ? { replay_record: idem.record } : {}) });
      const next: MachineRecord = { ...(rec ?? claimed()), open_invoices: { ...open, [inv.invoice_id]: expiresMs } };
      const reply = claimToken ? { invoice: inv, machine_token: claimToken } : { invoice: inv };
      const amountEntry: AmountEntry = {
        invoice_id: inv.invoice_id, created_ms: now.getTime(), expires_ms: expiresMs,
        ...(taken ? { previous: holderOf(taken) } : {}),
      };
      const amountKey = key(rail.rail, inv.amount_due);
      // new, or over the expired entry as read: another node's pick of this amount meanwhile refuses the batch
      const amountOps = !unique ? [] : taken
        ? [replace('invoice_amounts', amountKey, amountEntry, taken)]
        : [create('invoice_amounts', amountKey, amountEntry)];
      await ctx.store.write([
        put('invoices', inv.invoice_id, inv),
        ...amountOps,
        ...pay.ops,
        ...machineOps(a.machine_id, next, rec),
        ...clientOps,
        put('invoice_expiry', invoiceExpiryKey(inv), { invoice_id: inv.invoice_id }),
        ...(idem?.seal(reply) ?? []),
      ]);
      INVOICES_ENTERING.created.v++;
      return reply;
    }));
  });
}

const holderOf = (e: Json): AmountHolder => ({
  invoice_id: e.invoice_id as string, expires_ms: e.expires_ms as number,
  ...(typeof e.created_ms === 'number' ? { created_ms: e.created_ms } : {}),
});

/**
 * A unique amount on the rail: `base` plus a random suffix no invoice holds, and the entry it takes over
 * (if any), which the write compares. An amount is free once its invoice's expiry plus the hold has
 * passed: until then a payment for it may still arrive or become final. Caller holds the rail lock.
 */
async function allocateAmount(
  ctx: CoreContext, rail: Rail, base: bigint, nowMs: number,
): Promise<{ amount: bigint; taken: Json | undefined } | null> {
  const narrow = ctx.config.invoiceSuffixMax ?? SUFFIX_MAX;
  // a test that narrows the first range and not the wider one narrows the space whole
  const wide = ctx.config.invoiceWideSuffixMax
    ?? (ctx.config.invoiceSuffixMax === undefined ? WIDE_SUFFIX_MAX : narrow);
  for (const [min, max] of [[1, narrow], [narrow + 1, wide]] as const) {
    for (let tries = 0; min <= max && tries < ALLOCATION_TRIES; tries++) {
      const amount = base + BigInt(randomInt(min, max + 1));
      const taken = await ctx.store.get('invoice_amounts', key(rail.rail, amount.toString()));
      if (!taken || (taken.expires_ms as number) + holdMs(ctx) <= nowMs) return { amount, taken };
    }
  }
  return null;
}

/**
 * The invoice's amount and how it is matched: a unique amount (and on Solana rails a reference besides), or on a
 * Solana rail whose amounts are all held, the whole units with the reference alone. Elsewhere, no free amount is
 * `busy`.
 */
async function amountFor(
  ctx: CoreContext, rail: Rail, units: number, nowMs: number,
): Promise<{ amount: bigint; taken?: Json; unique: boolean }> {
  const base = BigInt(units) * BASE;
  const picked = await allocateAmount(ctx, rail, base, nowMs);
  if (picked) return { ...picked, unique: true };
  if (RAIL_FAMILY[rail.rail] === 'solana') return { amount: base, unique: false };
  throw new ServiceError('busy', 'could not allocate a unique amount for this rail; retry');
}

/** A Solana rail's reference, its transfer request and its index entry (solana-pay.ts); nothing elsewhere. */
function solanaPay(ctx: CoreContext, rail: Rail, inv: InvoiceRecord): { fields: Partial<InvoiceRecord>; ops: Op[] } {
  if (RAIL_FAMILY[rail.rail] !== 'solana') return { fields: {}, ops: [] };
  const reference = newReference();
  const watched = ctx.config.watchers.find((w) => w.rail === rail.rail);
  const mint = watched?.family === 'solana' ? watched.mint : SOLANA_MINTS[rail.rail];
  const uri = transferRequest(rail.address, inv.amount_due_decimal, mint, reference, inv.invoice_id);
  return {
    fields: { reference, payment_uri: uri },
    ops: [create('invoice_refs', referenceIndexKey(rail.rail, reference), { invoice_id: inv.invoice_id })],
  };
}

/** The invoice's entry in the expiry index (pending invoices by expires_ms). */
export const invoiceExpiryKey = (inv: Pick<InvoiceRecord, 'expires_ms' | 'invoice_id'>): string =>
  key(numPart(inv.expires_ms), inv.invoice_id);

/** Marks a pending invoice past its expiry as expired (on read, and by the sweep). */
export async function refreshInvoice(ctx: CoreContext, inv: InvoiceRecord): Promise<InvoiceRecord> {
  if (inv.state !== 'pending' || ctx.now().getTime() < inv.expires_ms) return inv;
  return ctx.ledger.withMachine(inv.machine_id, async () => {
    const cur = await loadInvoice(ctx, inv.invoice_id);
    if (cur.state !== 'pending' || ctx.now().getTime() < cur.expires_ms) return cur;
    const now = ctx.now();
    const next: InvoiceRecord = { ...cur, state: 'expired', expired_at: now.toISOString() };
    // its amount stays held (allocateAmount): a payment made in time may still become final
    await ctx.store.write([
      put('invoices', cur.invoice_id, next), del('invoice_expiry', invoiceExpiryKey(cur)),
      ...webhookOps(ctx, 'invoice.expired', invoiceView(next), now),
    ]);
    INVOICES_ENTERING.expired.v++;
    return next;
  });
}

/**
 * Credits an invoice's amount exactly once, in the same synced batch as its new state. Which invoices it
 * takes depends on `mode` (SettleMode): after expiry an amount may be taken over by a newer invoice, so
 * crediting an expired one is the operator's explicit decision (CREDIT_LATE_PAYMENT, CLAIM), or a
 * watcher's, for a transfer made before the expiry. The reference is canonicalised first (one transfer,
 * one spelling: payment-reference.ts). A settled invoice is final: the same reference again returns it
 * unchanged, another reference is 409. `deposit` rides in the same batch.
 */
export async function settle(
  ctx: CoreContext, invoiceId: string, given: string, mode: SettleMode, deposit?: DepositAttachment,
): Promise<Settled> {
  const first = await loadInvoice(ctx, invoiceId);
  const reference = await resolveReference(ctx.store, first.rail, given);
  // the account as the lock read it: nothing below writes before the settlement's own batch
  return ctx.ledger.withMachine(first.machine_id, async (held, acct) => {
    const inv = await loadInvoice(ctx, invoiceId);
    if (inv.state === 'settled') return { invoice: settledAlready(inv, reference), landed: false };
    const now = ctx.now();
    const late = lateness(inv, mode, now);
    return referenceLocks(ctx.store, reference, held, async () => {
      const other = await creditedElsewhere(ctx, reference, inv.invoice_id);
      if (other) throw referenceUsed(reference, other);
      const ref = { invoice_id: inv.invoice_id, reference, ...(late ? { late: 'true' } : {}), ...deposit?.ref };
      const units = deposit?.creditUnits ?? BigInt(inv.credit_units);
      const { ops } = ctx.ledger.change(inv.machine_id, acct, 'credit', units, 0n, ref, now);
      const next: InvoiceRecord = {
        ...inv, state: 'settled', settled_at: now.toISOString(), settlement_reference: reference,
        ...(late ? { settled_late: true } : {}),
        ...(deposit ? { deposit_id: deposit.deposit_id } : {}),
        ...(deposit?.paidAt ? { paid_at: deposit.paidAt } : {}),
      };
      const machine = await getMachine(ctx.store, inv.machine_id);
      const { [inv.invoice_id]: _settled, ...open } = machine?.open_invoices ?? {};
      const refEntry = { invoice_id: inv.invoice_id, settled_at: next.settled_at };
      try {
        await ctx.store.write([
          put('invoices', inv.invoice_id, next),
          ...(await settledAmountOps(ctx, inv, now)),
          ...(machine ? machineOps(inv.machine_id, { ...machine, open_invoices: open }, machine) : []),
          ...ops,
          ...(deposit?.ops ?? []),
          // new: another node's settlement with this reference meanwhile refuses the whole batch
          create('settlement_refs', referenceKey(reference), refEntry),
          ...(inv.state === 'pending' ? [del('invoice_expiry', invoiceExpiryKey(inv))] : []),
          ...webhookOps(ctx, 'invoice.settled', invoiceView(next), now),
        ]);
      } catch (e) {
        const elsewhere = isStoreConflict(e) ? await creditedElsewhere(ctx, reference, inv.invoice_id) : null;
        if (elsewhere) throw referenceUsed(reference, elsewhere);
        throw e;
      }
      INVOICES_ENTERING[late ? 'settled_late' : 'settled'].v++;
      return { invoice: next, landed: true };
    });
  }, deposit?.held ?? null);
}

/**
 * Marks the invoice's amount entry settled (it stays held: a second payment is named), compared with the
 * entry read, and only while the entry is still this invoice's (after its hold a newer one may hold it).
 */
async function settledAmountOps(ctx: CoreContext, inv: InvoiceRecord, now: Date): Promise<Op[]> {
  const k = key(inv.rail, inv.amount_due);
  const held = (await ctx.store.get('invoice_amounts', k)) as AmountEntry | undefined;
  if (held?.invoice_id !== inv.invoice_id) return [];
  return [replace('invoice_amounts', k, { ...held, settled_ms: now.getTime() }, held)];
}

/** SETTLE_INVOICE and CREDIT_LATE_PAYMENT: settle() for the invoice alone (`open` or `late`). */
export async function settleInvoice(
  ctx: CoreContext, invoiceId: string, reference: string, mode: 'open' | 'late' = 'open',
): Promise<InvoiceRecord> {
  return (await settle(ctx, invoiceId, reference, mode)).invoice;
}

/** A settled invoice asked to settle again: itself for its own reference (a replay), else 409. */
function settledAlready(inv: InvoiceRecord, reference: string): InvoiceRecord {
  const recorded = inv.settlement_reference ?? null;
  if (recorded !== null && canonicalOrAsIs(inv.rail, recorded) === reference) return inv;
  const msg = `invoice ${inv.invoice_id} was already settled with reference ${JSON.stringify(recorded)}`;
  throw new ServiceError('invoice_already_settled', msg, { settlement_reference: recorded });
}

/** Whether settling `inv` now in `mode` is a late credit; refuses the invoices the mode does not take. */
function lateness(inv: InvoiceRecord, mode: SettleMode, now: Date): boolean {
  const expired = inv.state === 'expired' || now.getTime() >= inv.expires_ms;
  if (mode === 'open' && expired) {
    const msg = `invoice expired at ${inv.expires_at}; a late payment is credited with CREDIT_LATE_PAYMENT`;
    throw new ServiceError('invoice_expired', msg);
  }
  if (mode === 'late' && !expired) {
    const msg = `invoice is pending until ${inv.expires_at}: settle it with SETTLE_INVOICE`;
    throw new ServiceError('invoice_not_expired', msg);
  }
  return mode === 'late' || (mode === 'claim' && expired);
}

/**
 * Indexes the references of invoices settled before settlement_refs held canonical references (once per
 * store; a second node doing it meanwhile writes the same entries): each under its canonical spelling, a
 * bare transaction id under its only recorded transfer. Where two settled invoices share a reference the
 * first keeps it, and the audit names the pair. Run after indexRecordedTransfers.
 */
export async function indexSettlementReferences(store: Store): Promise<number> {
  if (await store.get('meta', 'settlement_refs_v2')) return 0;
  const out = batchWriter(store);
  const seen = new Set<string>();
  for await (const [, inv] of store.entries<InvoiceRecord>('invoices')) {
    if (inv.state !== 'settled' || inv.settlement_reference === undefined) continue;
    const k = referenceKey(await storedReference(store, inv.rail, inv.settlement_reference));
    if (seen.has(k) || (await store.get('settlement_refs', k))) continue;
    seen.add(k);
    await out.add(put('settlement_refs', k, { invoice_id: inv.invoice_id, settled_at: inv.settled_at ?? null }));
  }
  await out.end(put('meta', 'settlement_refs_v2', { indexed: seen.size }));
  return seen.size;
}

/**
 * Puts the pending invoices created before the expiry index existed into it (once per store; a second node
 * doing it meanwhile writes the same entries), so the sweep expires them too, and their `invoice.expired`
 * webhook goes out, whether anyone reads them or not.
 */
export async function indexPendingExpiry(store: Store): Promise<number> {
  if (await store.get('meta', 'invoice_expiry_v1')) return 0;
  const out = batchWriter(store);
  let n = 0;
  for await (const [, inv] of store.entries<InvoiceRecord>('invoices')) {
    if (inv.state !== 'pending') continue;
    await out.add(put('invoice_expiry', invoiceExpiryKey(inv), { invoice_id: inv.invoice_id }));
    n++;
  }
  await out.end(put('meta', 'invoice_expiry_v1', { indexed: n }));
  return n;
}

/** A reference as an invoice recorded it, in the spelling settle() checks: resolved if it can be, else as it is. */
export async function storedReference(store: Store, rail: Rail['rail'], text: string): Promise<string> {
  try {
    return await resolveReference(store, rail, text);
  } catch {
    return canonicalOrAsIs(rail, text);
  }
}

/** What LIST_INVOICES filters on: the state as callers see it (a pending invoice past expiry is expired). */
export type InvoiceListState = InvoiceState | 'settled_late';
/** LIST_INVOICES' args, validated (limit defaulted) against its schema. */
export interface InvoiceFilter { state?: InvoiceListState; machine_id?: string; limit: number; cursor?: string }

const SCAN = LIMITS.listInvoicesScan;

/**
 * LIST_INVOICES (operator): one page of invoices in invoice_id order, filtered by state and machine.
 * Invoices have no state index, so a page reads at most LIMITS.listInvoicesScan records from the
 * cursor on and holds at most `limit`: a sparse filter may return a short (even empty) page with a
 * next_cursor to go on from; next_cursor is null once the end is reached. Reads only: a pending
 * invoice past its expiry is shown expired (it is marked so on its next INVOICE_STATUS or settle).
 */
export async function listInvoices(
  ctx: CoreContext, f: InvoiceFilter,
): Promise<{ invoices: Record<string, unknown>[]; next_cursor: string | null; scanned: number }> {
  const limit = f.limit;
  const nowMs = ctx.now().getTime();
  const invoices: Record<string, unknown>[] = [];
  let scanned = 0;
  let last: string | null = null;
  // the cursor's own record (skipped), the records scanned, and one more to see whether there is more
  const range = { ...(f.cursor !== undefined ? { gte: f.cursor } : {}), limit: SCAN + 2 };
  for await (const [k, v] of ctx.store.entries<InvoiceRecord & Record<string, unknown>>('invoices', range)) {
    if (k === f.cursor) continue;
    if (invoices.length === limit || scanned === SCAN) return { invoices, next_cursor: last, scanned };
    scanned++;
    last = k;
    const inv: InvoiceRecord = v.state === 'pending' && nowMs >= v.expires_ms ? { ...v, state: 'expired' } : v;
    if (f.machine_id !== undefined && inv.machine_id !== f.machine_id) continue;
    if (f.state === 'settled_late' ? !inv.settled_late : f.state !== undefined && inv.state !== f.state) continue;
    invoices.push(invoiceView(inv));
  }
  return { invoices, next_cursor: null, scanned };
}
