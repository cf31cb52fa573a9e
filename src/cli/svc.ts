// svc — the public client kit CLI: the contract's 19 public command forms over svc/1 to the edge
// (service-commands.ts for the priced services), `run` (a paid call in one step), `login` and `config`
// (saved profiles: no exports before the first call), hello's edge-proof check, pulse, verify-pulse and
// verify-log (verify-commands.ts) and completion. Commands, their flags and their help examples come
// from the command registry. Exit codes: 0 ok, 1 the service said no or a proof did not verify, 2
// usage, 3 connection/TLS failure (conventions.ts, output.ts).
import { randomBytes } from 'node:crypto';
import { Argument, Command, Option } from 'commander';
import { commandSpec } from '../protocol/registry.ts';
import { VERSIONS } from '../protocol/versions.ts';
import { verifyEdgeProof } from '../client/node-proofs.ts';
import { bashCompletion, zshCompletion } from './completion.ts';
import { addConfigCommand } from './config-command.ts';
import { examples, nonNegativeInt, runCli } from './conventions.ts';
import { saveToken } from './credentials.ts';
import { addLoginCommand } from './login.ts';
import { VerificationError, render, type Runner } from './output.ts';
import { addRunCommand } from './run-command.ts';
import { M, clean, described } from './service-flags.ts';
import { addAcceptAndExecutions, addQuoteCommands, argOf, cliName } from './service-commands.ts';
import { call, session } from './session.ts';
import { needMachine, settingOptions, settingsOf, type Settings } from './settings.ts';
import { addVerifyCommands, failedChecks } from './verify-commands.ts';

const purpose = (name: string) => commandSpec(name)!.purpose;

const SETTINGS_HELP = '\nSettings: each flag, else its environment variable (env: …), else the profile (svc login;'
  + '\n--profile or SVC_PROFILE, default "default"), else its default; svc config list shows which.'
  + '\nProfiles (config.json) and machine tokens (credentials.json) live in $XDG_CONFIG_HOME/svc, else'
  + '\n~/.config/svc, mode 0600. The machine token: SVC_MACHINE_TOKEN, else the credentials file that'
  + '\nfund-account writes. The pin: "edge pin" in svcd\'s start-up banner, edge_cert_sha256 in its ready'
  + '\nlog, edge.cert_sha256 in the manifest (/.well-known/svc/svc_public_manifest.json).'
  + '\nAn error that answers a request prints its request id; -v logs every frame (tokens redacted).'
  + '\nExit codes: 0 ok, 1 the service said no (error code printed) or a proof did not verify, 2 usage,'
  + '\n3 connection/TLS failure. Under --json every failure is one JSON object on stderr.';

function globalOptions(program: Command): void {
  settingOptions(program);
  program
    .option('--json', 'machine-readable JSON output')
    .option('--ca <file>', 'trust this CA certificate file for the edge (instead of a pin)')
    .option('--insecure', 'do not verify the edge certificate (local development only; prints a warning)')
    .addOption(new Option('--credentials <file>', 'machine tokens file (default credentials.json in the config'
      + ' dir)').env('SVC_CREDENTIALS'))
    .option('-v, --verbose', 'log each request and reply frame on stderr, tokens redacted')
    .option('--timeout <ms>', 'connect timeout in milliseconds', '10000')
    .addHelpText('after', SETTINGS_HELP);
  examples(program, [
    ['svc login --edge 127.0.0.1:9443 --machine-id my-agent', 'once: the node, its pin (you confirm it), your id'],
    ['svc hello', 'greeting; checks the node\'s signed edge proof'],
    ['svc run get-pulse --bits 256', 'a paid call: quote, accept and execute'],
    ['svc quote-get-pulse --bits 256', 'a free quote'],
    ['svc --json balance', 'JSON on stdout'],
    ['svc <command> --help', 'every flag of a command'],
  ]);
}

export function buildProgram(run: Runner): Command {
  const program = new Command('svc')
    .description(
      `svc public client kit ${VERSIONS.clientKit}: speaks ${VERSIONS.coreProtocol} to the core edge over TLS`,
    )
    .version(VERSIONS.clientKit, '-V, --version');
  globalOptions(program);
  const settings = () => settingsOf(program);
  addLoginCommand(program, run);
  addConfigCommand(program, run);
  addDiscovery(program, settings, run);
  addQuoteCommands(program, settings, run);
  addAcceptAndExecutions(program, settings, run);
  addRunCommand(program, settings, run);
  addAccount(program, settings, run);
  addVerifyCommands(program, settings, run);
  addCompletion(program);
  return program;
}

function addDiscovery(program: Command, settings: () => Settings, run: Runner): void {
  const hello = program.command(cliName('HELLO')).description(`${purpose('HELLO')} (the proof is verified)`)
    .option('--nonce <nonce>', 'nonce the edge proof must sign (8..128 of A-Z a-z 0-9 _ -; default: a random one)')
    .option('--node-key <b64url>', 'also require this node public key (pin it from the manifest\'s node.public_key)')
    .action((o: { nonce?: string; nodeKey?: string }) => run(async () => {
      const st = settings();
      const nonce = o.nonce ?? randomBytes(16).toString('base64url');
      const { r, cert } = await session(st, async (c) => {
        const reply = await c.request('HELLO', { nonce });
        return { r: reply, cert: c.peerCertificateSha256 };
      });
      const v = verifyEdgeProof(r, {
        nonce, ...(cert ? { certSha256: cert } : {}), ...(o.nodeKey ? { publicKey: o.nodeKey } : {}),
      });
      if (!v.ok) throw new VerificationError(`edge proof INVALID: ${failedChecks(v.checks)}`, v.checks);
      const verdict = `valid (key ${v.key_id}, ${v.public_key})`;
      const check = { valid: true, key_id: v.key_id, checks: v.checks.map((c) => c.name) };
      if (st.json) return { ...r, edge_proof_check: check };
      const { edge_proof: _p, ...rest } = r;
      return { ...rest, 'edge proof': verdict };
    }));
  examples(hello, [
    ['svc hello', 'prints "edge proof: valid (key …)"; a bad proof exits 1'],
    ['svc hello --nonce my-nonce-123 --json'],
    ['svc hello --node-key <node.public_key from the manifest>'],
  ]);
  const caps = program.command(cliName('CAPS')).description(purpose('CAPS'));
  examples(caps.action(() => run(() => call(settings(), 'CAPS', {}))), [
    ['svc caps'], ['svc --json caps', 'the capability list as JSON'],
  ]);
}

/** A command that names the caller's machine_id and sends its token. */
const machineCall = (st: Settings, cmd: string, args: Record<string, unknown> = {}) =>
  call(st, cmd, { ...args, machine_id: needMachine(st) }, { auth: true });

function addAccount(program: Command, settings: () => Settings, run: Runner): void {
  examples(program.command(cliName('BALANCE')).description(purpose('BALANCE'))
    .action(() => run(() => machineCall(settings(), 'BALANCE'))), [
    [`svc ${M} balance`, 'the token: SVC_MACHINE_TOKEN or the credentials file'],
    [`svc ${M} --json balance`],
  ]);
  examples(program.command(cliName('GET_RECEIPT')).description(purpose('GET_RECEIPT')).argument('<receipt_id>')
    .action((id: string) => run(() => machineCall(settings(), 'GET_RECEIPT', { receipt_id: id }))),
  [[`svc ${M} get-receipt rcpt_…`, 'the receipt_id an execution returned']]);
  examples(program.command(cliName('VERIFY_RECEIPT')).description(purpose('VERIFY_RECEIPT')).argument('<receipt_id>')
    .action((id: string) => run(() => {
      const st = settings();
      return call(st, 'VERIFY_RECEIPT', { receipt_id: id, machine_id: needMachine(st) });
    })), [[`svc ${M} verify-receipt rcpt_…`, 'free: the node re-verifies its signature']]);
  addFundAccount(program, settings, run);
  examples(program.command(cliName('INVOICE_STATUS')).description(purpose('INVOICE_STATUS')).argument('<invoice_id>')
    .action((id: string) => run(() => machineCall(settings(), 'INVOICE_STATUS', { invoice_id: id }))),
  [[`svc ${M} invoice-status inv_…`, 'pending, settled or expired']]);
}

function addFundAccount(program: Command, settings: () => Settings, run: Runner): void {
  const choices = (arg: string) => argOf('FUND_ACCOUNT', arg).enum as string[];
  const fund = program.command(cliName('FUND_ACCOUNT'))
    .description(`${purpose('FUND_ACCOUNT')} (the first invoice claims the machine_id and returns its token once)`)
    .requiredOption('--units <n>', described('whole svcC to fund', argOf('FUND_ACCOUNT', 'units')),
      nonNegativeInt('--units'))
    .addOption(new Option('--network <network>', 'payment network').choices(choices('network')).makeOptionMandatory())
    .addOption(new Option('--asset <asset>', 'stablecoin').choices(choices('asset')).makeOptionMandatory())
    .option('--idempotency-key <key>', described('replay-safe key', argOf('FUND_ACCOUNT', 'idempotency_key')))
    .action((o: { units: number; network: string; asset: string; idempotencyKey?: string }) => run(async () => {
      const st = settings();
      const machineId = needMachine(st);
      const args = clean({ units: o.units, network: o.network, asset: o.asset, idempotency_key: o.idempotencyKey });
      const r = await machineCall(st, 'FUND_ACCOUNT', args);
      if (typeof r.machine_token === 'string') {
        saveToken(machineId, r.machine_token, st.credentials);
        process.stderr.write(`machine token saved to ${st.credentials} (mode 0600); it is shown once\n`);
      }
      return r;
    }));
  examples(fund, [
    [`svc ${M} fund-account --units 5 --network TRON --asset USDT`, 'pay amount_due to pay_to before expires_at'],
  ]);
}

function addCompletion(program: Command): void {
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
}

export function main(argv: string[]): Promise<number> {
  const hint = 'is svcd running there? The edge is --edge HOST:PORT (or SVC_EDGE, or the profile\'s: svc config'
    + ' list; default 127.0.0.1:9443)';
  return runCli(argv, hint, (state) => buildProgram(async (fn) => {
    console.log(render(await fn(), state.json));
  }));
}
