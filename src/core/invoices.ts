// Funding invoices (DESIGN.md §4): `units` whole svcC on one of the four rails, paid to the rail's
// configured address. The amount due (token base units, 6 decimals, 1 svcC = 1.00 USD reference)
// carries a unique sub-cent suffix among the rail's open invoices so one address can match
// payments to invoices. States: pending → settled (credited exactly once) or expired.
// Settlement comes only from SETTLE_INVOICE (admin) today; chain watchers will feed the same path.
import { randomInt } from 'node:crypto';
import { ServiceError } from '../errors.ts';
import { key } from '../store/key-codec.ts';
import { del, put, type Op } from '../store/store.ts';
import type { Rail } from './config.ts';
import type { CoreContext } from './context.ts';
import { newId } from './ids.ts';
import { UNIT_SCALE } from '../protocol/pricing.ts';
import { claimOps, getMachine, newToken } from './machines.ts';

export type InvoiceState = 'pending' | 'settled' | 'expired';

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
  expired_at?: string;
}

/** Base units per whole token (6 decimals) and the suffix range: 1..9999 base units (< 1 cent). */
const BASE = 1_000_000n;
const SUFFIX_MAX = 9999;

export function invoiceView(inv: InvoiceRecord): Record<string, unknown> {
  const { expires_ms: _e, ...rest } = inv;
  return rest;
}

function decimal(baseUnits: bigint): string {
  return `${baseUnits / BASE}.${(baseUnits % BASE).toString().padStart(6, '0')}`;
}

export function railFor(ctx: CoreContext, network: string, asset: string): Rail {
  const r = ctx.config.rails.find((x) => x.network === network && x.asset === asset);
  if (!r) throw new ServiceError('unsupported_rail', `${asset} on ${network} is not a payment rail (rails: ${ctx.config.rails.map((x) => `${x.asset}/${x.network}`).join(', ')})`);
  return r;
}

export async function loadInvoice(ctx: CoreContext, invoiceId: string): Promise<InvoiceRecord> {
  const inv = (await ctx.store.get('invoices', invoiceId)) as unknown as InvoiceRecord | undefined;
  if (!inv) throw new ServiceError('not_found', `no invoice ${invoiceId}`);
  return inv;
}

/**
 * Creates an invoice. The caller has already authenticated a claimed machine, or `claim` is true
 * and the machine is claimed in the same batch (the token is returned once, here).
 */
export async function createInvoice(ctx: CoreContext, a: { machine_id: string; units: number; network: string; asset: string }, claim: boolean): Promise<{ invoice: InvoiceRecord; machine_token?: string }> {
  const rail = railFor(ctx, a.network, a.asset);
  const now = ctx.now();
  const base = BigInt(a.units) * BASE;
  let amount = 0n;
  for (let tries = 0; ; tries++) {
    if (tries > 50) throw new ServiceError('busy', 'could not allocate a unique amount for this rail; retry');
    amount = base + BigInt(randomInt(1, SUFFIX_MAX + 1));
    const taken = await ctx.store.get('invoice_amounts', key(rail.rail, amount.toString()));
    if (!taken || (taken.expires_ms as number) <= now.getTime()) break;
  }
  const expiresMs = now.getTime() + ctx.config.invoiceTtlMs;
  const inv: InvoiceRecord = {
    invoice_id: newId('inv'), machine_id: a.machine_id, state: 'pending', units: a.units,
    credit_units: (BigInt(a.units) * UNIT_SCALE).toString(),
    rail: rail.rail, network: rail.network, asset: rail.asset, decimals: 6, pay_to: rail.address,
    amount_due: amount.toString(), amount_due_decimal: decimal(amount),
    created_at: now.toISOString(), expires_at: new Date(expiresMs).toISOString(), expires_ms: expiresMs,
  };
  const ops: Op[] = [
    put('invoices', inv.invoice_id, inv as unknown as Record<string, unknown>),
    put('invoice_amounts', key(rail.rail, inv.amount_due), { invoice_id: inv.invoice_id, expires_ms: expiresMs }),
  ];
  let token: string | undefined;
  if (claim) {
    if (await getMachine(ctx.store, a.machine_id)) throw new ServiceError('unauthorized', 'machine_id was claimed concurrently; present its token');
    token = newToken();
    ops.push(...claimOps(a.machine_id, token, now));
  }
  await ctx.store.write(ops);
  return token ? { invoice: inv, machine_token: token } : { invoice: inv };
}

/** Marks a pending invoice past its expiry as expired (lazily, on read). */
export async function refreshInvoice(ctx: CoreContext, inv: InvoiceRecord): Promise<InvoiceRecord> {
  if (inv.state !== 'pending' || ctx.now().getTime() < inv.expires_ms) return inv;
  return ctx.ledger.withMachine(inv.machine_id, async () => {
    const cur = await loadInvoice(ctx, inv.invoice_id);
    if (cur.state !== 'pending' || ctx.now().getTime() < cur.expires_ms) return cur;
    const next: InvoiceRecord = { ...cur, state: 'expired', expired_at: ctx.now().toISOString() };
    await ctx.store.write([put('invoices', cur.invoice_id, next as unknown as Record<string, unknown>), del('invoice_amounts', key(cur.rail, cur.amount_due))]);
    return next;
  });
}

/**
 * SETTLE_INVOICE: credits the invoice's units exactly once, in the same batch as the state
 * change. Settling a settled invoice again returns it unchanged (no second credit).
 */
export async function settleInvoice(ctx: CoreContext, invoiceId: string, reference: string): Promise<InvoiceRecord> {
  const first = await loadInvoice(ctx, invoiceId);
  return ctx.ledger.withMachine(first.machine_id, async () => {
    const inv = await loadInvoice(ctx, invoiceId);
    if (inv.state === 'settled') return inv;
    if (inv.state === 'expired' || ctx.now().getTime() >= inv.expires_ms) {
      throw new ServiceError('invoice_expired', `invoice expired at ${inv.expires_at}; it cannot be settled (issue a new invoice)`);
    }
    const now = ctx.now();
    const acct = await ctx.ledger.account(inv.machine_id);
    const { ops } = ctx.ledger.change(inv.machine_id, acct, 'credit', BigInt(inv.credit_units), 0n, { invoice_id: inv.invoice_id, reference }, now);
    const next: InvoiceRecord = { ...inv, state: 'settled', settled_at: now.toISOString(), settlement_reference: reference };
    await ctx.store.write([
      put('invoices', inv.invoice_id, next as unknown as Record<string, unknown>),
      del('invoice_amounts', key(inv.rail, inv.amount_due)),
      ...ops,
    ]);
    return next;
  });
}
