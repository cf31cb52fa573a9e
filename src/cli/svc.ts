// svc — the public client kit CLI: the contract's 19 public command forms over svc/1 to the edge,
// plus hello's edge-proof check, pulse (fetch and verify a published pulse), verify-pulse and
// verify-log (offline checks of GET_PULSE and log-backed results) and completion. Commands, their
// flags and their help examples come from the command registry. Exit codes: 0 ok, 1 the service
// said no or a proof did not verify, 2 usage, 3 connection/TLS failure (conventions.ts, output.ts).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Argument, Command, Option } from 'commander';
import { ServiceError } from '../errors.ts';
import { commandSpec } from '../protocol/registry.ts';
import { quoteBodySchema, type Schema } from '../protocol/schemas.ts';
import { SERVICES, executionInputs, type InputField, type Service } from '../protocol/services.ts';
import { VERSIONS } from '../protocol/versions.ts';
import { SvcClient, parseHostPort, type Endpoint } from '../client/client.ts';
import { verifyEdgeProof } from '../client/node-proofs.ts';
import {
  verifyPublishedPulse, verifyPulse, verifyTlogProof, type Check, type NodeKey, type PulseResult,
} from '../client/verify.ts';
import type { SignedPulse } from '../protocol/pulse-format.ts';
import { bashCompletion, zshCompletion } from './completion.ts';
import {
  examples, nonNegativeInt, runCli,
} from './conventions.ts';
import { credentialsPath, saveToken, tokenFor } from './credentials.ts';
import { UsageError, VerificationError, render } from './output.ts';

/** A PULSE reply: the pulse, its signing key, and the node's key set (retired keys too). */
type PublishedPulse = SignedPulse & { public_key?: string; node_keys?: NodeKey[] };

/** What the edge sent for PULSE has a pulse with an index (the verifier checks the rest). */
function isPublishedPulse(x: unknown): x is PublishedPulse {
  const p = (x as { pulse?: { index?: unknown } | null }).pulse;
  return typeof p === 'object' && p !== null && Number.isSafeInteger(p.index);
}

function publishedPulse(x: Record<string, unknown>): PublishedPulse {
  if (!isPublishedPulse(x)) throw new ServiceError('internal', 'the edge sent a PULSE answer without a pulse index');
  return x;
}
/** --node-key / --public-key: one key, or several comma-separated (a key set spanning a rotation). */
const keyList = (v: string): NodeKey[] => v.split(',').map((k) => k.trim()).filter(Boolean)
  .map((public_key) => ({ public_key }));

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

const int = nonNegativeInt;
/** The machine_id the examples use. */
const M = '--machine-id my-agent';

function endpoint(g: Globals): Endpoint {
  let hp;
  try { hp = parseHostPort(g.edge, 9443); } catch (e) { throw new UsageError((e as Error).message); }
  if (g.insecure) {
    process.stderr.write('WARNING: --insecure: the edge certificate is NOT verified;'
      + ' anyone on the path can read and change this traffic. Use --pin or --ca.\n');
  }
  return { kind: 'tls', host: hp.host, port: hp.port, pin: g.pin, ca: g.ca, insecure: g.insecure };
}

/** Opens one connection to the edge for `fn`, and closes it. */
async function session<T>(g: Globals, fn: (c: SvcClient) => Promise<T>): Promise<T> {
  const client = await SvcClient.connect(endpoint(g), Number(g.timeout));
  try {
    return await fn(client);
  } finally {
    client.close();
  }
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
  return session(g, (c) => c.request(cmd, args, auth));
}

const failedChecks = (checks: { name: string; ok: boolean }[]) =>
  checks.filter((c) => !c.ok).map((c) => c.name).join('; ');

/** An offline check's verdict: exit 1 naming the failed checks, else every check with its outcome. */
function offlineVerdict(v: { ok: boolean; checks: Check[] }): Record<string, unknown> {
  if (!v.ok) throw new VerificationError(`verification FAILED: ${failedChecks(v.checks)}`, v.checks);
  return { verified: true, checks: v.checks.map((c) => `${c.ok ? 'ok' : 'FAIL'} ${c.name}`) };
}

/** A registry command's argument, as its schema describes it. */
const argOf = (command: string, arg: string) => (commandSpec(command)!.args.properties as Record<string, Schema>)[arg]!;

/** A flag's help: what it is, then the bounds and the default its schema sets ("bits (min 1, default 65536)"). */
function described(what: string, s: Schema): string {
  const facts = [
    s.minimum === undefined ? '' : `min ${String(s.minimum)}`,
    s.default === undefined ? '' : `default ${String(s.default)}`,
    s.maximum === undefined ? '' : `max ${String(s.maximum)}`,
    s.maxLength === undefined ? '' : `max ${String(s.maxLength)}`,
  ].filter((f) => f !== '');
  return facts.length ? `${what} (${facts.join(', ')})` : what;
}

/** A quote command's examples, from what its schema requires. */
function quoteExamples(s: Service): [string, string?][] {
  const base = `svc ${M} quote-${s.service}`;
  if (s.bytes === null) return [[`${base} --bits 256`, `${s.command} reads no input: bits only`]];
  if (s.bytes.min === s.bytes.max) return [[base, `the input is ${s.bytes.min} bytes`]];
  if (s.quoteInput) {
    return [
      [`${base} ${flagOf(s.quoteInput)} 68656c6c6f`, 'binds this exact input'],
      [`${base} --bytes 5`, 'or only its size'],
    ];
  }
  return [[`${base} --bytes 64`, 'the most input bytes the execution may send']];
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
  run: (fn: () => Promise<Record<string, unknown>>) => Promise<void>,
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
    .addHelpText('after', '\nEnvironment: SVC_EDGE (--edge), SVC_EDGE_PIN (--pin), SVC_MACHINE_ID (--machine-id),'
      + '\nSVC_MACHINE_TOKEN (the machine token; else the credentials file fund-account writes, mode 0600),'
      + '\nSVC_CREDENTIALS (--credentials). The pin: edge_cert_sha256 in svcd\'s ready log, or edge.cert_sha256'
      + '\nin the manifest (/.well-known/svc/svc_public_manifest.json).'
      + '\nExit codes: 0 ok, 1 the service said no (error code printed) or a proof did not verify, 2 usage,'
      + '\n3 connection/TLS failure. Under --json every failure is one JSON object on stderr.');
  examples(program, [
    ['export SVC_EDGE=127.0.0.1:9443 SVC_EDGE_PIN=<edge_cert_sha256> SVC_MACHINE_ID=my-agent'],
    ['svc hello', 'greeting; checks the node\'s signed edge proof'],
    ['svc quote-get-pulse --bits 256', 'a free quote'],
    ['svc --json balance', 'JSON on stdout'],
    ['svc <command> --help', 'every flag of a command'],
  ]);
  const g = () => program.opts<Globals>();
  const purpose = (name: string) => commandSpec(name)!.purpose;
  /** A registry command's public CLI name (the registry's `cli`; QUOTE has one per service, by index). */
  const cliName = (name: string, i = 0) => commandSpec(name)!.cli[i]!;

  const hello = program.command(cliName('HELLO')).description(`${purpose('HELLO')} (the proof is verified)`)
    .option('--nonce <nonce>', 'nonce the edge proof must sign (8..128 of A-Z a-z 0-9 _ -; default: a random one)')
    .option('--node-key <b64url>', 'also require this node public key (pin it from the manifest\'s node.public_key)')
    .action((o: { nonce?: string; nodeKey?: string }) => run(async () => {
      const nonce = o.nonce ?? randomBytes(16).toString('base64url');
      const { r, cert } = await session(g(), async (c) => {
        const reply = await c.request('HELLO', { nonce });
        return { r: reply, cert: c.peerCertificateSha256 };
      });
      const v = verifyEdgeProof(r, {
        nonce, ...(cert ? { certSha256: cert } : {}), ...(o.nodeKey ? { publicKey: o.nodeKey } : {}),
      });
      if (!v.ok) throw new VerificationError(`edge proof INVALID: ${failedChecks(v.checks)}`, v.checks);
      const verdict = `valid (key ${v.key_id}, ${v.public_key})`;
      const check = { valid: true, key_id: v.key_id, checks: v.checks.map((c) => c.name) };
      if (g().json) return { ...r, edge_proof_check: check };
      const { edge_proof: _p, ...rest } = r;
      return { ...rest, 'edge proof': verdict };
    }));
  examples(hello, [
    ['svc hello', 'prints "edge proof: valid (key …)"; a bad proof exits 1'],
    ['svc hello --nonce my-nonce-123 --json'],
    ['svc hello --node-key <node.public_key from the manifest>'],
  ]);
  const caps = program.command(cliName('CAPS')).description(purpose('CAPS'));
  examples(caps.action(() => run(() => call(g(), 'CAPS', {}))), [
    ['svc caps'], ['svc --json caps', 'the capability list as JSON'],
  ]);
  examples(program.command(cliName('BALANCE')).description(purpose('BALANCE'))
    .action(() => run(() => call(g(), 'BALANCE', { machine_id: needMachine(g()) }, { auth: true }))), [
    [`svc ${M} balance`, 'the token: SVC_MACHINE_TOKEN or the credentials file'],
    [`svc ${M} --json balance`],
  ]);

  // quote and execution flags come from the request schemas (quoteBodySchema, executionArgsSchema):
  // a flag exists exactly when the field does, and what the schema requires the CLI requires
  for (const s of SERVICES) {
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
    c.action((o: Record<string, string | number | undefined>) => run(async () => {
      const input = inputHex(o as never);
      if (quoted && o.bytes === undefined && input[quoted] === undefined) {
        throw new UsageError(`quote-${s.service} needs ${flagOf(quoted)} (or its file) or --bytes`);
      }
      return call(g(), 'QUOTE', clean({
        service: s.service, machine_id: needMachine(g()), bits: o.bits, bytes: o.bytes, max_output: o.maxOutput,
        priority: o.priority, quote_ttl_ms: o.ttlMs, idempotency_key: o.idempotencyKey, ...input,
      }));
    }));
  }

  examples(program.command(cliName('ACCEPT_QUOTE')).description(purpose('ACCEPT_QUOTE')).argument('<quote_id>')
    .option('--idempotency-key <key>', described('replay-safe key', argOf('ACCEPT_QUOTE', 'idempotency_key')))
    .action((quoteId: string, o: { idempotencyKey?: string }) => run(() => {
      const args = clean({ quote_id: quoteId, machine_id: needMachine(g()), idempotency_key: o.idempotencyKey });
      return call(g(), 'ACCEPT_QUOTE', args, { auth: true });
    })), [[`svc ${M} accept-quote q1…`, 'the quote_id a quote-<service> returned']]);

  for (const s of SERVICES) {
    const c = program.command(cliName(s.command))
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
    }));
    const flags = inputs.filter((i) => i.required).map((i) => ` ${flagOf(i.field)} <hex>`).join('');
    examples(c, [
      [quoteExamples(s)[0]![0], 'quote it'],
      [`svc ${M} accept-quote q1…`, 'reserve the quoted units'],
      [`svc ${M} --json ${s.service} q1…${flags} > result.json`, 'run it: the result and its receipt_id'],
    ]);
  }

  examples(program.command(cliName('GET_RECEIPT')).description(purpose('GET_RECEIPT')).argument('<receipt_id>')
    .action((id: string) => run(
      () => call(g(), 'GET_RECEIPT', { receipt_id: id, machine_id: needMachine(g()) }, { auth: true }),
    )), [[`svc ${M} get-receipt rcpt_…`, 'the receipt_id an execution returned']]);
  examples(program.command(cliName('VERIFY_RECEIPT')).description(purpose('VERIFY_RECEIPT')).argument('<receipt_id>')
    .action((id: string) => run(
      () => call(g(), 'VERIFY_RECEIPT', { receipt_id: id, machine_id: needMachine(g()) }),
    )), [[`svc ${M} verify-receipt rcpt_…`, 'free: the node re-verifies its signature']]);
  const fund = program.command(cliName('FUND_ACCOUNT'))
    .description(`${purpose('FUND_ACCOUNT')} (the first invoice claims the machine_id and returns its token once)`)
    .requiredOption('--units <n>', described('whole svcC to fund', argOf('FUND_ACCOUNT', 'units')), int('--units'))
    .addOption(
      new Option('--network <network>', 'payment network').choices(argOf('FUND_ACCOUNT', 'network').enum as string[])
        .makeOptionMandatory(),
    )
    .addOption(
      new Option('--asset <asset>', 'stablecoin').choices(argOf('FUND_ACCOUNT', 'asset').enum as string[])
        .makeOptionMandatory(),
    )
    .option('--idempotency-key <key>', described('replay-safe key', argOf('FUND_ACCOUNT', 'idempotency_key')))
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
    }));
  examples(fund, [
    [`svc ${M} fund-account --units 5 --network TRON --asset USDT`, 'pay amount_due to pay_to before expires_at'],
  ]);
  examples(program.command(cliName('INVOICE_STATUS')).description(purpose('INVOICE_STATUS')).argument('<invoice_id>')
    .action((id: string) => run(
      () => call(g(), 'INVOICE_STATUS', { invoice_id: id, machine_id: needMachine(g()) }, { auth: true }),
    )), [[`svc ${M} invoice-status inv_…`, 'pending, settled or expired']]);

  const verifyPulseCmd = program.command('verify-pulse')
    .description('check a GET_PULSE output offline once its seed is revealed (docs/verify.md)')
    .requiredOption('--result <file>', 'the get-pulse result (JSON, as printed by --json)')
    .option('--pulse <file>', 'pulse k (JSON from PULSE); fetched from the edge when omitted')
    .option('--reveal <file>', 'pulse k+1 (JSON from PULSE); fetched from the edge when omitted')
    .option('--public-key <b64url>', 'node Ed25519 public key(s), comma-separated; taken from the fetched pulses'
      + ' when omitted')
    .action((o: { result: string; pulse?: string; reveal?: string; publicKey?: string }) => run(async () => {
      const result = JSON.parse(readFileSync(o.result, 'utf8')) as PulseResult;
      if (!result.pulse || typeof result.pulse.index !== 'number') {
        throw new UsageError(`${o.result} is not a get-pulse result`);
      }
      const load = async (file: string | undefined, index: number) =>
        (file ? JSON.parse(readFileSync(file, 'utf8')) : await call(g(), 'PULSE', { index })) as
          PublishedPulse;
      const committed = await load(o.pulse, result.pulse.index);
      const revealing = await load(o.reveal, result.pulse.index + 1).catch((e: unknown) => {
        if (e instanceof ServiceError && e.code === 'not_found') {
          throw new ServiceError('not_found', `pulse ${result.pulse.index + 1} is not published yet:`
            + ` the seed is revealed when the period ends (period ${committed.pulse.period_ms} ms)`);
        }
        throw e;
      });
      // the key set the edge sent (after a key rotation the two pulses may name different keys)
      const sent = [committed, revealing].flatMap((p) => [...p.node_keys ?? [], ...p.public_key ? [p] : []]);
      const key = o.publicKey ? keyList(o.publicKey) : sent.filter((p) => typeof p.public_key === 'string');
      if (!key.length) throw new UsageError('--public-key is required when both pulses come from files');
      return offlineVerdict(await verifyPulse(result, committed, revealing, key as NodeKey[]));
    }));
  examples(verifyPulseCmd, [
    [`svc ${M} --json get-pulse q1… > result.json`],
    ['svc verify-pulse --result result.json', 'once the next pulse has revealed the seed'],
  ]);
  const verifyLog = program.command('verify-log')
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
      const key = o.publicKey ? keyList(o.publicKey) : r.log.public_key;
      if (!key) throw new UsageError('--public-key is required');
      const entry = Buffer.from(r.log.entry_base64, 'base64');
      return offlineVerdict(await verifyTlogProof(r.tlog_proof, entry, key, r.log.origin));
    }));
  examples(verifyLog, [
    [`svc ${M} --json timestamp-proof q1… --plain-hex <sha256 of your file> > ts.json`],
    ['svc verify-log --result ts.json --public-key <node.public_key from the manifest>'],
  ]);

  const pulse = program.command('pulse')
    .description('fetch a published pulse (latest, or by index) and verify it: signature, output_hash, and the'
      + ' link to the pulse before it')
    .addArgument(new Argument('[index]', 'pulse index, or latest').default('latest')
      .argParser((v) => (v === 'latest' ? v : String(int('index')(v)))))
    .option('--node-key <b64url>', 'verify with this node public key (from the manifest; after a key rotation,'
      + ' comma-separated keys) instead of the key set sent')
    .action((index: string, o: { nodeKey?: string }) => run(async () => {
      const { p, prev } = await session(g(), async (c) => {
        const one = async (args: Record<string, unknown>) => publishedPulse(await c.request('PULSE', args));
        const got = await one(index === 'latest' ? {} : { index: Number(index) });
        const before = got.pulse.index > 0
          ? await one({ index: got.pulse.index - 1 }).catch((e: unknown) => {
            if (e instanceof ServiceError && e.code === 'not_found') return undefined;
            throw e;
          })
          : undefined;
        return { p: got, prev: before as SignedPulse | undefined };
      });
      // the key set the edge sent: the pulse before a key rotation names the retired key
      const key = o.nodeKey ? keyList(o.nodeKey) : p.node_keys ?? p.public_key;
      if (!key) throw new UsageError('the edge sent no public_key: give --node-key');
      const v = await verifyPublishedPulse(p, prev, key);
      if (!v.ok) {
        throw new VerificationError(`pulse ${p.pulse.index} did NOT verify: ${failedChecks(v.checks)}`, v.checks);
      }
      const linked = prev ? `, linked to pulse ${prev.pulse.index}` : '';
      const keyId = p.pulse.key_id; // the trusted key's: verified above
      const verdict = `valid (key ${keyId}${linked})`;
      if (g().json) return { ...p, verified: true, key_id: keyId, checks: v.checks.map((c) => c.name) };
      return { ...p.pulse, output_hash: p.output_hash, signature: p.signature, [`pulse ${p.pulse.index}`]: verdict };
    }));
  examples(pulse, [
    ['svc pulse', 'the latest pulse, verified'],
    ['svc pulse 42 --json'],
    ['svc pulse --node-key <node.public_key from the manifest>'],
  ]);

  const completion = program.command('completion')
    .description('print a shell completion script for svc')
    .addArgument(new Argument('<shell>', 'bash or zsh').choices(['bash', 'zsh']))
    .action((shell: 'bash' | 'zsh') => {
      process.stdout.write(shell === 'bash' ? bashCompletion(program) : zshCompletion(program));
    });
  examples(completion, [
    ['eval "$(svc completion bash)"', 'bash: this shell; put it in ~/.bashrc to keep it'],
    ['source <(svc completion zsh)', 'zsh (after compinit)'],
  ]);
  return program;
}

export function main(argv: string[]): Promise<number> {
  const hint = 'is svcd running there? The edge is --edge HOST:PORT (or SVC_EDGE; default 127.0.0.1:9443)';
  return runCli(argv, hint, (state) => buildProgram(async (fn) => {
    console.log(render(await fn(), state.json));
  }));
}
