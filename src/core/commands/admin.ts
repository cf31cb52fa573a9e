// Operator commands (admin socket only; the core's gate refuses them elsewhere): settlement by hand
// and the unmatched-deposit queue, watcher rescans, the runtime and node key, audit, backup and tokens.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceError } from '../../errors.ts';
import { KernelPool } from '../../kernels/index.ts';
import { argsAs, type Call, type Handler, type Reply } from '../call.ts';
import type { CoreContext } from '../context.ts';
import type { Rail } from '../rails.ts';
import { audit, auditCsv } from '../audit.ts';
import { MANIFEST_FILE, takeBackup } from '../backup.ts';
import {
  claimDeposit, depositView, dismissDeposit, listReorged, listUnmatched, type DepositFilter, type Dismissal,
} from '../deposits.ts';
import { invoiceView, listInvoices, settleInvoice, type InvoiceFilter } from '../invoices.ts';
import { getMachine, newToken, rotateOps } from '../machines.ts';
import { rotateNodeKey } from '../key-rotation.ts';
import { sweepExpired } from '../quotes.ts';
import { requestRescan } from '../watchers/rescan.ts';
import { listDeliveries, resendEvent, type WebhookFilter } from '../webhooks.ts';

/** RECOVER_RUNTIME: a fresh kernel pool, expired reservations released, and the audit's verdict. */
async function recover(ctx: CoreContext): Promise<Reply> {
  const old = ctx.pool;
  ctx.pool = new KernelPool({ threads: ctx.config.kernelThreads });
  await old.close();
  const released = await sweepExpired(ctx);
  // the same check as AUDIT, from one snapshot (the ledger part is its `ledger`)
  const report = await audit(ctx.store, ctx.identity, ctx.now());
  return {
    pool_restarted: true, threads: ctx.pool.threads, released_quotes: released, ledger: report.ledger,
    audit: { clean: report.clean, discrepancies: report.discrepancies },
  };
}

async function backup(ctx: CoreContext, dir: string): Promise<Reply> {
  const m = await takeBackup(ctx.store, ctx.config.dataDir, dir, ctx.identity, ctx.now());
  const manifest_sha256 = createHash('sha256').update(readFileSync(join(dir, MANIFEST_FILE))).digest('hex');
  return { dir, manifest_sha256, ...m };
}

function rotateToken(ctx: CoreContext, m: string): Promise<Reply> {
  return ctx.ledger.withMachine(m, async () => {
    const rec = await getMachine(ctx.store, m);
    if (!rec) throw new ServiceError('not_found', `machine ${m} is not claimed`);
    const token = newToken();
    await ctx.store.write(rotateOps(m, rec, token, ctx.now()));
    return { machine_id: m, machine_token: token, rotated_at: ctx.now().toISOString() };
  });
}

async function dismiss(ctx: CoreContext, { args }: Call): Promise<Reply> {
  const { deposit_id, ...dismissal } = args as { deposit_id: string } & Omit<Dismissal, 'at'>;
  return { deposit: depositView(await dismissDeposit(ctx, deposit_id, dismissal)) };
}

async function claim(ctx: CoreContext, { args }: Call): Promise<Reply> {
  const r = await claimDeposit(ctx, args.deposit_id as string, args.invoice_id as string);
  return { deposit: depositView(r.deposit), invoice: invoiceView(r.invoice) };
}

async function unmatched(ctx: CoreContext, { args }: Call): Promise<Reply> {
  const { deposits, more } = await listUnmatched(ctx, argsAs<DepositFilter>(args));
  return { deposits: deposits.map(depositView), more };
}

async function auditReport(ctx: CoreContext, csv: boolean): Promise<Reply> {
  const report = await audit(ctx.store, ctx.identity, ctx.now());
  return { ...report, ...(csv ? { csv: auditCsv(report) } : {}) };
}

const settle = (mode: 'open' | 'late'): Handler => async (n, { args }) =>
  invoiceView(await settleInvoice(n.ctx, args.invoice_id as string, args.reference as string, mode));

export const ADMIN_COMMANDS: Record<string, Handler> = {
  SETTLE_INVOICE: settle('open'),
  CREDIT_LATE_PAYMENT: settle('late'),
  UNMATCHED: (n, c) => unmatched(n.ctx, c),
  DISMISS: (n, c) => dismiss(n.ctx, c),
  CLAIM: (n, c) => claim(n.ctx, c),
  REORGS: async (n, { args }) =>
    ({ deposits: (await listReorged(n.ctx, args.rail as Rail['rail'] | undefined)).map(depositView) }),
  RESCAN: (n, { args }) => requestRescan(n.ctx, args.rail as Rail['rail'], args.from_block as number),
  WEBHOOKS: async (n, { args }) => ({ ...(await listDeliveries(n.ctx, argsAs<WebhookFilter>(args))) }),
  RESEND_WEBHOOK: async (n, { args }) => ({ ...(await resendEvent(n.ctx, args.event_id as string)) }),
  LIST_INVOICES: (n, { args }) => listInvoices(n.ctx, argsAs<InvoiceFilter>(args)),
  RECOVER_RUNTIME: (n) => recover(n.ctx),
  ROTATE_NODE_KEY: (n) => rotateNodeKey(n.ctx),
  AUDIT: (n, { args }) => auditReport(n.ctx, args.csv === true),
  BACKUP: (n, { args }) => backup(n.ctx, args.dir as string),
  ROTATE_TOKEN: (n, { args }) => rotateToken(n.ctx, args.machine_id as string),
};
