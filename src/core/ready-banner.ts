// What svcd says when it is ready, to a person at a terminal: where it listens, the edge certificate's pin,
// which rails take payments (and how they settle) and which are placeholders, where its data is. Anywhere
// else (a service manager, a pipe, a log collector) the ready line stays the one JSON log line it always was.
import { join } from 'node:path';
import type { Config } from './config.ts';
import type { X402Config } from './x402/config.ts';
import { NO_ADDRESS } from './rails.ts';

export interface ReadyFacts {
  version: string;
  nodeId: string;
  http: string | null;
  edge: string;
  backend: string;
  adminSocket: string;
  metrics: string | null;
  gatewayProcesses: number;
  edgeCertSha256: string;
  selfSigned: boolean;
  /** each x402 network's fee account: the EVM relayer, the Solana fee payer (SVC_X402=on) */
  x402FeeAccounts?: Record<string, string>;
}

/** A database URL as it may be shown: without its password. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}

/** Each rail and how it takes payments now: a watcher, the operator by hand, or not at all (no address). */
function railLines(config: Config): string[] {
  const watched = new Set(config.watchers.map((w) => w.rail as string));
  return config.rails.map((r) => {
    const name = `${r.asset} on ${r.network}`.padEnd(15);
    if (r.address === NO_ADDRESS && config.payments !== 'local') {
      return `${name} placeholder: no receiving address (SVC_WALLET_${r.rail}); funding on it is refused`;
    }
    if (r.address === NO_ADDRESS) return `${name} local: invoices open, settled by hand (svc-admin settle-invoice)`;
    const how = watched.has(r.rail) ? 'a watcher credits payments' : 'settled by hand (no SVC_WATCH_ RPC)';
    return `${name} live: ${r.address}, ${how}`;
  });
}

/** The banner, as lines (no trailing newline). */
export function banner(config: Config, f: ReadyFacts): string {
  const store = config.store === null ? `LevelDB in ${join(config.dataDir, 'ledger')}`
    : `PostgreSQL ${redactedUrl(config.store)}`;
  const rows: [string, string][] = [
    ['HTTP', f.http === null ? 'off (svcd core: no gateway)'
      : `${f.http}${f.gatewayProcesses ? ` (${f.gatewayProcesses} gateway processes)` : ''}`],
    ['svc/1 edge', `${f.edge} (TLS)`],
    ['edge pin', `${f.edgeCertSha256}${f.selfSigned ? ' (self-signed: clients pass --pin or SVC_EDGE_PIN)' : ''}`],
    ['admin socket', f.adminSocket],
    ['backend', f.backend],
    ['metrics', f.metrics === null ? 'off (SVC_METRICS_PORT)' : `http://${f.metrics}/metrics`],
    ['data dir', config.dataDir],
    ['ledger', store],
    ['payments', config.payments === 'local' ? 'local: for trying svc out, settled by hand' : 'live'],
    ['x402', config.x402 ? x402Line(config.x402, f.x402FeeAccounts ?? {}) : 'off (SVC_X402)'],
  ];
  const width = Math.max(...rows.map(([k]) => k.length)) + 2;
  const lines = [`svcd ${f.version} ready, node ${f.nodeId}`, ''];
  for (const [k, v] of rows) lines.push(`  ${k.padEnd(width)}${v}`);
  lines.push('', '  rails');
  for (const r of railLines(config)) lines.push(`    ${r}`);
  if (f.http !== null) lines.push('', `  try: curl -s '${f.http}/api/v1/hello?nonce=my-nonce-123'`);
  lines.push('', 'Logs follow as JSON lines. Ctrl-C stops (in-flight requests finish first).');
  return lines.join('\n');
}

/** Each x402 network: who is paid and which account pays the fees (the operator funds it). */
function x402Line(x: X402Config, fees: Record<string, string>): string {
  const parts: string[] = [];
  const fee = (n: string) => fees[n] ?? '?';
  if (x.evm) parts.push(`${x.evm.network}, paid to ${x.evm.payTo}, relayer ${fee(x.evm.network)} (fund its gas)`);
  if (x.solana) {
    parts.push(`${x.solana.network}, paid to ${x.solana.payTo}, fee payer ${fee(x.solana.network)} (fund its SOL)`);
  }
  return `on: ${parts.join('; ')}`;
}
