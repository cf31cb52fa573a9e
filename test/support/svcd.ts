// Test harness: starts the real svcd (src/bin/svcd.mjs) on ephemeral ports with a temp data dir,
// waits for its ready file, and offers clients for each listener and the real CLI binaries.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SvcClient } from '../../src/client/client.ts';
import { serviceByName } from '../../src/protocol/services.ts';
import { txRef } from './references.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = {
  svcd: join(ROOT, 'src/bin/svcd.mjs'),
  svc: join(ROOT, 'src/bin/svc.mjs'),
  admin: join(ROOT, 'src/bin/svc-admin.mjs'),
};

export interface Ready {
  http: string | null;
  edge: string;
  backend: string;
  admin_socket: string;
  data_dir: string;
  edge_cert_sha256: string;
  /** `svcd start`: gateway worker processes in front of the core (0: the gateway is in-process) */
  gateway_processes?: number;
  /** the metrics listener's address (SVC_METRICS_PORT), null when off */
  metrics?: string | null;
}

export class Svcd {
  #dataDir: string | null;
  readonly env: Record<string, string>;
  proc: ChildProcess | null = null;
  ready!: Ready;
  stderr = '';
  stdout = '';

  /** the svcd to run: this tree's, or another version's (a git worktree: test/cluster/rolling-upgrade.test.ts) */
  bin = BIN.svcd;

  /** `on`: the command prefix that runs svcd on another host (hosts.ts), e.g. `ip netns exec NS` */
  constructor(env: Record<string, string> = {}, dataDir?: string, readonly on: string[] = []) {
    this.#dataDir = dataDir ?? null;
    this.env = env;
  }

  /** The data dir, made on first use: a Svcd declared for a file whose tests all are filtered out leaves none. */
  get dataDir(): string {
    this.#dataDir ??= mkdtempSync(join(tmpdir(), 'svcd-test-'));
    return this.#dataDir;
  }

  /** Starts svcd: `core` (default) or `start` (core + HTTP gateway) or `gateway`. */
  static async start(env: Record<string, string> = {}, args: string[] = ['core']): Promise<Svcd> {
    const s = new Svcd(env);
    await s.start(args);
    return s;
  }

  get readyFile(): string { return join(this.dataDir, 'ready.json'); }
  get edgePort(): number { return Number(this.ready.edge.split(':').pop()); }
  get backendPort(): number { return Number(this.ready.backend.split(':').pop()); }

  /** Starts (or restarts) svcd on the same data dir; resolves when the ready file appears. */
  #args: string[] = ['core'];

  async start(args: string[] = this.#args): Promise<void> {
    this.#args = args;
    rmSync(this.readyFile, { force: true });
    this.stderr = ''; this.stdout = '';
    const argv = [...this.on, process.execPath, this.bin, ...args];
    const proc = spawn(argv[0]!, argv.slice(1), {
      env: {
        ...process.env, SVC_DATA_DIR: this.dataDir, SVC_EDGE_PORT: '0', SVC_BACKEND_PORT: '0', SVC_HTTP_PORT: '0',
        SVC_READY_FILE: this.readyFile, SVC_LOG_LEVEL: 'warn', SVC_KERNEL_THREADS: '1',
        // the functional tests are one client at loopback speed; tests of the limits set their own
        SVC_RATE_PUBLIC_LOW: '1000000/60', SVC_RATE_PAID_EXECUTION: '1000000/60',
        SVC_SANDBOX_MAX_PER_CLIENT: '100000', SVC_MAX_OPEN_INVOICES_PER_ADDRESS: '1000000',
        // invoices on every rail, settled by hand (no wallets here); the payment tests set their own
        SVC_PAYMENTS: 'local',
        // one process whatever the machine's cores (auto would fork gateways on a big CI box); the
        // topology tests set their own
        SVC_GATEWAY_PROCESSES: '0', ...this.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc = proc;
    proc.stdout!.on('data', (d) => { this.stdout += d; });
    proc.stderr!.on('data', (d) => { this.stderr += d; });
    // generous: it only stops a hang; a loaded 2-core box has taken over a minute to start svcd
    const deadline = Date.now() + 150_000;
    while (!existsSync(this.readyFile)) {
      if (proc.exitCode !== null) throw new Error(`svcd exited ${proc.exitCode}: ${this.stderr}${this.stdout}`);
      if (Date.now() > deadline) {
        // never leave a half-started svcd behind: it would keep the test process from exiting
        proc.kill('SIGKILL');
        throw new Error(`svcd not ready after 150 s: ${this.stderr}${this.stdout.slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    this.ready = JSON.parse(readFileSync(this.readyFile, 'utf8')) as Ready;
  }

  /** Runs svcd expecting it to fail at start; returns its exit code and output. */
  async startExpectingFailure(): Promise<{ code: number | null; output: string }> {
    try { await this.start(); } catch { /* expected */ }
    await new Promise<void>((r) => { if (this.proc!.exitCode !== null) r(); else this.proc!.once('exit', () => r()); });
    return { code: this.proc!.exitCode, output: this.stderr + this.stdout };
  }

  edge(host = '127.0.0.1'): Promise<SvcClient> {
    return SvcClient.connect({ kind: 'tls', host, port: this.edgePort, pin: this.ready.edge_cert_sha256 });
  }
  backend(): Promise<SvcClient> {
    return SvcClient.connect({ kind: 'tcp', host: '127.0.0.1', port: this.backendPort });
  }
  admin(): Promise<SvcClient> { return SvcClient.connect({ kind: 'unix', path: this.ready.admin_socket }); }

  /** Runs the real `svc` CLI against this edge. */
  svc(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    return runBin(
      BIN.svc,
      ['--edge', `127.0.0.1:${this.edgePort}`, '--pin', this.ready.edge_cert_sha256, ...args],
      { SVC_CREDENTIALS: join(this.dataDir, 'cli-credentials.json'), ...env },
    );
  }
  svcAdmin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return runBin(BIN.admin, ['--data-dir', this.dataDir, ...args]);
  }

  async stop(): Promise<number | null> {
    const p = this.proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return p?.exitCode ?? null;
    const exited = new Promise<number | null>((r) => p.once('exit', (code) => r(code)));
    p.kill('SIGTERM');
    return exited;
  }

  async kill9(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((r) => p.once('exit', () => r()));
    p.kill('SIGKILL');
    await exited;
  }

  /** Stops svcd (exit code must be 0) and recomputes the ledger from its journal. */
  async stopAndCheckLedger(): Promise<{ exitCode: number | null; ok: boolean; problems: string[] }> {
    const exitCode = await this.stop();
    const { openStore } = await import('../../src/store/store.ts');
    const { Ledger } = await import('../../src/core/ledger.ts');
    // the ledger this svcd wrote: its data dir's LevelDB, or the database SVC_STORE names
    const store = await openStore(this.dataDir, this.env.SVC_STORE || null);
    try {
      const check = await new Ledger(store).verify();
      return { exitCode, ok: check.ok, problems: check.problems };
    } finally {
      await store.close();
    }
  }

  cleanup(): void {
    if (this.#dataDir) rmSync(this.#dataDir, { recursive: true, force: true });
  }
}

/**
 * The CLIs' config dir in tests, unless a test gives its own XDG_CONFIG_HOME: one that does not exist, so
 * a profile saved by whoever runs the tests (svc login in their ~/.config/svc) never takes part.
 */
const NO_CONFIG = join(tmpdir(), `svc-tests-no-config-${process.pid}`);

export function runBin(
  bin: string, args: string[], env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const opts = { env: { ...process.env, XDG_CONFIG_HOME: NO_CONFIG, ...env }, maxBuffer: 16 << 20 };
    execFile(process.execPath, [bin, ...args], opts, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/**
 * What a `--json` CLI run printed, parsed: its result on stdout, or (src/cli/output.ts) its failure, one
 * JSON object on stderr.
 */
export function cliJson(r: { stdout: string; stderr: string }): any {
  return JSON.parse(r.stdout || r.stderr);
}

/** Funds a fresh machine through the real protocol: invoice, admin settlement. Returns its token. */
export async function fundMachine(s: Svcd, machineId: string, units: number): Promise<string> {
  const c = await s.edge();
  const a = await s.admin();
  try {
    const inv = await c.request('FUND_ACCOUNT', { machine_id: machineId, units, network: 'TRON', asset: 'USDT' });
    const reference = txRef(`test-${machineId}`, 'USDT_TRON');
    await a.request('SETTLE_INVOICE', { invoice_id: inv.invoice_id, reference });
    return inv.machine_token as string;
  } finally {
    c.close(); a.close();
  }
}

/**
 * One paid execution through the real protocol: QUOTE `service` with `quote`, ACCEPT_QUOTE, then the
 * service's execution command (its SERVICES entry names it) with `exec`. Returns the execution's result.
 */
export async function paidExecution(
  c: SvcClient, machineId: string, token: string, service: string,
  quote: Record<string, unknown>, exec: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const command = serviceByName(service)?.command;
  if (!command) throw new Error(`no priced service named ${service}`);
  const q = await c.request('QUOTE', { service, machine_id: machineId, ...quote });
  await c.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: machineId }, { token });
  return c.request(command, { quote_id: q.quote_id, machine_id: machineId, ...exec }, { token });
}
