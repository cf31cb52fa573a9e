// The money audit: the ledger invariant, every account recomputed from its journal, totals
// per rail and day, invoices by state, and receipts ↔ captures ↔ executed quotes (and holds ↔ accepted
// quotes) and chain deposits ↔ the invoices they settled cross-checked. Reads a Store only, so it
// runs alike in svcd (AUDIT, RECOVER_RUNTIME), on a stopped data dir (`svcd audit`) and on a backup
// being restored. Builds CSV text; writes no files.
import { idFromPart } from '../store/key-codec.ts';
import type { Store, StoreSnapshot } from '../store/store.ts';
import { Ledger, type JournalEntry, type LedgerCheck } from './ledger.ts';
import type { DepositRecord } from './deposits.ts';
import { UNITS_PER_BASE_UNIT, storedReference, type InvoiceRecord } from './invoices.ts';
import type { NodeIdentity } from './node-identity.ts';
import type { QuoteRecord } from './quotes.ts';
import { allSignerKeys, verifyReceipt, type SignedReceipt } from './receipts.ts';
import { auditX402, type X402Credits, type X402Row } from './x402/audit.ts';
import type { X402Payment } from './x402/payments.ts';

export interface MachineRow {
  machine_id: string;
  available_units: string;
  reserved_units: string;
  journal_available_units: string;
  journal_reserved_units: string;
  entries: number;
  credited_units: string;
  spent_units: string;
}

/** Money moved on one UTC day. Units are one pool per machine: holds and spends carry no rail (`*`). */
export interface PeriodRow {
  day: string;
  rail: string;
  credited_units: string;
  reserved_units: string;
  released_units: string;
  spent_units: string;
}

export interface InvoiceRow { state: string; rail: string; count: number; credit_units: string }

/** Chain deposits by state and rail: what arrived (token base units), credited or not. */
export interface DepositRow { state: string; rail: string; count: number; amount: string }
/** A deposit reorged out after it was recorded (and, if credited, the invoice it credited). */
export interface ReorgedRow {
  deposit_id: string; rail: string; amount: string; state: string; invoice_id: string; at: string;
}
/** A deposit the operator dismissed: received, never credited (refunded or written off). */
export interface DismissedRow {
  deposit_id: string; rail: string; amount: string; outcome: string; note: string; at: string; refund_reference: string;
}

export interface AuditReport {
  format: 'svc_audit_v1';
  generated_at: string;
  /** true when nothing below is a discrepancy */
  clean: boolean;
  discrepancies: string[];
  ledger: LedgerCheck;
  totals: {
    credited_units: string; spent_units: string; held_units: string; available_units: string;
    receipts: number; captures: number; executed_quotes: number; accepted_quotes: number;
  };
  machines: MachineRow[];
  periods: PeriodRow[];
  invoices: InvoiceRow[];
  /** chain deposits by state: money received, credited on sight, claimed, waiting or dismissed */
  deposits: DepositRow[];
  dismissed: DismissedRow[];
  /** deposits a watcher saw reorged out after recording them: their credits stand, each to be checked */
  reorged: ReorgedRow[];
  /** x402 payments by state and network (docs/x402.md) */
  x402: X402Row[];
}

const add = (m: Map<string, bigint>, k: string, v: bigint) => m.set(k, (m.get(k) ?? 0n) + v);

interface Sums { a: bigint; r: bigint; n: number; credited: bigint; spent: bigint }

/**
 * Audits the store. `identity`, when given, also checks every receipt's signature (a restored node
 * must verify what the old one issued). Holds the journal's references in memory: O(journal) space.
 */
export async function audit(store: Store, identity?: NodeIdentity, now = new Date()): Promise<AuditReport> {
  // one snapshot for every read: svcd keeps writing while it audits itself
  const snapshot = await store.snapshot();
  try {
    return await auditAt(store, snapshot, identity, now);
  } finally {
    await snapshot.close();
  }
}

async function auditAt(
  store: Store, snapshot: StoreSnapshot, identity: NodeIdentity | undefined, now: Date,
): Promise<AuditReport> {
  const at = { snapshot };
  // with an identity, every receipt's signature: by this node's keys, or those its signer published
  const signers = identity ? await allSignerKeys(store, identity, at) : null;
  const problems: string[] = [];
  const ledger = await new Ledger(store).verify(snapshot);
  problems.push(...ledger.problems.map((p) => `ledger: ${p}`));

  const invoices = new Map<string, InvoiceRecord>();
  for await (const [, v] of store.entries<InvoiceRecord>('invoices', at)) {
    const inv = v;
    invoices.set(inv.invoice_id, inv);
  }

  // the journal, once: per machine sums, per day and rail totals, and what each entry names
  const sums = new Map<string, Sums>();
  const periods = new Map<string, Map<string, bigint>>();
  const credits = new Map<string, { units: bigint; n: number }>();
  const x402Credits: X402Credits = new Map();
  const captures = new Map<string, { quote_id: string; units: bigint; machine: string }>();
  const holds = new Map<string, { machine: string; reserved: bigint; ended: number }>();
  for await (const [k, v] of store.entries<JournalEntry>('journal', at)) {
    const machine = idFromPart(k.split('!')[0]!);
    const e = v;
    const dA = BigInt(e.d_available), dR = BigInt(e.d_reserved);
    const s = sums.get(machine) ?? { a: 0n, r: 0n, n: 0, credited: 0n, spent: 0n };
    s.a += dA; s.r += dR; s.n++;
    sums.set(machine, s);
    const where = `${machine} journal #${e.seq}`;
    let rail = '*';
    if (e.kind === 'credit') {
      s.credited += dA;
      const inv = e.ref.invoice_id ? invoices.get(e.ref.invoice_id) : undefined;
      rail = inv?.rail ?? e.ref.rail ?? '?';
      if (!e.ref.invoice_id && !e.ref.rail) problems.push(`credit: ${where} names no invoice`);
      if (e.ref.x402) {
        const c = x402Credits.get(e.ref.x402);
        x402Credits.set(e.ref.x402, { units: (c?.units ?? 0n) + dA, n: (c?.n ?? 0) + 1, where });
      }
      if (e.ref.invoice_id) {
        const c = credits.get(e.ref.invoice_id) ?? { units: 0n, n: 0 };
        credits.set(e.ref.invoice_id, { units: c.units + dA, n: c.n + 1 });
        if (!inv) problems.push(`credit: ${where} names invoice ${e.ref.invoice_id}, which does not exist`);
      }
    } else if (e.kind === 'capture') {
      s.spent -= dR;
      const rid = e.ref.receipt_id;
      if (!rid) problems.push(`capture: ${where} names no receipt`);
      else if (captures.has(rid)) problems.push(`capture: receipt ${rid} is captured twice`);
      else captures.set(rid, { quote_id: e.ref.quote_id ?? '', units: -dR, machine });
    }
    if (e.kind === 'reserve' || e.kind === 'release' || e.kind === 'capture') {
      const qid = e.ref.quote_id ?? '';
      const h = holds.get(qid) ?? { machine, reserved: 0n, ended: 0 };
      h.reserved += dR;
      if (e.kind !== 'reserve') h.ended++;
      holds.set(qid, h);
    }
    const day = e.at.slice(0, 10);
    const row = periods.get(`${day}|${rail}`) ?? new Map<string, bigint>();
    if (e.kind === 'credit') add(row, 'credited', dA);
    if (e.kind === 'reserve') add(row, 'reserved', dR);
    if (e.kind === 'release') add(row, 'released', -dR);
    if (e.kind === 'capture') add(row, 'spent', -dR);
    periods.set(`${day}|${rail}`, row);
  }

  // chain deposits: one credited (on sight or claimed) settled its invoice, which names it back
  const deposits = new Map<string, DepositRecord>();
  for await (const [, v] of store.entries<DepositRecord>('deposits', at)) {
    const d = v;
    deposits.set(d.deposit_id, d);
    if (d.state === 'unmatched' || d.state === 'dismissed') continue;
    const inv = d.invoice_id ? invoices.get(d.invoice_id) : undefined;
    if (!inv || inv.state !== 'settled' || inv.deposit_id !== d.deposit_id) {
      const which = `${d.deposit_id} is ${d.state} to invoice ${String(d.invoice_id)}`;
      problems.push(`deposit: ${which}, which does not name it`);
    }
  }

  // invoices: a settled one was credited exactly once, with its credit_units (a chain deposit's
  // invoice: the amount that arrived, which a claim may take for an over- or underpayment); nothing
  // else was credited
  const byState = new Map<string, { count: number; units: bigint }>();
  // one payment reference credits one invoice, in any spelling (settlement_refs holds each in its
  // canonical one; an older ledger may hold a pair, which this names)
  const byReference = new Map<string, string>();
  for (const inv of invoices.values()) {
    if (inv.state === 'settled' && inv.settlement_reference !== undefined) {
      const canonical = await storedReference(store, inv.rail, inv.settlement_reference);
      const first = byReference.get(canonical);
      if (first === undefined) byReference.set(canonical, inv.invoice_id);
      else {
        const ref = JSON.stringify(inv.settlement_reference);
        problems.push(`invoice: ${first} and ${inv.invoice_id} were both settled with payment reference ${ref}`);
      }
    }
    const state = inv.state === 'settled' && inv.settled_late ? 'settled_late' : inv.state;
    const k = `${state}|${inv.rail}`;
    const b = byState.get(k) ?? { count: 0, units: 0n };
    byState.set(k, { count: b.count + 1, units: b.units + BigInt(inv.credit_units) });
    const c = credits.get(inv.invoice_id);
    if (inv.state === 'settled') {
      const dep = inv.deposit_id === undefined ? undefined : deposits.get(inv.deposit_id);
      const due = dep ? BigInt(dep.amount) * UNITS_PER_BASE_UNIT : BigInt(inv.credit_units);
      const what = dep ? `deposit ${dep.deposit_id} paid ${due}` : `credit_units ${inv.credit_units}`;
      if (inv.deposit_id !== undefined && (!dep || dep.invoice_id !== inv.invoice_id)) {
        problems.push(`invoice: ${inv.invoice_id} names deposit ${inv.deposit_id}, which does not name it`);
      }
      if (!c) problems.push(`invoice: ${inv.invoice_id} is settled but was never credited`);
      else if (c.n !== 1) problems.push(`invoice: ${inv.invoice_id} was credited ${c.n} times`);
      else if (c.units !== due) problems.push(`invoice: ${inv.invoice_id} ${what} but credited ${c.units}`);
    } else if (c) {
      problems.push(`invoice: ${inv.invoice_id} is ${inv.state} but was credited ${c.units}`);
    }
  }

  const payments: X402Payment[] = [];
  for await (const [, v] of store.entries<X402Payment>('x402_payments', at)) payments.push(v);
  const x402 = auditX402(payments, x402Credits);
  problems.push(...x402.problems);

  // receipts ↔ captures ↔ executed quotes
  const quotes = new Map<string, QuoteRecord>();
  for await (const [, v] of store.entries<QuoteRecord>('quotes', at)) {
    const q = v;
    quotes.set(q.quote_id, q);
  }
  let receipts = 0;
  const receiptIds = new Set<string>();
  for await (const [k, v] of store.entries<SignedReceipt>('receipts', at)) {
    receipts++;
    receiptIds.add(k);
    const r = v;
    const body = r.receipt;
    const cap = captures.get(k);
    if (!cap) problems.push(`receipt: ${k} has no capture in the journal`);
    else {
      if (cap.quote_id !== body.quote_id) {
        problems.push(`receipt: ${k} is for quote ${body.quote_id} but its capture names ${cap.quote_id}`);
      }
      if (cap.units !== BigInt(body.units_charged)) {
        problems.push(`receipt: ${k} charged ${body.units_charged} but its capture took ${cap.units}`);
      }
      if (cap.machine !== body.machine_id) {
        problems.push(`receipt: ${k} is ${body.machine_id}'s, captured from ${cap.machine}`);
      }
    }
    const q = quotes.get(body.quote_id);
    if (!q || q.state !== 'executed' || q.receipt_id !== k) {
      problems.push(`receipt: ${k} has no executed quote ${body.quote_id} naming it`);
    }
    if (signers) {
      const check = verifyReceipt(signers.get(body.node_id as string), r);
      if (!check.valid) problems.push(`receipt: ${k} does not verify (${check.reason ?? 'invalid'})`);
    }
  }
  for (const [rid, cap] of captures) {
    if (!receiptIds.has(rid)) {
      problems.push(`capture: ${cap.machine} captured ${cap.units} for receipt ${rid}, which does not exist`);
    }
  }
  let executed = 0, accepted = 0;
  for (const q of quotes.values()) {
    if (q.state === 'executed') {
      executed++;
      if (!q.receipt_id || !receiptIds.has(q.receipt_id)) {
        problems.push(`quote: ${q.quote_id} is executed but its receipt ${String(q.receipt_id)} does not exist`);
      }
    }
    const h = holds.get(q.quote_id);
    if (q.state === 'accepted') {
      accepted++;
      if (!h || h.reserved !== BigInt(q.quote_units)) {
        problems.push(`quote: ${q.quote_id} is accepted but ${h?.reserved ?? 0n} units are held for it`);
      }
    }
  }
  // a hold still open must belong to an accepted quote; ended holds must end exactly once
  for (const [qid, h] of holds) {
    if (h.ended > 1) problems.push(`hold: quote ${qid} was released or captured ${h.ended} times`);
    if (h.reserved !== 0n && quotes.get(qid)?.state !== 'accepted') {
      problems.push(`hold: ${h.machine} holds ${h.reserved} units for quote ${qid}, which is not accepted`);
    }
  }

  const machines: MachineRow[] = [];
  let held = 0n, available = 0n, credited = 0n, spent = 0n;
  for await (const [m, v] of store.entries('accounts', at)) {
    const id = idFromPart(m);
    const s = sums.get(id) ?? { a: 0n, r: 0n, n: 0, credited: 0n, spent: 0n };
    held += BigInt(v.reserved as string);
    available += BigInt(v.available as string);
    machines.push({
      machine_id: id, available_units: v.available as string, reserved_units: v.reserved as string,
      journal_available_units: s.a.toString(), journal_reserved_units: s.r.toString(), entries: s.n,
      credited_units: s.credited.toString(), spent_units: s.spent.toString(),
    });
  }
  for (const s of sums.values()) { credited += s.credited; spent += s.spent; }

  const periodRows: PeriodRow[] = [...periods].map(([k, row]) => {
    const [day, rail] = k.split('|') as [string, string];
    const u = (n: string) => (row.get(n) ?? 0n).toString();
    return {
      day, rail, credited_units: u('credited'), reserved_units: u('reserved'), released_units: u('released'),
      spent_units: u('spent'),
    };
  }).sort((a, b) => (a.day + a.rail < b.day + b.rail ? -1 : 1));
  const invoiceRows: InvoiceRow[] = [...byState].map(([k, b]) => {
    const [state, rail] = k.split('|') as [string, string];
    return { state, rail, count: b.count, credit_units: b.units.toString() };
  }).sort((a, b) => (a.state + a.rail < b.state + b.rail ? -1 : 1));

  return {
    format: 'svc_audit_v1', generated_at: now.toISOString(), clean: problems.length === 0, discrepancies: problems,
    ledger,
    totals: {
      credited_units: credited.toString(), spent_units: spent.toString(), held_units: held.toString(),
      available_units: available.toString(), receipts, captures: captures.size, executed_quotes: executed,
      accepted_quotes: accepted,
    },
    machines, periods: periodRows, invoices: invoiceRows, ...depositRows(deposits.values()), x402: x402.rows,
  };
}

/** The deposits section: totals by state and rail, and every dismissal with its note. */
function depositRows(
  all: Iterable<DepositRecord>,
): { deposits: DepositRow[]; dismissed: DismissedRow[]; reorged: ReorgedRow[] } {
  const by = new Map<string, { count: number; amount: bigint }>();
  const dismissed: DismissedRow[] = [];
  const reorged: ReorgedRow[] = [];
  for (const d of all) {
    if (d.reorged_at) {
      const { deposit_id, rail, amount, state } = d;
      reorged.push({ deposit_id, rail, amount, state, invoice_id: d.invoice_id ?? '', at: d.reorged_at });
    }
    const k = `${d.state}|${d.rail}`;
    const b = by.get(k) ?? { count: 0, amount: 0n };
    by.set(k, { count: b.count + 1, amount: b.amount + BigInt(d.amount) });
    if (d.state !== 'dismissed' || !d.dismissal) continue;
    const { outcome, note, at, refund_reference } = d.dismissal;
    dismissed.push({
      deposit_id: d.deposit_id, rail: d.rail, amount: d.amount, outcome, note, at,
      refund_reference: refund_reference ?? '',
    });
  }
  const deposits = [...by].map(([k, b]) => {
    const [state, rail] = k.split('|') as [string, string];
    return { state, rail, count: b.count, amount: b.amount.toString() };
  }).sort((a, b) => (a.state + a.rail < b.state + b.rail ? -1 : 1));
  return { deposits, dismissed, reorged };
}

/** One CSV field (RFC 4180): quoted when it holds a comma, quote or line break; a leading =+-@ is defused. */
function field(v: unknown): string {
  let s = String(v);
  // a spreadsheet would run a cell starting with = + - @ as a formula (machine_ids are anyone's text)
  if (/^[=+\-@]/.test(s) && !/^-?\d+$/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function table<T extends object>(rows: readonly T[], columns: readonly (keyof T & string)[]): string {
  const lines = [columns.join(','), ...rows.map((r) => columns.map((c) => field(r[c])).join(','))];
  return lines.join('\r\n') + '\r\n';
}

/** The report as CSV files an accountant can open: file name → text (CRLF lines, header row). */
export function auditCsv(r: AuditReport): Record<string, string> {
  return {
    'machines.csv': table(r.machines, [
      'machine_id', 'available_units', 'reserved_units', 'journal_available_units', 'journal_reserved_units',
      'entries', 'credited_units', 'spent_units',
    ]),
    'periods.csv': table(r.periods, [
      'day', 'rail', 'credited_units', 'reserved_units', 'released_units', 'spent_units',
    ]),
    'invoices.csv': table(r.invoices, ['state', 'rail', 'count', 'credit_units']),
    'x402.csv': table(r.x402, ['state', 'network', 'count', 'amount']),
    'discrepancies.csv': table(r.discrepancies.map((d) => ({ discrepancy: d })), ['discrepancy']),
  };
}
