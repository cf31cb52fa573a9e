// Open invoices per client address, across every machine_id: each invoice holds a unique amount on its
// rail (invoices.ts), so without a bound per caller a few addresses opening invoices under fresh
// machine_ids could hold a rail's whole suffix space and leave everyone else `busy`. A record per
// address (clientKey: IPv4, IPv6 /64, or the client behind trusted proxies) lists its invoices until
// they expire; FUND_ACCOUNT refuses a new one past SVC_MAX_OPEN_INVOICES_PER_ADDRESS. Kept in the
// store, so the bound holds across restarts and, on a shared store, across nodes.
import { ServiceError } from '../errors.ts';
import { idPart } from '../store/key-codec.ts';
import { create, replace, type Json, type Op } from '../store/store.ts';
import { DEFAULT_OPEN_INVOICES_PER_ADDRESS } from './config.ts';
import type { CoreContext } from './context.ts';
import { lockTable, type Held } from './lock-order.ts';

/** The invoices of one client address: invoice_id → expires_ms (expired ones are dropped on the next write). */
interface ClientInvoices extends Json { open: Record<string, number> }

const clientLocks = lockTable('client');

/**
 * Check-then-write on one address's record: one FUND_ACCOUNT of that address at a time in a node, under
 * the machine's lock (`outer`).
 */
export const withClient = <T>(ctx: CoreContext, client: string, outer: Held, fn: (held: Held) => Promise<T>) =>
  clientLocks(ctx.store, client, outer, fn);

/**
 * The ops that add `invoiceId` to the client address's open invoices, or a refusal when it holds the
 * most allowed. Call under withClient; the write compares the record read (another node's meanwhile
 * refuses the batch, and the operation runs again).
 */
export async function clientInvoiceOps(
  ctx: CoreContext, client: string, invoiceId: string, expiresMs: number,
): Promise<Op[]> {
  const k = idPart(client);
  const prev = (await ctx.store.get('invoice_clients', k)) as ClientInvoices | undefined;
  const nowMs = ctx.now().getTime();
  const open = Object.fromEntries(Object.entries(prev?.open ?? {}).filter(([, exp]) => exp > nowMs));
  const cap = ctx.config.maxOpenInvoicesPerAddress ?? DEFAULT_OPEN_INVOICES_PER_ADDRESS;
  if (Object.keys(open).length >= cap) {
    const msg = `this client address has ${cap} open invoices (the most allowed, whatever the machine_id): ` +
      'pay one or let one expire first';
    throw new ServiceError('too_many_open_invoices', msg, { open_invoices: cap, per: 'client_address' });
  }
  const next: ClientInvoices = { open: { ...open, [invoiceId]: expiresMs } };
  return [prev ? replace('invoice_clients', k, next, prev) : create('invoice_clients', k, next)];
}
