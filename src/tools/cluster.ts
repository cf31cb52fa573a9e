// A local cluster (`npm run cluster`, docs/scale-out.md "A local cluster"): a PostgreSQL server (Debian's
// binaries in a temp dir, as test/support/postgres.ts starts them), N svcd core nodes on its database
// (each its own data dir and node key, the keys a cluster shares copied from the first), and M `svcd
// gateway` processes spreading their calls over every node (SVC_CORE_NODES). Prints where everything
// listens and runs until Ctrl-C (SIGINT) or SIGTERM, then stops the gateways, the nodes (each drains)
// and the database, and removes the temp dir. For trying the topology on one machine, not for serving.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { POSTGRES, freePort, startPostgres, type PgServer } from '../../test/support/postgres.ts';

const USAGE = `Usage: npm run cluster [-- --nodes N --gateways M --http-port PORT | --hosts]

Starts PostgreSQL (its binaries: apt-get install postgresql), N svcd core nodes on one database (default
2) and M HTTP gateways in front of them all (default 2), prints their addresses, stops everything on
Ctrl-C. --http-port P gives the gateways ports P, P+1, … (default: free ports). Data lives in a temp
dir removed at the end. SVC_LOG_LEVEL (default warn) is passed to every svcd.

--hosts puts every part on a host of its own (Linux network namespaces: root and iproute2): PostgreSQL,
each node, each gateway (reaching the nodes over mutual TLS, certificates from a cluster CA made for the
run) and HAProxy (apt-get install haproxy) in front of the gateways; send requests to HAProxy's URL.`;

const SVCD = fileURLToPath(new URL('../bin/svcd.mjs', import.meta.url));
/** What the nodes of one cluster share (docs/scale-out.md "Topology"); each keeps its own node key. */
const SHARED_KEYS = ['quote-key.bin', 'result-key.bin', 'bct-key.bin'];

const OPTIONS = {
  nodes: { type: 'string', default: '2' },
  gateways: { type: 'string', default: '2' },
  'http-port': { type: 'string' },
  hosts: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;
let opts: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];
try {
  opts = parseArgs({ options: OPTIONS }).values;
} catch (e) {
  console.error(`${(e as Error).message}\n\n${USAGE}`);
  process.exit(2);
}
if (opts.help) {
  console.log(USAGE);
  process.exit(0);
}
const count = (v: string, name: string, min: number) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > 16) {
    console.error(`--${name} must be an integer in ${min}..16 (got ${v})`);
    process.exit(2);
  }
  return n;
};
const NODES = count(opts.nodes, 'nodes', 1);
const GATEWAYS = count(opts.gateways, 'gateways', 1);
const HTTP_PORT = Number(opts['http-port'] ?? 0);
if (!Number.isInteger(HTTP_PORT) || HTTP_PORT < 0 || HTTP_PORT + GATEWAYS > 65536) {
  console.error(`--http-port must be a port number (got ${opts['http-port']})`);
  process.exit(2);
}


interface Ready { http: string | null; edge: string | null; backend: string; admin_socket: string | null;
  edge_cert_sha256?: string }
interface Proc { name: string; child: ChildProcess; ready: Ready }

const procs: Proc[] = [];
let pg: PgServer | null = null;
let stopping = false;

/** Starts svcd with `args` in `dir` and resolves with its ready file once written. */
async function svcd(name: string, args: string[], dir: string, env: Record<string, string>): Promise<Proc> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const readyFile = join(dir, 'ready.json');
  const child = spawn(process.execPath, [SVCD, ...args], {
    env: {
      ...process.env, SVC_DATA_DIR: dir, SVC_READY_FILE: readyFile, SVC_LOG_LEVEL: process.env.SVC_LOG_LEVEL || 'warn',
      SVC_EDGE_PORT: '0', SVC_HTTP_PORT: '0', SVC_GATEWAY_PROCESSES: '0',
      // a cluster to try out: invoices on every rail, settled by hand unless wallets are configured
      SVC_PAYMENTS: process.env.SVC_PAYMENTS || 'local', ...env,
    },
    // its own process group: Ctrl-C reaches this script, which stops the parts in order
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  child.on('exit', (code, signal) => {
    if (!stopping) console.error(`cluster: ${name} exited (${signal ?? `code ${code}`}); Ctrl-C stops the rest`);
  });
  while (!existsSync(readyFile)) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited during start`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const p = { name, child, ready: JSON.parse(readFileSync(readyFile, 'utf8')) as Ready };
  procs.push(p);
  return p;
}

function stopProc(p: Proc): Promise<void> {
  const c = p.child;
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((r) => c.once('exit', () => r()));
  c.kill('SIGTERM');
  return exited;
}

async function stopAll(dir: string): Promise<void> {
  stopping = true;
  // gateways first (they finish their requests on the nodes), then the nodes (each drains), then the database
  await Promise.all(procs.filter((p) => p.name.startsWith('gateway')).map(stopProc));
  await Promise.all(procs.filter((p) => p.name.startsWith('core')).map(stopProc));
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
}

async function main(): Promise<void> {
  if (!POSTGRES.present) {
    console.error(`cluster: ${POSTGRES.what} not found (${POSTGRES.hint})`);
    process.exit(1);
  }
  const dir = mkdtempSync(join(tmpdir(), 'svc-cluster-'));
  let done = false;
  const finish = (signal: string) => {
    if (done) return;
    done = true;
    console.log(`cluster: ${signal}, stopping`);
    stopAll(dir).then(() => { console.log('cluster: stopped'); process.exit(0); }, (e: unknown) => {
      console.error(`cluster: stop failed: ${String(e)}`);
      process.exit(1);
    });
  };
  process.on('SIGINT', () => finish('SIGINT'));
  process.on('SIGTERM', () => finish('SIGTERM'));
  // never leave a part behind, whatever ends this process
  process.on('exit', () => { for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL'); });
  try {
    pg = await startPostgres();
    const store = await pg.createDatabase('svc');
    const backends = await Promise.all(Array.from({ length: NODES }, freePort));
    const nodeEnv = (i: number) => ({ SVC_STORE: store, SVC_BACKEND_PORT: String(backends[i]) });
    const first = await svcd('core 1', ['core'], join(dir, 'core-1'), nodeEnv(0));
    await Promise.all(backends.slice(1).map((_, k) => {
      const d = join(dir, `core-${k + 2}`);
      mkdirSync(d, { recursive: true, mode: 0o700 });
      for (const f of SHARED_KEYS) copyFileSync(join(dir, 'core-1', f), join(d, f));
      return svcd(`core ${k + 2}`, ['core'], d, nodeEnv(k + 1));
    }));
    const nodes = backends.map((p) => `127.0.0.1:${p}`).join(',');
    const edgePort = first.ready.edge!.split(':').pop()!;
    await Promise.all(Array.from({ length: GATEWAYS }, (_, i) => svcd(`gateway ${i + 1}`, ['gateway'],
      join(dir, `gateway-${i + 1}`), {
        SVC_CORE_NODES: nodes, SVC_EDGE_PORT: edgePort, SVC_HTTP_PORT: String(HTTP_PORT ? HTTP_PORT + i : 0),
      })));
    const lines = [`svc cluster (data in ${dir}):`, `  database   ${store}`];
    for (const p of procs.filter((x) => x.name.startsWith('core')).sort((a, b) => a.name.localeCompare(b.name))) {
      lines.push(`  ${p.name.padEnd(10)} edge ${p.ready.edge} pin ${p.ready.edge_cert_sha256}`,
        `  ${''.padEnd(10)} backend ${p.ready.backend} admin socket ${p.ready.admin_socket}`);
    }
    for (const p of procs.filter((x) => x.name.startsWith('gateway')).sort((a, b) => a.name.localeCompare(b.name))) {
      lines.push(`  ${p.name.padEnd(10)} ${p.ready.http}`);
    }
    lines.push('Ctrl-C stops everything.');
    console.log(lines.join('\n'));
  } catch (e) {
    console.error(`cluster: ${(e as Error).message}`);
    await stopAll(dir).catch(() => undefined);
    process.exit(1);
  }
}

/** --hosts: every part on a host of its own (test/support/host-cluster.ts), until Ctrl-C. */
async function acrossHosts(): Promise<void> {
  const { HostCluster, PORTS } = await import('../../test/support/host-cluster.ts');
  const level = process.env.SVC_LOG_LEVEL || 'warn';
  const c = await HostCluster.start({
    nodes: NODES, gateways: GATEWAYS, nodeEnv: { SVC_LOG_LEVEL: level }, gatewayEnv: { SVC_LOG_LEVEL: level },
  }).catch((e: unknown) => {
    console.error(`cluster: ${(e as Error).message}`);
    process.exit(1);
  });
  const host = (name: string) => c.hosts.host(name).ip;
  const lines = [`svc cluster across hosts (network namespaces ${c.hosts.tag}-*, data in ${c.dir}):`,
    `  database   ${c.store}`];
  c.nodes.forEach((n, i) => lines.push(
    `  node-${i + 1}     edge ${host(`node-${i + 1}`)}:${PORTS.edge} pin ${n.ready.edge_cert_sha256}`,
    `  ${''.padEnd(10)} backend ${host(`node-${i + 1}`)}:${PORTS.backend} (mutual TLS)`
      + ` admin socket ${n.ready.admin_socket}`));
  c.gateways.forEach((g, i) => lines.push(`  gw-${i + 1}       ${g.ready.http}`));
  lines.push(`  haproxy    ${c.url}   (send requests here)`, 'Ctrl-C stops everything.');
  console.log(lines.join('\n'));
  let done = false;
  const finish = (signal: string) => {
    if (done) return;
    done = true;
    console.log(`cluster: ${signal}, stopping`);
    c.stop().then(() => { console.log('cluster: stopped'); process.exit(0); }, (e: unknown) => {
      console.error(`cluster: stop failed: ${String(e)}`);
      process.exit(1);
    });
  };
  process.on('SIGINT', () => finish('SIGINT'));
  process.on('SIGTERM', () => finish('SIGTERM'));
}

if (opts.hosts) void acrossHosts();
else void main();
