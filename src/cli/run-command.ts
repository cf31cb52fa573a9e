// `svc run <service>`: a paid call in one command. QUOTE, ACCEPT_QUOTE and the service's execution go
// out on one connection, one after the other, so a quote's lifetime (60 s by default) never depends on
// how fast a person types. The flags are the service's own, from the same schemas as quote-<service>
// and <service>: the quote's bits, max_output and priority, the execution's inputs (the quote binds
// them, or their size). A failed step is named, with what it left behind and how to go on.
import { Option, type Command } from 'commander';
import type { SvcClient } from '../client/client.ts';
import { ServiceError } from '../errors.ts';
import { commandSpec } from '../protocol/registry.ts';
import { quoteBodySchema, type Schema } from '../protocol/schemas.ts';
import { SERVICES, executionInputs, type InputField, type Service } from '../protocol/services.ts';
import { examples, nonNegativeInt } from './conventions.ts';
import { StepFailed, UsageError, type Printable, type Runner } from './output.ts';
import { clean, described, flagOf, inputFlags, inputHex } from './service-flags.ts';
import { authFor, session } from './session.ts';
import { needMachine, type Settings } from './settings.ts';

type Given = Record<string, string | number | undefined>;

const HEX = /^([0-9a-fA-F]{2})*$/;

export function addRunCommand(program: Command, settings: () => Settings, run: Runner): void {
  const parent = program.command('run')
    .description('a paid call in one step: quote, accept and execute a service (a funded machine\'s token)');
  for (const s of SERVICES) serviceCommand(parent, s, settings, run);
  examples(parent, [
    ['svc run get-pulse --bits 256', 'quote, accept, execute: the output and its receipt_id'],
    ['svc --json run get-pulse --bits 256 > result.json', 'the execution\'s reply, as get-pulse --json prints it'],
    ['svc run make-bct --plain-hex 68656c6c6f'],
    ['svc run <service> --help', 'a service\'s flags'],
  ]);
}

function serviceCommand(parent: Command, s: Service, settings: () => Settings, run: Runner): void {
  const props = quoteBodySchema(s.service).properties as Record<string, Schema>;
  const int = nonNegativeInt;
  const c = parent.command(s.service)
    .description(`${commandSpec(s.command)!.purpose}: quote, accept and execute (${s.command})`)
    .option('--bits <n>', described('bits', props.bits!), int('--bits'))
    .option('--max-output <n>', described('maximum output bytes', props.max_output!), int('--max-output'))
    .addOption(new Option('--priority <p>', described('priority', props.priority!))
      .choices(props.priority!.enum as string[]));
  const inputs = executionInputs(s);
  for (const i of inputs) inputFlags(c, i.field, `${i.about}${i.required ? '' : ' (optional)'}`);
  const flags = inputs.filter((i) => i.required).map((i) => ` ${flagOf(i.field)} <hex>`).join('');
  c.addHelpText('after', `\nThe steps, on one connection: quote-${s.service}, accept-quote, ${s.service}.`
    + '\nA failed step is named; after the accept, the quote stays accepted until it expires.');
  examples(c, [
    [`svc run ${s.service}${s.bytes === null ? ' --bits 256' : flags}`, 'the result and its receipt_id'],
    [`svc --machine-id my-agent --json run ${s.service}${s.bytes === null ? ' --bits 256' : flags} > result.json`],
  ]);
  c.action((o: Given) => run(() => runService(settings(), s, o)));
}

/** The three steps; the execution's reply is the result. */
async function runService(st: Settings, s: Service, o: Given): Promise<Printable> {
  const input = inputHex(o as never);
  for (const i of executionInputs(s)) {
    if (i.required && input[i.field] === undefined) {
      throw new UsageError(`${s.service} needs ${flagOf(i.field)} or its file (${i.about})`);
    }
    if (!HEX.test(input[i.field] ?? '')) throw new UsageError(`${flagOf(i.field)} is not hex (two digits a byte)`);
  }
  const machine = needMachine(st);
  const auth = authFor(st, machine);
  const say = (line: string) => { if (!st.json) process.stderr.write(`${line}\n`); };
  return session(st, async (c) => {
    const q = await step(c, 'quote', 'quote (step 1 of 3)', undefined, (x) =>
      x.request('QUOTE', quoteArgs(s, machine, o, input)));
    const quoteId = String(q.quote_id);
    say(`quote ${quoteId}: ${String(q.quote_units)} units, expires ${String(q.expires_at)}`);
    await step(c, 'accept', 'accept-quote (step 2 of 3)', { quoteId, hint: (e) => acceptHint(e, machine, st) }, (x) =>
      x.request('ACCEPT_QUOTE', { quote_id: quoteId, machine_id: machine }, auth));
    say(`accepted: ${String(q.quote_units)} units reserved`);
    const again = `the quote stays accepted, its units reserved, until ${String(q.expires_at)}: send the execution`
      + ` again with svc ${s.service} ${quoteId} and the same input (it is never charged twice)`;
    return step(c, 'execute', `${s.service} (step 3 of 3)`, { quoteId, hint: () => again }, (x) =>
      x.request(s.command, clean({ machine_id: machine, quote_id: quoteId, bits: o.bits, ...input }), auth));
  });
}

/** The quote binds the input itself (MAKE_BCT, VERIFY_BCT) or its size; GET_PULSE reads none. */
function quoteArgs(
  s: Service, machine: string, o: Given, input: Partial<Record<InputField, string>>,
): Record<string, unknown> {
  const size = executionInputs(s).reduce((n, i) => n + ((input[i.field]?.length ?? 0) >> 1), 0);
  const bound = s.quoteInput ? { [s.quoteInput]: input[s.quoteInput] } : s.bytes === null ? {} : { bytes: size };
  return clean({
    service: s.service, machine_id: machine, bits: o.bits, max_output: o.maxOutput, priority: o.priority, ...bound,
  });
}

/** What to do when the accept is refused: nothing was reserved, so the fix is the machine's. */
function acceptHint(e: unknown, machine: string, st: Settings): string {
  const code = e instanceof ServiceError ? e.code : '';
  if (code === 'unauthorized') {
    return `no valid token for ${machine}: the first fund-account of a machine saves it (${st.credentials}),`
      + ' or set SVC_MACHINE_TOKEN; nothing was reserved or charged';
  }
  if (code === 'insufficient_balance') {
    return `fund ${machine} first (svc fund-account --units <n> --network <network> --asset <asset>);`
      + ' nothing was reserved or charged';
  }
  return 'nothing was reserved or charged';
}

async function step(
  c: SvcClient, name: string, label: string,
  about: { quoteId: string; hint: (e: unknown) => string } | undefined,
  fn: (c: SvcClient) => Promise<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  try {
    return await fn(c);
  } catch (e) {
    throw new StepFailed(name, e, { label, ...(about ? { quoteId: about.quoteId, hint: about.hint(e) } : {}) });
  }
}
