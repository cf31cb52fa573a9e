// svc-admin — the operator tool: the two admin commands (SETTLE_INVOICE, RECOVER_RUNTIME), token
// rotation and crediting a late payment, over the admin unix socket in the data dir (mode 0600:
// only the service's user reaches it). Not part of the public client kit.
import { join, resolve } from 'node:path';
import { Command, CommanderError } from 'commander';
import { SvcClient } from '../client/client.ts';
import { EXIT, render, reportError } from './output.ts';

interface Globals { dataDir: string; json?: boolean }

export async function main(argv: string[]): Promise<number> {
  let code = EXIT.ok as number;
  const program = new Command('svc-admin')
    .description('svc operator tool: admin commands over the admin socket (<data-dir>/admin.sock)')
    .option('--data-dir <dir>', 'svcd data dir (or SVC_DATA_DIR)', process.env.SVC_DATA_DIR ?? './data')
    .option('--json', 'machine-readable JSON output')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', '\nExit codes: 0 ok, 1 the service said no, 2 usage, 3 cannot reach the admin socket.');
  const g = () => program.opts<Globals>();
  const run = async (cmd: string, args: Record<string, unknown>) => {
    try {
      const client = await SvcClient.connect({ kind: 'unix', path: join(resolve(g().dataDir), 'admin.sock') });
      try { console.log(render(await client.request(cmd, args), g().json === true)); } finally { client.close(); }
    } catch (e) {
      code = reportError(e, g().json === true);
    }
  };
  program.command('settle-invoice')
    .description('administrative settlement: credit a paid, unexpired invoice exactly once (SETTLE_INVOICE); '
      + 'the same reference again is a no-op, another reference is refused')
    .argument('<invoice_id>').requiredOption('--reference <ref>', 'payment reference (transaction id)')
    .action((id: string, o: { reference: string }) => run('SETTLE_INVOICE', {
      invoice_id: id, reference: o.reference,
    }));
  program.command('credit-late-payment')
    .description('credit a payment that arrived after its invoice expired, once (CREDIT_LATE_PAYMENT); '
      + 'check first that the payment was meant for this invoice: its amount may since belong to a newer one')
    .argument('<invoice_id>').requiredOption('--reference <ref>', 'payment reference (transaction id)')
    .action((id: string, o: { reference: string }) => run('CREDIT_LATE_PAYMENT', {
      invoice_id: id, reference: o.reference,
    }));
  program.command('recover-runtime')
    .description('restart the kernel pool, release expired reservations, verify the ledger (RECOVER_RUNTIME)')
    .action(() => run('RECOVER_RUNTIME', {}));
  program.command('rotate-token').description('issue a new machine token; the old one stops working')
    .argument('<machine_id>')
    .action((id: string) => run('ROTATE_TOKEN', { machine_id: id }));
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
