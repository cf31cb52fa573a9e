// The caller's money: balances, quotes and their acceptance (the reservation), funding invoices and
// their status. What a replayed request shows of them now is here too (currentView).
import { ServiceError } from '../../errors.ts';
import { UNIT_SCALE, usdString } from '../../protocol/pricing.ts';
import type { Call, Handler, NodeState, Reply } from '../call.ts';
import type { CoreContext } from '../context.ts';
import {
  fundAccount, invoiceView, loadInvoice, refreshInvoice, type FundResult, type InvoiceRecord,
} from '../invoices.ts';
import { acceptQuote, createQuote, findQuote, quoteView, type QuoteRecord } from '../quotes.ts';
import { clientKey } from '../../protocol/rate-limit.ts';

async function balance(ctx: CoreContext, machineId: string): Promise<Reply> {
  const acct = await ctx.ledger.account(machineId);
  return {
    machine_id: machineId,
    available_units: acct.available.toString(),
    reserved_units: acct.reserved.toString(),
    unit_scale: Number(UNIT_SCALE),
    available_svcC: usdString(acct.available),
    reserved_svcC: usdString(acct.reserved),
  };
}

async function accept(ctx: CoreContext, { args, idem }: Call): Promise<Reply> {
  const seal = idem && ((q: QuoteRecord) => idem.seal(quoteView(q)));
  return quoteView(await acceptQuote(ctx, args.quote_id as string, args.machine_id as string, seal));
}

/** A funding invoice as the caller sees it: with the machine token when this call claimed the machine. */
const fundView = (r: FundResult): Reply => (r.machine_token
  ? { ...invoiceView(r.invoice), machine_token: r.machine_token }
  : invoiceView(r.invoice));

async function fund(ctx: CoreContext, { args, auth, client, idem }: Call): Promise<Reply> {
  // the claim-or-authenticate decision is fundAccount's, under the machine lock
  const a = args as { machine_id: string; units: number; network: string; asset: string };
  const sealed = idem && { record: idem.record, seal: (r: FundResult) => idem.seal(fundView(r)) };
  return fundView(await fundAccount(ctx, a, auth?.token, sealed, client === undefined ? undefined : clientKey(client)));
}

async function invoiceStatus(node: NodeState, args: Record<string, unknown>): Promise<Reply> {
  const inv = await loadInvoice(node.ctx, args.invoice_id as string);
  if (inv.machine_id !== args.machine_id) {
    throw new ServiceError('not_found', `no invoice ${args.invoice_id as string} for this machine`);
  }
  const cur = await refreshInvoice(node.ctx, inv);
  const seen = cur.state === 'pending' ? node.watchers?.pendingFor(cur.rail, cur.invoice_id) : undefined;
  return { ...invoiceView(cur), ...(seen ? { payment_seen: seen } : {}) };
}

export const MONEY_COMMANDS: Record<string, Handler> = {
  BALANCE: (n, c) => balance(n.ctx, c.args.machine_id as string),
  QUOTE: async (n, c) => quoteView(await createQuote(n.ctx, c.args)),
  ACCEPT_QUOTE: (n, c) => accept(n.ctx, c),
  FUND_ACCOUNT: (n, c) => fund(n.ctx, c),
  INVOICE_STATUS: (n, c) => invoiceStatus(n, c.args),
};

/** A replay shows the stored reply with the present state of the quote or invoice it names. */
export async function currentView(ctx: CoreContext, command: string, stored: Reply): Promise<Reply> {
  const quoteId = stored.quote_id, machineId = stored.machine_id;
  if ((command === 'QUOTE' || command === 'ACCEPT_QUOTE') && typeof quoteId === 'string'
    && typeof machineId === 'string') {
    const found = await findQuote(ctx, quoteId, machineId).catch(() => null);
    if (found) return { ...stored, ...quoteView(found.q) };
  }
  if (command === 'FUND_ACCOUNT' && typeof stored.invoice_id === 'string') {
    const inv = await ctx.store.get<InvoiceRecord>('invoices', stored.invoice_id);
    if (inv) return { ...stored, ...invoiceView(await refreshInvoice(ctx, inv)) };
  }
  return stored;
}
