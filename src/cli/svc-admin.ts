// svc-admin — the operator tool: every admin command of the registry (SETTLE_INVOICE,
// RECOVER_RUNTIME, ROTATE_TOKEN, CREDIT_LATE_PAYMENT, LIST_INVOICES, UNMATCHED, CLAIM, DISMISS, REORGS, RESCAN,
// BACKUP, AUDIT, ROTATE_NODE_KEY) as a subcommand, over the admin unix socket in the data dir (mode 0600:
// only the service's user reaches it). Its arguments, their choices and the help examples come from the command's
// schema; admin-extras.ts adds what a few need beyond it. Not part of the public client kit.
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { SvcClient } from '../client/client.ts';
import { ALL_COMMANDS, type CommandSpec } from '../protocol/registry.ts';
import type { Schema } from '../protocol/schemas.ts';
import { examples, nonNegativeInt, runCli, type Run } from './conventions.ts';
import { EXIT, render } from './output.ts';
import { ADMIN_EXTRAS, reportsDiscrepancies } from './admin-extras.ts';

interface Globals { dataDir: string; json?: boolean }

const kebab = (name: string) => name.toLowerCase().replace(/_/g, '-');
const camel = (name: string) => name.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase());

/** What an operator should know beyond the registry's one-line purpose. */
const NOTES: Record<string, string> = {
  SETTLE_INVOICE: 'administrative settlement: credit a paid, unexpired invoice exactly once (SETTLE_INVOICE); '
    + 'the same reference again is a no-op, another reference is refused (409 invoice_already_settled)',
  CREDIT_LATE_PAYMENT: 'credit a payment that arrived after its invoice expired, once (CREDIT_LATE_PAYMENT); '
    + 'check first that the payment was meant for this invoice: its amount may since belong to a newer one',
  RECOVER_RUNTIME: 'restart the kernel pool, release expired reservations, verify the ledger (RECOVER_RUNTIME)',
  ROTATE_TOKEN: 'issue a new machine token; the old one stops working (ROTATE_TOKEN)',
  LIST_INVOICES: 'list invoices, filtered by state and machine_id, a page at a time (LIST_INVOICES)',
  UNMATCHED: 'chain deposits no invoice took, oldest first, as a table (UNMATCHED): why each waits (--reason), the '
    + 'invoice it concerns, the transfer; --state claimed|dismissed|credited lists those instead',
  REORGS: 'deposits a watcher saw reorged out after it recorded them (REORGS): their credits stand; check each '
    + 'transfer on the chain (re-included under a new transaction?) and settle the difference with its payer',
  RESCAN: 'have the rail\'s watcher read its chain again from --from-block (Solana: a slot) on its next pass '
    + '(RESCAN): for payments made before its FROM_BLOCK or missed in an outage; recording is idempotent, so '
    + 'nothing credits twice',
  CLAIM: 'credit a queued deposit to an invoice of its rail, once, for the amount it paid (CLAIM)',
  DISMISS: 'take a queued deposit out of the queue without a credit: refunded to its payer or written off, with a '
    + 'note (DISMISS); final: it can never be claimed',
  BACKUP: 'copy the ledger (one consistent snapshot, while svcd serves) and the key files to <dir>, a new '
    + 'or empty dir on svcd\'s host, with backup-manifest.json; restore with `svcd restore <dir> <data dir>`',
  ROTATE_NODE_KEY: 'replace the node signing, result-tag and BCT keys (ROTATE_NODE_KEY): new receipts, pulses '
    + 'and checkpoints use the new key; the retired keys stay published with their validity windows, so what '
    + 'they signed still verifies. Then run `svcd manifest` and republish its DNS TXT record',
  AUDIT: 'audit the money: ledger invariant, balances from the journal, totals per rail and day, invoices by '
    + 'state, receipts/captures/executed quotes cross-checked; exit 1 on any discrepancy (--json, --csv <dir>)',
};

/** Example values for the arguments the admin commands take. */
const SAMPLE: Record<string, string> = {
  invoice_id: 'inv_…', machine_id: 'my-agent', reference: '<tx-hash>:<log-index>', limit: '50',
  cursor: '<next_cursor>', deposit_id: 'dep_…', note: '"refunded to the sender"',
  refund_reference: '<tx-hash>:<index>',
};

/** One line per invoice, for LIST_INVOICES without --json. */
function invoiceTable(r: Record<string, unknown>): string {
  const rows = (r.invoices as Record<string, unknown>[]).map((i) => [
    i.invoice_id, `${String(i.state)}${i.settled_late ? ' (late)' : ''}`, `${String(i.units)} svcC`,
    `${String(i.asset)}/${String(i.network)}`, i.machine_id, i.created_at,
    i.settlement_reference === undefined ? '' : `ref ${String(i.settlement_reference)}`,
  ].map(String).filter((x) => x !== '').join('  '));
  const next = r.next_cursor === null ? '(end)' : `next page: --cursor ${String(r.next_cursor)}`;
  return [...rows, `${rows.length} invoice(s), ${String(r.scanned)} read; ${next}`].join('\n');
}
/** UNMATCHED without --json: a table, one deposit a row, the columns an operator acts on. */
function depositTable(r: Record<string, unknown>): string {
  const deposits = r.deposits as Record<string, unknown>[];
  const cell = (v: unknown) => (v === undefined || v === null ? '-' : String(v));
  const rows = deposits.map((d) => [
    d.deposit_id, d.state, d.reason, d.rail, d.amount_decimal, d.block_time ?? d.seen_at,
    d.invoice_id ?? d.nearest_invoice_id, `${cell(d.tx_id)}:${cell(d.log_index)}`,
  ].map(cell));
  const head = ['DEPOSIT', 'STATE', 'REASON', 'RAIL', 'AMOUNT', 'PAID AT', 'INVOICE', 'TRANSFER'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  const more = r.more ? ' (more: narrow with --rail, --reason, or raise --limit)' : '';
  return [line(head), ...rows.map(line), `${rows.length} deposit(s)${more}`].join('\n');
}

const TEXT: Record<string, (r: Record<string, unknown>) => string> = {
  LIST_INVOICES: invoiceTable, UNMATCHED: depositTable, REORGS: depositTable,
};

/** The command line a spec's arguments make: *_id arguments it requires positional, the rest flags. */
function argsOf(spec: CommandSpec) {
  const props = (spec.args.properties ?? {}) as Record<string, Schema>;
  const required = (spec.args.required ?? []) as string[];
  const extra = ADMIN_EXTRAS[spec.name] ?? {};
  const positional = required.filter((a) => a.endsWith('_id') || extra.positional?.includes(a));
  const flags = Object.keys(props).filter((a) => !positional.includes(a) && !extra.derived?.includes(a));
  return { props, required, positional, flags };
}

function exampleLines(spec: CommandSpec): [string, string?][] {
  const { props, required, positional, flags } = argsOf(spec);
  const sample = (a: string) => (props[a]?.enum as string[] | undefined)?.[1] ?? SAMPLE[a] ?? `<${a}>`;
  const flag = (a: string) => ` --${kebab(a)} ${sample(a)}`;
  const base = `svc-admin ${kebab(spec.name)}${positional.map((a) => ` ${SAMPLE[a] ?? `<${a}>`}`).join('')}`
    + flags.filter((a) => required.includes(a)).map(flag).join('');
  const optional = flags.filter((a) => !required.includes(a));
  return [
    [base],
    ...(optional.length ? [[`${base}${optional.filter((a) => a !== 'cursor').map(flag).join('')}`] as [string]] : []),
    ...(optional.includes('cursor') ? [[`${base}${flag('cursor')}`, 'the next page'] as [string, string]] : []),
    [`svc-admin --json ${kebab(spec.name)} …`, 'the reply as JSON on stdout'],
  ];
}

/** The svc-admin command tree; `state` says whether --json was asked for. */
export function buildAdminProgram(state: Run): Command {
  const program = new Command('svc-admin')
    .description('svc operator tool: admin commands over the admin socket (<data-dir>/admin.sock)')
    // the variable's name in help, never its value
    .addOption(new Option('--data-dir <dir>', 'svcd data dir').env('SVC_DATA_DIR').default('./data'))
    .option('--json', 'machine-readable JSON output')
    .addHelpText('after', '\nRun it as the service\'s OS user: the socket is mode 0600.'
      + '\nExit codes: 0 ok, 1 the service said no, 2 usage, 3 cannot reach the admin socket.'
      + '\nUnder --json every failure is one JSON object on stderr.');
  const g = () => program.opts<Globals>();
  const socket = () => join(resolve(g().dataDir), 'admin.sock');
  const run = async (spec: CommandSpec, args: Record<string, unknown>, opts: Record<string, unknown>) => {
    // request ids of its own (UUIDs): an error prints the one it answers, as svc does
    const client = await SvcClient.connect({ kind: 'unix', path: socket() }, 10_000, { frameId: randomUUID });
    try {
      const reply = await client.request(spec.name, args);
      const after = ADMIN_EXTRAS[spec.name]?.after;
      const r = after ? after(reply, opts) : reply;
      console.log(!state.json && TEXT[spec.name] ? TEXT[spec.name]!(r) : render(r, state.json));
      if (reportsDiscrepancies(reply)) state.exit = EXIT.refused;
    } finally {
      client.close();
    }
  };
  for (const spec of ALL_COMMANDS.filter((c) => c.auth === 'admin')) {
    const { props, required, positional, flags } = argsOf(spec);
    const extra = ADMIN_EXTRAS[spec.name] ?? {};
    const sub = program.command(kebab(spec.name)).description(NOTES[spec.name] ?? spec.purpose);
    for (const a of positional) sub.argument(`<${a}>`);
    for (const a of flags) {
      const p = props[a] ?? {};
      const o = new Option(`--${kebab(a)}${p.type === 'boolean' ? '' : ` <${a}>`}`, String(p.description ?? a));
      if (Array.isArray(p.enum)) o.choices(p.enum as string[]);
      if (p.type === 'integer') o.argParser(nonNegativeInt(`--${kebab(a)}`));
      if (p.default !== undefined) o.default(p.default);
      sub.addOption(required.includes(a) ? o.makeOptionMandatory() : o);
    }
    extra.options?.(sub);
    examples(sub, exampleLines(spec));
    sub.action((...given: unknown[]) => {
      const opts = given[positional.length] as Record<string, unknown>;
      const args: Record<string, unknown> = Object.fromEntries(positional.map((a, k) => [a, given[k]]));
      for (const a of flags) if (opts[camel(a)] !== undefined) args[a] = opts[camel(a)];
      extra.prepare?.(args, opts);
      return run(spec, args, opts);
    });
  }
  examples(program, [
    ['svc-admin list-invoices --state pending', 'what is waiting for a payment'],
    ['svc-admin settle-invoice inv_… --reference <tx-hash>:<log-index>', 'credit a paid invoice'],
    ['svc-admin unmatched --reason invoice_expired', 'late payments waiting for a decision'],
    ['svc-admin --data-dir /var/lib/svc recover-runtime'],
  ]);
  return program;
}

export function main(argv: string[]): Promise<number> {
  const hint = 'is svcd running with this data dir? svc-admin talks to <data-dir>/admin.sock'
    + ' (--data-dir, or SVC_DATA_DIR; default ./data)';
  return runCli(argv, hint, buildAdminProgram);
}
