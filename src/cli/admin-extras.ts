// What some svc-admin subcommands do beyond sending their registry args: paths resolved on the operator's
// side (svcd's working directory is not theirs), CSV files written from the AUDIT reply, and exit 1
// when a check found discrepancies. The subcommands themselves are still derived from the registry.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';

export interface AdminExtra {
  /** required args given positionally, besides the *_id ones */
  positional?: readonly string[];
  /** options of the CLI's own (not sent to svcd as they are) */
  options?(sub: Command): void;
  /** registry args no flag is derived for: `prepare` sets them from the CLI's own options */
  derived?: readonly string[];
  /** adjusts the args before they are sent */
  prepare?(args: Record<string, unknown>, opts: Record<string, unknown>): void;
  /** handles the reply before it is printed; returns what to print */
  after?(reply: Record<string, unknown>, opts: Record<string, unknown>): Record<string, unknown>;
}

/** A reply that reports a failed check: the audit's own, or RECOVER_RUNTIME's (`audit`, `ledger`). */
export function reportsDiscrepancies(reply: Record<string, unknown>): boolean {
  const nested = (k: string) => (reply[k] as { clean?: unknown; ok?: unknown } | undefined);
  return reply.clean === false || nested('audit')?.clean === false || nested('ledger')?.ok === false;
}

export const ADMIN_EXTRAS: Readonly<Record<string, AdminExtra>> = {
  BACKUP: {
    positional: ['dir'],
    prepare: (args) => { args.dir = resolve(args.dir as string); },
  },
  AUDIT: {
    derived: ['csv'],
    options: (sub) => {
      sub.option('--csv <dir>', 'also write machines.csv, periods.csv, invoices.csv, discrepancies.csv to <dir>');
    },
    prepare: (args, opts) => { if (opts.csv !== undefined) args.csv = true; },
    after: (reply, opts) => {
      const { csv, ...rest } = reply;
      if (opts.csv === undefined || !csv) return rest;
      const dir = resolve(opts.csv as string);
      mkdirSync(dir, { recursive: true });
      for (const [name, text] of Object.entries(csv as Record<string, string>)) {
        // names come from svcd's fixed list; basename-only names keep them inside dir
        if (!/^[a-z-]+\.csv$/.test(name)) continue;
        writeFileSync(join(dir, name), text);
      }
      return { ...rest, csv_dir: dir };
    },
  },
};
