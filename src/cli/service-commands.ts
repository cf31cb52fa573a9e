// The priced services' commands, one step each: quote-<service> (QUOTE), accept-quote and the
// executions. Their flags come from the request schemas (quoteBodySchema, executionArgsSchema): a flag
// exists exactly when the field does, and what the schema requires the CLI requires. (`svc run` does
// the three steps in one command: run-command.ts.)
import { Option, type Command } from 'commander';
import { commandSpec } from '../protocol/registry.ts';
import { quoteBodySchema, type Schema } from '../protocol/schemas.ts';
import { SERVICES, executionInputs, type Service } from '../protocol/services.ts';
import { examples, nonNegativeInt } from './conventions.ts';
import { UsageError, type Runner } from './output.ts';
import {
  M, clean, described, flagOf, inputFlags, inputHex, quoteExamples, quoteHelp,
} from './service-flags.ts';
import { call } from './session.ts';
import { needMachine, type Settings } from './settings.ts';

type Given = Record<string, string | number | undefined>;
const int = nonNegativeInt;
const purpose = (name: string) => commandSpec(name)!.purpose;
/** A registry command's public CLI name (the registry's `cli`; QUOTE has one per service, by index). */
export const cliName = (name: string, i = 0) => commandSpec(name)!.cli[i]!;
/** A registry command's argument, as its schema describes it. */
export const argOf = (command: string, arg: string) =>
  (commandSpec(command)!.args.properties as Record<string, Schema>)[arg]!;

export function addQuoteCommands(program: Command, settings: () => Settings, run: Runner): void {
  for (const s of SERVICES) quoteCommand(program, s, settings, run);
}

function quoteCommand(program: Command, s: Service, settings: () => Settings, run: Runner): void {
  const body = quoteBodySchema(s.service);
  const props = body.properties as Record<string, Schema>;
  const c = program.command(cliName('QUOTE', SERVICES.indexOf(s)))
    .description(`${purpose('QUOTE')}: ${s.service} (${s.command}; billing ${s.quoteBilling})`)
    .option('--bits <n>', described('bits', props.bits!), int('--bits'));
  if (s.bytes !== null) {
    const bytes = new Option('--bytes <n>', String(props.bytes!.description)).argParser(int('--bytes'));
    c.addOption((body.required as string[]).includes('bytes') ? bytes.makeOptionMandatory() : bytes);
  }
  c.option('--max-output <n>', described('maximum output bytes', props.max_output!), int('--max-output'))
    .addOption(new Option('--priority <p>', described('priority', props.priority!))
      .choices(props.priority!.enum as string[]))
    .option('--ttl-ms <n>', described('quote lifetime in ms', props.quote_ttl_ms!), int('--ttl-ms'))
    .option('--idempotency-key <key>', described('replay-safe key', props.idempotency_key!));
  const quoted = s.quoteInput;
  if (quoted) inputFlags(c, quoted, String(props[quoted]!.description));
  c.addHelpText('after', `\n${quoteHelp(s)}`);
  examples(c, quoteExamples(s));
  c.action((o: Given) => run(async () => {
    const input = inputHex(o as never);
    if (quoted && o.bytes === undefined && input[quoted] === undefined) {
      throw new UsageError(`quote-${s.service} needs ${flagOf(quoted)} (or its file) or --bytes`);
    }
    const st = settings();
    return call(st, 'QUOTE', clean({
      service: s.service, machine_id: needMachine(st), bits: o.bits, bytes: o.bytes, max_output: o.maxOutput,
      priority: o.priority, quote_ttl_ms: o.ttlMs, idempotency_key: o.idempotencyKey, ...input,
    }));
  }));
}

export function addAcceptAndExecutions(program: Command, settings: () => Settings, run: Runner): void {
  examples(program.command(cliName('ACCEPT_QUOTE')).description(purpose('ACCEPT_QUOTE')).argument('<quote_id>')
    .option('--idempotency-key <key>', described('replay-safe key', argOf('ACCEPT_QUOTE', 'idempotency_key')))
    .action((quoteId: string, o: { idempotencyKey?: string }) => run(() => {
      const st = settings();
      const args = clean({ quote_id: quoteId, machine_id: needMachine(st), idempotency_key: o.idempotencyKey });
      return call(st, 'ACCEPT_QUOTE', args, { auth: true });
    })), [[`svc ${M} accept-quote q1…`, 'the quote_id a quote-<service> returned']]);
  for (const s of SERVICES) executionCommand(program, s, settings, run);
}

function executionCommand(program: Command, s: Service, settings: () => Settings, run: Runner): void {
  const c = program.command(cliName(s.command))
    .description(`${purpose(s.command)} (${s.command}; paid: needs an accepted quote)`).argument('<quote_id>')
    .option('--bits <n>', 'bits (at most the quoted bits)', int('--bits'));
  const inputs = executionInputs(s);
  for (const i of inputs) inputFlags(c, i.field, `${i.about}${i.required ? '' : ' (optional)'}`);
  c.action((quoteId: string, o: Given) => run(() => {
    const input = inputHex(o as never);
    const missing = inputs.find((i) => i.required && input[i.field] === undefined);
    if (missing) throw new UsageError(`${s.service} needs ${flagOf(missing.field)} or its file (${missing.about})`);
    const st = settings();
    const args = clean({ machine_id: needMachine(st), quote_id: quoteId, bits: o.bits, ...input });
    return call(st, s.command, args, { auth: true });
  }));
  const flags = inputs.filter((i) => i.required).map((i) => ` ${flagOf(i.field)} <hex>`).join('');
  examples(c, [
    [quoteExamples(s)[0]![0], 'quote it'],
    [`svc ${M} accept-quote q1…`, 'reserve the quoted units'],
    [`svc ${M} --json ${s.service} q1…${flags} > result.json`, 'run it: the result and its receipt_id'],
    [`svc run ${s.service}${s.bytes === null ? ' --bits 256' : flags}`, 'or the three steps in one'],
  ]);
}
