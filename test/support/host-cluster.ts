// A cluster across hosts (docs/scale-out.md "Across hosts"), each part on a host of its own (hosts.ts):
// PostgreSQL on `db`; core nodes on `node-1`…, their backends on their own address over mutual TLS;
// `svcd gateway`s on `gw-1`…, each reaching every node across the bridge; Debian's HAProxy on `lb` in
// front of the gateways, checking each one's /readyz. The client (this process) reaches HAProxy, the
// nodes' edges and the database across the bridge, and each node's admin socket through the file system
// (a unix socket is not on the network). Used by test/cluster/hosts.test.ts and `npm run cluster -- --hosts`.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterCert } from '../../src/cli/cluster-cert.ts';
import { SHARED_KEYS } from './cluster.ts';
import { Hosts } from './hosts.ts';
import type { Need } from './needs.ts';
import { startPostgres, type PgServer } from './postgres.ts';
import { Svcd } from './svcd.ts';

const hasHaproxy = spawnSync('sh', ['-c', 'command -v haproxy'], { encoding: 'utf8' }).status === 0;

/** testNeeding's need: Debian's HAProxy. */
export const HAPROXY: Need = {
  what: 'HAProxy (haproxy)', present: hasHaproxy, hint: 'apt-get install haproxy (.ci/run does)',
};

/** Ports inside each host: every host has its own network stack, so they are fixed. */
export const PORTS = { edge: 9443, backend: 9444, http: 8080, lb: 80 } as const;

export interface HostClusterOptions {
  nodes?: number;
  gateways?: number;
  nodeEnv?: Record<string, string>;
  gatewayEnv?: Record<string, string>;
}

/** HAProxy's configuration: HTTP round robin over the gateways, each checked on /readyz twice a second. */
export function haproxyConfig(listen: string, gateways: { name: string; address: string }[]): string {
  return [
    'global', '  maxconn 4096', '',
    'defaults', '  mode http', '  timeout connect 2s', '  timeout client 60s', '  timeout server 60s',
    // a request whose connection to a gateway failed goes to another (nothing reached the first)
    '  retries 2', '  option redispatch', '  option forwardfor', '',
    'frontend svc', `  bind ${listen}`, '  default_backend gateways', '',
    'backend gateways', '  balance roundrobin', '  option httpchk GET /readyz', '  http-check expect status 200',
    '  default-server inter 500ms fall 2 rise 2',
    ...gateways.map((g) => `  server ${g.name} ${g.address} check`), '',
  ].join('\n');
}

export class HostCluster {
  private constructor(
    readonly hosts: Hosts, readonly dir: string, readonly pg: PgServer, readonly store: string,
    readonly nodes: Svcd[], readonly gateways: Svcd[], readonly haproxy: ChildProcess, readonly url: string,
  ) {}

  /** Builds the hosts and starts every part on its own; on a failure what started is stopped. */
  static async start(opts: HostClusterOptions = {}): Promise<HostCluster> {
    const n = opts.nodes ?? 2, m = opts.gateways ?? 2;
    const names = ['db', 'lb', ...Array.from({ length: n }, (_, i) => `node-${i + 1}`),
      ...Array.from({ length: m }, (_, i) => `gw-${i + 1}`)];
    const hosts = Hosts.create(names);
    const dir = mkdtempSync(join(tmpdir(), 'svc-hosts-'));
    const parts: { pg?: PgServer; nodes: Svcd[]; gateways: Svcd[]; haproxy?: ChildProcess } = {
      nodes: [], gateways: [],
    };
    try {
      const ca = join(dir, 'ca');
      for (const name of names.filter((x) => x.startsWith('node-') || x.startsWith('gw-'))) {
        await clusterCert(ca, name, [hosts.host(name).ip]);
      }
      const member = (name: string) => ({
        SVC_CLUSTER_CA: join(ca, 'ca-cert.pem'), SVC_CLUSTER_CERT: join(ca, `${name}-cert.pem`),
        SVC_CLUSTER_KEY: join(ca, `${name}-key.pem`),
      });
      const db = hosts.host('db');
      parts.pg = await startPostgres({ on: hosts.on('db'), host: db.ip, clients: `${hosts.subnet}.0/24` });
      const store = await parts.pg.createDatabase('svc');
      const nodeEnv = (name: string) => ({
        SVC_STORE: store, SVC_BACKEND_HOST: hosts.host(name).ip, SVC_BACKEND_PORT: String(PORTS.backend),
        SVC_EDGE_PORT: String(PORTS.edge), ...member(name), ...opts.nodeEnv,
      });
      for (let i = 1; i <= n; i++) {
        const name = `node-${i}`;
        const data = join(dir, name);
        mkdirSync(data, { mode: 0o700 });
        if (i > 1) for (const f of SHARED_KEYS) copyFileSync(join(dir, 'node-1', f), join(data, f));
        const node = new Svcd(nodeEnv(name), data, hosts.on(name));
        parts.nodes.push(node);
        await node.start(['core']); // one after another: the first makes the keys the others share
      }
      const coreNodes = parts.nodes.map((_, i) => `${hosts.host(`node-${i + 1}`).ip}:${PORTS.backend}`).join(',');
      const lb = hosts.host('lb');
      for (let i = 1; i <= m; i++) {
        const name = `gw-${i}`;
        mkdirSync(join(dir, name), { mode: 0o700 });
        parts.gateways.push(new Svcd({
          SVC_CORE_NODES: coreNodes, SVC_HTTP_HOST: hosts.host(name).ip, SVC_HTTP_PORT: String(PORTS.http),
          SVC_EDGE_PORT: String(PORTS.edge), SVC_TRUST_PROXY: '1', SVC_TRUSTED_PROXIES: lb.ip,
          ...member(name), ...opts.gatewayEnv,
        }, join(dir, name), hosts.on(name)));
      }
      await Promise.all(parts.gateways.map((g) => g.start(['gateway'])));
      const config = join(dir, 'haproxy.cfg');
      const backends = parts.gateways.map((_, i) => ({
        name: `gw-${i + 1}`, address: `${hosts.host(`gw-${i + 1}`).ip}:${PORTS.http}`,
      }));
      writeFileSync(config, haproxyConfig(`${lb.ip}:${PORTS.lb}`, backends));
      parts.haproxy = spawn(hosts.on('lb')[0]!, [...hosts.on('lb').slice(1), 'haproxy', '-db', '-f', config], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      await listening(lb.ip, PORTS.lb, parts.haproxy);
      return new HostCluster(hosts, dir, parts.pg, store, parts.nodes, parts.gateways, parts.haproxy,
        `http://${lb.ip}:${PORTS.lb}`);
    } catch (e) {
      await stopParts(parts.gateways, parts.nodes, parts.haproxy, parts.pg);
      hosts.destroy();
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
  }

  /** Stops HAProxy, the gateways and the nodes (SIGTERM each: they drain); the database stays up. */
  stopServing(): Promise<void> {
    return stopParts(this.gateways, this.nodes, this.haproxy, null);
  }

  /** stopServing(), then the database; removes the hosts. */
  async stop(): Promise<void> {
    await this.stopServing();
    await this.pg.stop();
    this.hosts.destroy();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function stopParts(gateways: Svcd[], nodes: Svcd[], haproxy?: ChildProcess, pg?: PgServer | null): Promise<void> {
  if (haproxy && haproxy.exitCode === null && haproxy.signalCode === null) {
    const gone = new Promise((r) => haproxy.once('exit', r));
    haproxy.kill('SIGTERM');
    await gone;
  }
  await Promise.all(gateways.map((g) => g.stop()));
  for (const s of nodes) if (s.proc?.signalCode === null) s.proc.kill('SIGCONT'); // a stopped one cannot drain
  await Promise.all(nodes.map((s) => s.stop()));
  await pg?.stop();
}

/** Resolves once something accepts connections at host:port; fails if `proc` exits first. */
export async function listening(host: string, port: number, proc: ChildProcess): Promise<void> {
  let output = '';
  proc.stdout?.on('data', (d) => { output += d; });
  proc.stderr?.on('data', (d) => { output += d; });
  for (let i = 0; i < 300; i++) {
    if (proc.exitCode !== null) throw new Error(`haproxy exited ${proc.exitCode}: ${output}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect({ host, port }, () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`haproxy not listening on ${host}:${port}: ${output}`);
}
