// A cluster for tests and the service bench (docs/scale-out.md "Topology"): N real svcd core nodes on one
// PostgreSQL database, each with its own data dir and node key, sharing the keys a cluster shares (copied
// from the first node's data dir before the others first start), and M real `svcd gateway` processes,
// each spreading its calls over every node (SVC_CORE_NODES). Each node's backend port is fixed when the
// cluster is made, so a node killed and restarted comes back where the gateways look for it.
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './postgres.ts';
import { Svcd } from './svcd.ts';
import { until } from './until.ts';

/** What the nodes of one cluster share; each keeps its own node-ed25519.pem (it signs its own receipts). */
export const SHARED_KEYS = ['quote-key.bin', 'result-key.bin', 'bct-key.bin'];

export { freePort };

/**
 * Gateways for tests that load them from one address: no per-address connection cap, and idle
 * keep-alive connections kept (a client's POST on a connection the gateway just closed would fail
 * between the test and the gateway, which is not what these tests are about).
 */
export const LOADED_GATEWAY_ENV: Record<string, string> = {
  SVC_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0', SVC_HTTP_KEEP_ALIVE_TIMEOUT_MS: '600000',
};

export interface ClusterOptions {
  /** core nodes (default 2) */
  nodes?: number;
  /** `svcd gateway` processes in front of them (default 2) */
  gateways?: number;
  /** more environment for every node */
  nodeEnv?: Record<string, string>;
  /** more environment for every gateway */
  gatewayEnv?: Record<string, string>;
}

export class Cluster {
  private constructor(
    readonly store: string, readonly nodes: Svcd[], readonly gateways: Svcd[],
  ) {}

  /** The gateways' HTTP base URLs. */
  get urls(): string[] { return this.gateways.map((g) => g.ready.http!); }

  /** Starts the nodes (the first alone: it makes the shared keys), then the gateways. */
  static async start(store: string, opts: ClusterOptions = {}): Promise<Cluster> {
    const n = opts.nodes ?? 2, m = opts.gateways ?? 2;
    const ports = await Promise.all(Array.from({ length: n }, freePort));
    const env = (i: number) => ({ SVC_STORE: store, SVC_BACKEND_PORT: String(ports[i]), ...opts.nodeEnv });
    const nodes: Svcd[] = [new Svcd(env(0))];
    const c = new Cluster(store, nodes, []);
    try {
      await nodes[0]!.start(['core']);
      for (let i = 1; i < n; i++) {
        const dir = mkdtempSync(join(tmpdir(), 'svcd-test-'));
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        for (const f of SHARED_KEYS) copyFileSync(join(nodes[0]!.dataDir, f), join(dir, f));
        nodes.push(new Svcd(env(i), dir));
      }
      await Promise.all(nodes.slice(1).map((s) => s.start(['core'])));
      const list = ports.map((p) => `127.0.0.1:${p}`).join(',');
      for (let i = 0; i < m; i++) c.gateways.push(new Svcd({ SVC_CORE_NODES: list, ...opts.gatewayEnv }));
      await Promise.all(c.gateways.map((g) => g.start(['gateway'])));
    } catch (e) {
      await c.stop();
      throw e;
    }
    return c;
  }

  /** Stops the gateways, then the nodes (SIGTERM; a node already dead stays so); removes their data dirs. */
  async stop(): Promise<void> {
    await Promise.all(this.gateways.map((g) => g.stop()));
    await Promise.all(this.nodes.map((s) => s.stop()));
    for (const s of [...this.gateways, ...this.nodes]) s.cleanup();
  }
}

export interface Answer { status: number; body: any }

/** One JSON request to a gateway (keep-alive); a connection failure is thrown. */
export async function api(base: string, path: string, body?: unknown, token?: string): Promise<Answer> {
  const r = await fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await r.text();
  let parsed: unknown = text;
  try { parsed = JSON.parse(text); } catch { /* keep the text */ }
  return { status: r.status, body: parsed };
}

/**
 * The node ids `calls` HELLOs through `base` reached, sorted, each once: which nodes serve behind a
 * gateway or a balancer. A call that cannot connect throws (a poll catches it: not yet).
 */
export async function nodeIds(base: string, calls = 6): Promise<string[]> {
  const seen = new Set<string>();
  for (let i = 0; i < calls; i++) seen.add((await api(base, '/api/v1/hello')).body.node_id as string);
  return [...seen].sort();
}

/** Polls until `calls` HELLOs through `base` reach `n` nodes (a failed connection is a poll that failed). */
export function untilNodes(base: string, n: number, what: string, calls = 6): Promise<true> {
  const reached = async () => (await nodeIds(base, calls).catch(() => [])).length === n;
  return until(what, reached, { every: 500, ms: 120_000 });
}

/** "200", or "STATUS code" of an ApiError. */
export const describe = (a: Answer) => (a.status === 200 ? '200' : `${a.status} ${a.body?.error?.code ?? ''}`);

/**
 * The audit of the shared ledger, read from the database itself (no node's identity: each node signs
 * its own receipts, so none checks every signature), and each pulse chain in it checked link by link:
 * indexes 0..n without a gap, one chain id, each pulse naming the previous one's output and revealing
 * the seed the previous one committed to. Returns the report and the chains' lengths by node id.
 */
export async function auditCluster(store: string): Promise<{
  report: import('../../src/core/audit.ts').AuditReport; chains: Map<string, number>; forks: string[];
}> {
  const { PgStore } = await import('../../src/store/pg-store.ts');
  const { audit } = await import('../../src/core/audit.ts');
  const { createHash } = await import('node:crypto');
  const db = await PgStore.open(store, { poolSize: 2 });
  try {
    const report = await audit(db);
    const chains = new Map<string, number>();
    const forks: string[] = [];
    const last = new Map<string, { index: number; chain: string; output: string; commit: string }>();
    for await (const [, v] of db.entries('pulses')) {
      const { pulse, output_hash: output } = v as { pulse: Record<string, any>; output_hash: string };
      const node = pulse.node_id as string;
      const prev = last.get(node);
      const where = `${node} #${pulse.index}`;
      if (!prev) {
        if (pulse.index !== 0 || pulse.prev_output !== null) forks.push(`${where}: the chain does not start at 0`);
      } else {
        if (pulse.index !== prev.index + 1) forks.push(`${where}: follows #${prev.index}`);
        if (pulse.chain_id !== prev.chain) forks.push(`${where}: chain id ${pulse.chain_id}, was ${prev.chain}`);
        if (pulse.prev_output !== prev.output) forks.push(`${where}: prev_output is not #${prev.index}'s output`);
        const revealed = createHash('sha256').update(Buffer.from(String(pulse.revealed_seed), 'hex')).digest('hex');
        if (revealed !== prev.commit) forks.push(`${where}: revealed seed is not #${prev.index}'s commitment`);
      }
      last.set(node, { index: pulse.index, chain: pulse.chain_id, output, commit: pulse.commit });
      chains.set(node, (chains.get(node) ?? 0) + 1);
    }
    return { report, chains, forks };
  } finally {
    await db.close();
  }
}
