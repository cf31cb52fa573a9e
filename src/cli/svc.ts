// svc — the public client kit CLI: the contract's 19 public command forms over svc/1 to the edge,
// plus verify-pulse and verify-log (offline checks of GET_PULSE and log-backed results). Commands and
// their help come from the command registry. Exit codes: 0 ok, 1 the service said no, 2 usage,
// 3 connection/TLS failure.
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { ServiceError } from '../errors.ts';
import { COMMANDS } from '../protocol/registry.ts';
import { quoteBodySchema, type Schema } from '../protocol/schemas.ts';
import { SERVICES, executionInputs, type InputField, type Service } from '../protocol/services.ts';
import { VERSIONS } from '../protocol/versions.ts';
import { SvcClient, parseHostPort, type Endpoint } from '../client/client.ts';
import { credentialsPath, saveToken, tokenFor } from './credentials.ts';
import { EXIT, UsageError, render, reportError } from './output.ts';
import { verifyPulse, verifyTlogProof, type PulseResult } from '../client/verify.ts';
import type { SignedPulse } from '../protocol/pulse-format.ts';

interface Globals {
  edge: string;
  json?: boolean;
  pin?: string;
  ca?: string;
  insecure?: boolean;
  machineId?: string;
  credentials?: string;
  timeout: string;
}

const int = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new UsageError(`${name} must be a non-negative integer`);
  return n;
};

function endpoint(g: Globals): Endpoint {
  let hp;
  try { hp = parseHostPort(g.edge, 9443); } catch (e) { throw new UsageError((e as Error).message); }
  if (g.insecure) {
    process.stderr.write('WARNING: --insecure: the edge certificate is NOT verified;'
      + ' anyone on the path can read and change this traffic. Use --pin or --ca.\n');
  }
  return { kind: 'tls', host: hp.host, port: hp.port, pin: g.pin, ca: g.ca, insecure: g.insecure };
}

async function call(
  g: Globals,
  cmd: string,
  args: Record<string, unknown>,
  opts: { auth?: boolean } = {},
): Promise<Record<string, unknown>> {
  const machineId = args.machine_id as string | undefined;
  const auth = opts.auth
    ? { machine_id: machineId, token: tokenFor(machineId, credentialsPath(g.credentials)) }
    : undefined;
  const client = await SvcClient.connect(endpoint(g), Number(g.timeout));
  try {
    return await client.request(cmd, args, auth);
  } finally {
    client.close();
  }
}

function needMachine(g: Globals): string {
  const m = g.machineId ?? process.env.SVC_MACHINE_ID;
  if (!m) throw new UsageError('--machine-id (or SVC_MACHINE_ID) is required for this command');
  return m;
}

function inputHex(
  o: { plainHex?: string; plainFile?: string; packetHex?: string; packetFile?: string },
): Record<string, string> {
  const out: Record<string, string> = {};
  if (o.plainHex && o.plainFile) throw new UsageError('give --plain-hex or --plain-file, not both');
  if (o.packetHex && o.packetFile) throw new UsageError('give --packet-hex or --packet-file, not both');
  if (o.plainHex) out.plain_hex = o.plainHex;
  if (o.plainFile) out.plain_hex = readFileSync(o.plainFile).toString('hex');
  if (o.packetHex) out.packet_hex = o.packetHex;
  if (o.packetFile) out.packet_hex = readFileSync(o.packetFile).toString('hex');
  return out;
}

const clean = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const flagOf = (field: InputField) => (field === 'plain_hex' ? '--plain-hex' : '--packet-hex');

/** --plain-hex/--plain-file or --packet-hex/--packet-file for one input field. */
function inputFlags(c: Command, field: InputField, about: string): void {
  const [hexFlag, fileFlag] = field === 'plain_hex'
    ? ['--plain-hex', '--plain-file']
    : ['--packet-hex', '--packet-file'];
  c.option(`${hexFlag} <hex>`, `${about}, as hex`).option(`${fileFlag} <file>`, `${about}, read from a file`);
}

/** What a quote binds, in the words of its schema (quoteBodySchema). */
function quoteHelp(s: Service): string {
  if (s.bytes === null) {
    return `${s.command} reads no input: the quote prices bits only (max_output must cover bits/8 bytes).`;
  }
  if (s.bytes.min === s.bytes.max) return `Input: exactly ${s.bytes.min} bytes (--bytes defaults to it).`;
  if (s.quoteInput) {
    return `Input: give ${flagOf(s.quoteInput)} (or its file), and the execution must send that exact input;\n`
      + `or --bytes alone, and the execution must send exactly that many bytes (at most ${s.bytes.max}).`;
  }
  return `Input: --bytes is required: the most input bytes the execution may send (${s.bytes.min}..${s.bytes.max}).`;
}

export function buildProgram(
  run: (fn: () => Promise<Record<string, unknown>>, g: () => Globals) => Promise<void>,
): Command {
  const program = new Command('svc')
    .description(
      `svc public client kit ${VERSIONS.clientKit}: speaks ${VERSIONS.coreProtocol} to the core edge over TLS`,
    )
    .version(VERSIONS.clientKit, '-V, --version')
    .option('--edge <host:port>', 'core edge address', process.env.SVC_EDGE ?? '127.0.0.1:9443')
    .option('--json', 'machine-readable JSON output')
    .option(
      '--pin <sha256>',
      'pin the edge certificate by its SHA-256 fingerprint (hex, colons allowed)',
      process.env.SVC_EDGE_PIN,
    )
    .option('--ca <file>', 'trust this CA certificate file for the edge')
    .option('--insecure', 'do not verify the edge certificate (local development only; prints a warning)')
    .option('--machine-id <id>', 'caller machine_id (or SVC_MACHINE_ID)')
    .option('--credentials <file>', 'credentials file (default ~/.config/svc/credentials.json, or SVC_CREDENTIALS)')
    .option('--timeout <ms>', 'connect timeout in milliseconds', '10000')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', '\nMachine token: SVC_MACHINE_TOKEN, or the credentials file fund-account writes (mode 0600).'
      + '\nExit codes: 0 ok, 1 the service said no (error code printed), 2 usage, 3 connection/TLS failure.');
  const g = () => program.opts<Globals>();
  const purpose = (name: string) => COMMANDS.find((c) => c.name === name)!.purpose;

  program.command('hello').description(purpose('HELLO'))
    .option('--nonce <nonce>', 'nonce for the edge proof (8..128 of A-Z a-z 0-9 _ -)')
    .action((o: { nonce?: string }) => run(() => call(g(), 'HELLO', clean({ nonce: o.nonce })), g));
  program.command('caps').description(purpose('CAPS')).action(() => run(() => call(g(), 'CAPS', {}), g));
  program.command('balance').description(purpose('BALANCE'))
    .action(() => run(() => call(g(), 'BALANCE', { machine_id: needMachine(g()) }, { auth: true }), g));

  // quote and execution flags come from the request schemas (quoteBodySchema, executionArgsSchema):
  // a flag exists exactly when the field does, and what the schema requires the CLI requires
  for (const s of SERVICES) {
    const body = quoteBodySchema(s.service);
    const props = body.properties as Record<string, Schema>;
    const maxBits = 'maxBits' in s ? `, max ${s.maxBits}` : '';
    const c = program.command(`quote-${s.service}`)
      .description(`${purpose('QUOTE')}: ${s.service} (${s.command}; billing ${s.quoteBilling})`)
      .option('--bits <n>', `bits (min 1, default 65536${maxBits})`, int('--bits'));
    if (s.bytes !== null) {
      const bytes = new Option('--bytes <n>', String(props.bytes!.description)).argParser(int('--bytes'));
      c.addOption((body.required as string[]).includes('bytes') ? bytes.makeOptionMandatory() : bytes);
    }
    c.option('--max-output <n>', 'maximum output bytes (default 8192)', int('--max-output'))
      .addOption(new Option('--priority <p>', 'priority').choices(['low', 'normal', 'high']))
      .option('--ttl-ms <n>', 'quote lifetime in ms (min 1000, default 60000)', int('--ttl-ms'))
      .option('--idempotency-key <key>', 'replay-safe key (max 128)');
    const quoted = s.quoteInput;
    if (quoted) inputFlags(c, quoted, String(props[quoted]!.description));
    c.addHelpText('after', `\n${quoteHelp(s)}`);
    c.action((o: Record<string, string | number | undefined>) => run(async () => {
      const input = inputHex(o as never);
      if (quoted && o.bytes === undefined && input[quoted] === undefined) {
        throw new UsageError(`quote-${s.service} needs ${flagOf(quoted)} (or its file) or --bytes`);
      }
      return call(g(), 'QUOTE', clean({
        service: s.service, machine_id: needMachine(g()), bits: o.bits, bytes: o.bytes, max_output: o.maxOutput,
        priority: o.priority, quote_ttl_ms: o.ttlMs, idempotency_key: o.idempotencyKey, ...input,
      }));
    }, g));
  }

  program.command('accept-quote').description(purpose('ACCEPT_QUOTE')).argument('<quote_id>')
    .option('--idempotency-key <key>', 'replay-safe key')
    .action((quoteId: string, o: { idempotencyKey?: string }) => run(() => {
      const args = clean({ quote_id: quoteId, machine_id: needMachine(g()), idempotency_key: o.idempotencyKey });
      return call(g(), 'ACCEPT_QUOTE', args, { auth: true });
    }, g));

  for (const s of SERVICES) {
    const c = program.command(s.service)
      .description(`${purpose(s.command)} (${s.command}; paid: needs an accepted quote)`).argument('<quote_id>')
      .option('--bits <n>', 'bits (at most the quoted bits)', int('--bits'));
    const inputs = executionInputs(s);
    for (const i of inputs) inputFlags(c, i.field, `${i.about}${i.required ? '' : ' (optional)'}`);
    c.action((quoteId: string, o: Record<string, string | number | undefined>) => run(() => {
      const input = inputHex(o as never);
      const missing = inputs.find((i) => i.required && input[i.field] === undefined);
      if (missing) throw new UsageError(`${s.service} needs ${flagOf(missing.field)} or its file (${missing.about})`);
      const args = clean({ machine_id: needMachine(g()), quote_id: quoteId, bits: o.bits, ...input });
      return call(g(), s.command, args, { auth: true });
    }, g));
  }

  program.command('get-receipt').description(purpose('GET_RECEIPT')).argument('<receipt_id>')
    .action((id: string) => run(
      () => call(g(), 'GET_RECEIPT', { receipt_id: id, machine_id: needMachine(g()) }, { auth: true }),
      g,
    ));
  program.command('verify-receipt').description(purpose('VERIFY_RECEIPT')).argument('<receipt_id>')
    .action((id: string) => run(
      () => call(g(), 'VERIFY_RECEIPT', { receipt_id: id, machine_id: needMachine(g()) }),
      g,
    ));
  program.command('fund-account')
    .description(`${purpose('FUND_ACCOUNT')} (the first invoice claims the machine_id and returns its token once)`)
    .requiredOption('--units <n>', 'whole svcC to fund (min 1)', int('--units'))
    .addOption(
      new Option('--network <network>', 'payment network').choices(['TRON', 'Solana', 'Base']).makeOptionMandatory(),
    )
    .addOption(new Option('--asset <asset>', 'stablecoin').choices(['USDT', 'USDC']).makeOptionMandatory())
    .option('--idempotency-key <key>', 'replay-safe key')
    .action((o: { units: number; network: string; asset: string; idempotencyKey?: string }) => run(async () => {
      const machineId = needMachine(g());
      const args = clean({
        machine_id: machineId,
        units: o.units,
        network: o.network,
        asset: o.asset,
        idempotency_key: o.idempotencyKey,
      });
      const r = await call(g(), 'FUND_ACCOUNT', args, { auth: true });
      if (typeof r.machine_token === 'string') {
        const path = credentialsPath(g().credentials);
        saveToken(machineId, r.machine_token, path);
        process.stderr.write(`machine token saved to ${path} (mode 0600); it is shown once\n`);
      }
      return r;
    }, g));
  program.command('invoice-status').description(purpose('INVOICE_STATUS')).argument('<invoice_id>')
    .action((id: string) => run(
      () => call(g(), 'INVOICE_STATUS', { invoice_id: id, machine_id: needMachine(g()) }, { auth: true }),
      g,
    ));

  program.command('verify-pulse')
    .description('check a GET_PULSE output offline once its seed is revealed (docs/verify.md)')
    .requiredOption('--result <file>', 'the get-pulse result (JSON, as printed by --json)')
    .option('--pulse <file>', 'pulse k (JSON from PULSE); fetched from the edge when omitted')
    .option('--reveal <file>', 'pulse k+1 (JSON from PULSE); fetched from the edge when omitted')
    .option('--public-key <b64url>', 'node Ed25519 public key; taken from the fetched pulse when omitted')
    .action((o: { result: string; pulse?: string; reveal?: string; publicKey?: string }) => run(async () => {
      const result = JSON.parse(readFileSync(o.result, 'utf8')) as PulseResult;
      if (!result.pulse || typeof result.pulse.index !== 'number') {
        throw new UsageError(`${o.result} is not a get-pulse result`);
      }
      const load = async (file: string | undefined, index: number) =>
        (file ? JSON.parse(readFileSync(file, 'utf8')) : await call(g(), 'PULSE', { index })) as
          SignedPulse & { public_key?: string };
      const committed = await load(o.pulse, result.pulse.index);
      const revealing = await load(o.reveal, result.pulse.index + 1).catch((e: unknown) => {
        if (e instanceof ServiceError && e.code === 'not_found') {
          throw new ServiceError('not_found', `pulse ${result.pulse.index + 1} is not published yet:`
            + ` the seed is revealed when the period ends (period ${committed.pulse.period_ms} ms)`);
        }
        throw e;
      });
      const key = o.publicKey ?? committed.public_key ?? revealing.public_key;
      if (!key) throw new UsageError('--public-key is required when both pulses come from files');
      const v = await verifyPulse(result, committed, revealing, key);
      if (!v.ok) {
        const failed = v.checks.filter((c) => !c.ok).map((c) => c.name).join('; ');
        throw new ServiceError('invalid_request', `verification FAILED: ${failed}`, { checks: v.checks });
      }
      return { verified: true, checks: v.checks.map((c) => `${c.ok ? 'ok' : 'FAIL'} ${c.name}`) };
    }, g));
  program.command('verify-log')
    .description('check a TIMESTAMP_PROOF or MACHINE_EVENT_LOG result offline:'
      + ' signed checkpoint + RFC 6962 inclusion (docs/verify.md)')
    .requiredOption('--result <file>', 'the execution result (JSON, as printed by --json)')
    .option(
      '--public-key <b64url>',
      'node Ed25519 public key you trust (default: the one in the result; pin yours from the manifest)',
    )
    .action((o: { result: string; publicKey?: string }) => run(async () => {
      const r = JSON.parse(readFileSync(o.result, 'utf8')) as {
        tlog_proof?: string;
        log?: { entry_base64?: string; public_key?: string; origin?: string };
      };
      if (!r.tlog_proof || !r.log?.entry_base64) {
        throw new UsageError(`${o.result} is not a timestamp-proof or machine-event-log result`);
      }
      const key = o.publicKey ?? r.log.public_key;
      if (!key) throw new UsageError('--public-key is required');
      const v = await verifyTlogProof(r.tlog_proof, Buffer.from(r.log.entry_base64, 'base64'), key, r.log.origin);
      if (!v.ok) {
        const failed = v.checks.filter((c) => !c.ok).map((c) => c.name).join('; ');
        throw new ServiceError('invalid_request', `verification FAILED: ${failed}`, { checks: v.checks });
      }
      return { verified: true, checks: v.checks.map((c) => `${c.ok ? 'ok' : 'FAIL'} ${c.name}`) };
    }, g));
  return program;
}

export async function main(argv: string[]): Promise<number> {
  let code = EXIT.ok as number;
  const program = buildProgram(async (fn, g) => {
    try {
      console.log(render(await fn(), g().json === true));
    } catch (e) {
      code = reportError(e, g().json === true);
    }
  });
  // subcommands copy settings when created, so each needs its own override: a usage error in a
  // subcommand (a missing required option) is exit 2, not commander's process.exit(1)
  for (const c of [program, ...program.commands]) c.exitOverride();
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') {
        return EXIT.ok;
      }
      return EXIT.usage;
    }
    return reportError(e, false);
  }
  return code;
}
