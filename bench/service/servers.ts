// The servers the service bench measures, each in its own node process: the anchors (bench/service/
// anchor.ts) and the real svcd through the test harness (`svcd start`, with K node:cluster gateway
// workers in front or none). Knows how to start, fund and stop them; measures nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Svcd, fundMachine } from '../../test/support/svcd.ts';
import type { Machine } from './load.ts';

/** Limits raised so the bench measures the service, not its rate limiter. */
export const BENCH_ENV: Record<string, string> = {
  SVC_RATE_PUBLIC_LOW: '100000000/60',
  SVC_RATE_PAID_EXECUTION: '100000000/60',
  SVC_MAX_OPEN_INVOICES_PER_ADDRESS: '1000000',
  SVC_LOG_LEVEL: 'error',
};

export interface Server {
  name: string;
  /** base URLs; more than one when K gateways share the load */
  urls: string[];
  /** the process that answers (svcd's core process for a K-gateway topology) */
  pid: number;
  stop(): Promise<void>;
}

const ANCHOR = fileURLToPath(new URL('./anchor.ts', import.meta.url));
const LADDER = fileURLToPath(new URL('./ladder.ts', import.meta.url));
const ANCHOR_CLUSTER = fileURLToPath(new URL('./anchor-cluster.ts', import.meta.url));

export type AnchorMode = 'bare' | 'put' | 'paid' | 'paid-pg';

/** An anchor app in its own process; `paid-pg` keeps its quotes in the database `pgUrl`. */
export async function startAnchor(name: string, mode: AnchorMode, pgUrl?: string): Promise<Server> {
  return startScript(name, ANCHOR, mode, pgUrl);
}

/** The bare anchor in `k` node:cluster workers sharing one port (anchor-cluster.ts): svcd K's process count. */
export async function startAnchorCluster(name: string, k: number): Promise<Server> {
  return startScript(name, ANCHOR_CLUSTER, String(k));
}

/**
 * One step of the CPU ladder (ladder.ts; its steps: ladder-steps.ts) in its own process, configured as
 * svcd is in the bench (BENCH_ENV) but logging at svcd's default level.
 */
export async function startLadderStep(name: string, step: string): Promise<Server> {
  const { SVC_LOG_LEVEL: _level, ...env } = { ...process.env, ...BENCH_ENV };
  return startScript(name, LADDER, step, undefined, env);
}

/** A bench script's server (`script <arg> <temp dir | pgUrl>`): resolves with the URL it prints first. */
async function startScript(
  name: string, script: string, arg: string, pgUrl?: string, env: NodeJS.ProcessEnv = process.env,
): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-anchor-'));
  const proc = spawn(process.execPath, ['--import', 'tsx', script, arg, pgUrl ?? dir], {
    stdio: ['ignore', 'pipe', 'inherit'], env,
  });
  const lines = createInterface({ input: proc.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`${name} (${arg}) exited ${code}`)));
    lines.once('line', (l) => resolve((JSON.parse(l) as { url: string }).url));
  });
  return {
    name,
    urls: [url],
    pid: proc.pid!,
    stop: async () => {
      await stopProcess(proc);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  proc.kill('SIGTERM');
  await exited;
}

export interface SvcdServer extends Server {
  /** the process holding the core: funding goes through its edge and admin socket */
  core: Svcd;
}

/**
 * The real svcd: one `svcd start` with SVC_GATEWAY_PROCESSES = gateways — 0: core and gateway in one
 * process (the gateway calls the core directly); K: the core and K node:cluster gateway workers on
 * one HTTP port, reaching the core over svc/1 on the loopback backend.
 */
export async function startSvcd(name: string, gateways: number, env: Record<string, string> = {}): Promise<SvcdServer> {
  const s = await Svcd.start({ ...BENCH_ENV, ...env, SVC_GATEWAY_PROCESSES: String(gateways) }, ['start']);
  const stop = async () => {
    await s.stop();
    s.cleanup();
  };
  return { name, urls: [s.ready.http!], pid: s.proc!.pid!, core: s, stop };
}

/** Funds n machines (bench0 … bench<n-1>) on a svcd, a few at a time (the edge caps connections per address). */
export async function fundMachines(s: Svcd, n: number): Promise<Machine[]> {
  const machines: Machine[] = [];
  for (let i = 0; i < n; i += 4) {
    const ids = Array.from({ length: Math.min(4, n - i) }, (_, j) => `bench${i + j}`);
    const tokens = await Promise.all(ids.map((id) => fundMachine(s, id, 1000)));
    ids.forEach((id, j) => machines.push({ id, token: tokens[j]! }));
  }
  return machines;
}

/** Machines for an anchor: it checks only that a bearer token is present. */
export function anchorMachines(n: number): Machine[] {
  return Array.from({ length: n }, (_, i) => ({ id: `bench${i}`, token: `anchor-token-${i}` }));
}
