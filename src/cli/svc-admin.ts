// svc-admin — the operator tool: every admin command of the registry (SETTLE_INVOICE,
// RECOVER_RUNTIME, ROTATE_TOKEN, CREDIT_LATE_PAYMENT, BACKUP, AUDIT) as a subcommand, over the admin
// unix socket in the data dir (mode 0600: only the service's user reaches it). Not part of the public
// client kit.
import { join, resolve } from 'node:path';
import { Command, CommanderError } from 'commander';
import { SvcClient } from '../client/client.ts';
import { ALL_COMMANDS } from '../protocol/registry.ts';
import type { Schema } from '../protocol/schemas.ts';
import { EXIT, render, reportError } from './output.ts';
import { ADMIN_EXTRAS, reportsDiscrepancies } from './admin-extras.ts';

interface Globals { dataDir: string; json?: boolean }

const kebab = (name: string) => name.toLowerCase().replace(/_/g, '-');
const camel = (name: string) => name.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase());

/** What an operator should know beyond the registry's one-line purpose. */
const NOTES: Record<string, string> = {
  SETTLE_INVOICE: 'administrative settlement: credit a paid, unexpired invoice exactly once (SETTLE_INVOICE); '
    + 'the same reference again is a no-op, another reference is refused',
  CREDIT_LATE_PAYMENT: 'credit a payment that arrived after its invoice expired, once (CREDIT_LATE_PAYMENT); '
    + 'check first that the payment was meant for this invoice: its amount may since belong to a newer one',
  RECOVER_RUNTIME: 'restart the kernel pool, release expired reservations, verify the ledger (RECOVER_RUNTIME)',
  ROTATE_TOKEN: 'issue a new machine token; the old one stops working (ROTATE_TOKEN)',
  BACKUP: 'copy the ledger (one consistent snapshot, while svcd serves) and the key files to <dir>, a new '
    + 'or empty dir on svcd\'s host, with backup-manifest.json; restore with `svcd restore <dir> <data dir>`',
  AUDIT: 'audit the money: ledger invariant, balances from the journal, totals per rail and day, invoices by '
    + 'state, receipts/captures/executed quotes cross-checked; exit 1 on any discrepancy (--json, --csv <dir>)',
};

export async function main(argv: string[]): Promise<number> {
  let code = EXIT.ok as number;
  const program = new Command('svc-admin')
    .description('svc operator tool: admin commands over the admin socket (<data-dir>/admin.sock)')
    .option('--data-dir <dir>', 'svcd data dir (or SVC_DATA_DIR)', process.env.SVC_DATA_DIR ?? './data')
    .option('--json', 'machine-readable JSON output')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', '\nExit codes: 0 ok, 1 the service said no, 2 usage, 3 cannot reach the admin socket.');
  const g = () => program.opts<Globals>();
  const run = async (cmd: string, args: Record<string, unknown>, after = (r: Record<string, unknown>) => r) => {
    try {
      const client = await SvcClient.connect({ kind: 'unix', path: join(resolve(g().dataDir), 'admin.sock') });
      try {
        const reply = await client.request(cmd, args);
        console.log(render(after(reply), g().json === true));
        if (reportsDiscrepancies(reply)) code = EXIT.refused;
      } finally { client.close(); }
    } catch (e) {
      code = reportError(e, g().json === true);
    }
  };
  // one subcommand per admin command of the registry: its *_id arguments positional, the rest options
  for (const spec of ALL_COMMANDS.filter((c) => c.auth === 'admin')) {
    const props = (spec.args.properties ?? {}) as Record<string, Schema>;
    const required = (spec.args.required ?? []) as string[];
    const extra = ADMIN_EXTRAS[spec.name] ?? {};
    const positional = required.filter((a) => a.endsWith('_id') || extra.positional?.includes(a));
    const options = required.filter((a) => !positional.includes(a));
    const sub = program.command(kebab(spec.name)).description(NOTES[spec.name] ?? spec.purpose);
    for (const a of positional) sub.argument(`<${a}>`);
    for (const o of options) sub.requiredOption(`--${kebab(o)} <${o}>`, props[o]?.description as string ?? o);
    extra.options?.(sub);
    sub.action((...given: unknown[]) => {
      const opts = given[positional.length] as Record<string, unknown>;
      const args: Record<string, unknown> = Object.fromEntries(positional.map((a, k) => [a, given[k]]));
      for (const o of options) args[o] = opts[camel(o)];
      extra.prepare?.(args, opts);
      return run(spec.name, args, extra.after && ((r) => extra.after!(r, opts)));
    });
  }
  // subcommands copy settings when created, so each needs its own override: a usage error in a
  // subcommand (a missing required option) is exit 2, not commander's process.exit(1)
  for (const c of [program, ...program.commands]) c.exitOverride();
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      return e.code === 'commander.helpDisplayed' || e.code === 'commander.help' ? EXIT.ok : EXIT.usage;
    }
    return reportError(e, false);
  }
  return code;
}
