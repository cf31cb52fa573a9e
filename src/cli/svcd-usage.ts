// svcd's command line: its subcommands, --help and --version, and usage errors (exit 2 with the
// usage line), the same conventions as svc and svc-admin. main.ts runs what this returns. Kept
// apart from main.ts so the help text is testable without starting anything.
import { CORE_VERSION, VERSIONS } from '../protocol/versions.ts';

export const SVCD_COMMANDS = {
  start: 'core and HTTP gateway (the default): one process, or gateway workers too (SVC_GATEWAY_PROCESSES)',
  core: 'the core alone: svc/1 TLS edge, backend (loopback TCP) and admin socket',
  gateway: 'the HTTP gateway alone, calling a core\'s backend at 127.0.0.1:SVC_BACKEND_PORT (or the nodes in '
    + 'SVC_CORE_NODES)',
  manifest: 'print the manifest hash to publish as a DNS TXT record',
  selfcheck: 'check the WASM kernels against known answers and exit',
  restore: '--expect-sha256 HEX <backup> <data dir>: check a backup (the manifest_sha256 backup printed, hashes, '
    + 'ledger, audit), then create the data dir from it',
  audit: '[--json] [--csv DIR]: the money audit on a stopped node\'s SVC_DATA_DIR (online: svc-admin audit)',
  migrate: '--to postgres://…: copy a stopped node\'s LevelDB ledger into an empty PostgreSQL database and audit '
    + 'both sides',
  'cluster-cert': '--ca DIR NAME [HOST ...]: issue a cluster member\'s certificate for mutual TLS between gateways '
    + 'and nodes (the CA is created in DIR on first use)',
} as const;

/** The subcommands that take arguments of their own (main.ts checks them). */
const TAKES_ARGS: readonly SvcdCommand[] = ['restore', 'audit', 'migrate', 'cluster-cert'];

export type SvcdCommand = keyof typeof SVCD_COMMANDS;

export const SVCD_USAGE = `Usage: svcd [${Object.keys(SVCD_COMMANDS).join('|')}] [--help] [--version]`;

export function svcdHelp(): string {
  const width = Math.max(...Object.keys(SVCD_COMMANDS).map((c) => c.length)) + 2;
  const commands = Object.entries(SVCD_COMMANDS).map(([c, about]) => `  ${c.padEnd(width)}${about}`);
  return [
    SVCD_USAGE,
    '',
    `svcd ${CORE_VERSION}: the svc service (${VERSIONS.coreProtocol} core and HTTP gateway ${VERSIONS.api}).`,
    '',
    'Commands:',
    ...commands,
    '',
    'Options:',
    '  -h, --help     show this help (also: svcd <command> --help)',
    '  -V, --version  print the version',
    '',
    'Configuration: environment variables only (SVC_DATA_DIR, SVC_EDGE_PORT, SVC_HTTP_PORT, ...);',
    'every one is listed in README.md, section "Configuration". With SVC_READY_FILE set, svcd writes',
    'its bound addresses and the edge certificate pin (edge_cert_sha256) there once it is ready; the',
    '"svcd ready" log line carries the same fields.',
    '',
    'Examples:',
    '  svcd                                   # core + gateway: http://127.0.0.1:8080, svc/1 edge on :9443',
    '  SVC_DATA_DIR=/var/lib/svc svcd core    # the core alone, its ledger and keys in /var/lib/svc',
    '  SVC_BASE_URL=https://svc.example svcd manifest',
    '  svcd selfcheck',
    '  svcd cluster-cert --ca /etc/svc/cluster-ca node-1 10.0.0.11   # then copy ca-cert.pem and node-1-*.pem',
  '  svcd restore --expect-sha256 <manifest_sha256> /backups/svc-2026-11-23 /var/lib/svc-restored',
    '',
    'Exit codes: 0 ok (or stopped by SIGTERM/SIGINT), 1 failed to start or failed check, 2 usage.',
    '',
  ].join('\n');
}

export function svcdVersion(): string {
  return `svcd ${CORE_VERSION} (${VERSIONS.coreProtocol}, api ${VERSIONS.api})\n`;
}

/**
 * Reads svcd's arguments. Prints help or the version (exit 0) or a usage error (exit 2) and
 * returns null, or returns the subcommand to run and its own arguments (restore and audit only).
 */
export function svcdCommand(
  argv: readonly string[],
  out: { stdout: (s: string) => void; stderr: (s: string) => void; exit: (code: number) => void } = {
    stdout: (s) => { process.stdout.write(s); },
    stderr: (s) => { process.stderr.write(s); },
    exit: (code) => { process.exitCode = code; },
  },
): { command: SvcdCommand; args: string[] } | null {
  if (argv.some((a) => a === '-h' || a === '--help' || a === 'help')) {
    out.stdout(svcdHelp());
    out.exit(0);
    return null;
  }
  if (argv.some((a) => a === '-V' || a === '--version')) {
    out.stdout(svcdVersion());
    out.exit(0);
    return null;
  }
  const [first = 'start', ...rest] = argv;
  const usage = (message: string) => {
    out.stderr(`svcd: ${message}\n${SVCD_USAGE}\n(run svcd --help for details)\n`);
    out.exit(2);
    return null;
  };
  if (!Object.hasOwn(SVCD_COMMANDS, first)) {
    return usage(first.startsWith('-') ? `unknown option ${first}` : `unknown command ${first}`);
  }
  const command = first as SvcdCommand;
  if (rest.length && !TAKES_ARGS.includes(command)) {
    return usage(`unexpected argument ${rest[0]} (svcd is configured by environment variables)`);
  }
  return { command, args: rest };
}
