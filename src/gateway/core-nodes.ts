// The core over svc/1 from a gateway (`svcd gateway`, and `svcd start`'s gateway workers): the core
// nodes it knows (SVC_CORE_NODES, or SVC_CORE_NODES_FILE re-read on SIGHUP), each with a few pipelined
// connections, which node a call goes to (affinity for a machine's and a client's state, else the least
// busy), which calls go on to another node when one fails, probes and backoff (docs/scale-out.md
// "Topology").
import { readFileSync } from 'node:fs';
import { ConnectionError, SvcClient, parseHostPort, type Auth, type Endpoint } from '../client/client.ts';
import { ServiceError } from '../errors.ts';
import { addressWindowKey } from '../protocol/rate-limit.ts';
import { commandSpec, needsToken } from '../protocol/registry.ts';
import type { CoreCaller } from './core-call.ts';
import { CoreError } from './http-errors.ts';

/** Backoff of a core node marked down: doubling from `baseMs` up to `maxMs`, each wait jittered down to half. */
export interface NodeBackoff { baseMs: number; maxMs: number }
export const NODE_BACKOFF: NodeBackoff = { baseMs: 200, maxMs: 5000 };

/**
 * Whether a call whose outcome is unknown (its connection died after it was sent) may be sent again:
 * a command that charges nothing (the registry's billing: free, free_limited, sandbox_free_limited),
 * one the registry marks idempotent (BALANCE, INVOICE_STATUS: reads), or one carrying an
 * idempotency_key (the core replays the recorded result, or runs it once). Money
 * commands without a key (ACCEPT_QUOTE, FUND_ACCOUNT, the executions) are not: the caller gets
 * edge_unavailable and decides (an execution is safely sent again with the same quote_id).
 */
export function replaySafe(cmd: string, args: Record<string, unknown>): boolean {
  if (typeof args.idempotency_key === 'string') return true;
  const spec = commandSpec(cmd);
  if (spec?.idempotent) return true;
  const billing = spec?.billing;
  return billing === 'free' || billing === 'free_limited' || billing === 'sandbox_free_limited';
}

/**
 * The state a call is counted or kept under in the core that answers it, as a routing key: a machine's
 * token commands (its per-machine windows; one node also means no optimistic retries between nodes) and
 * one client address's sandbox calls (its quotes, receipts and quota live in that node's memory). Calls
 * with a key go to the same node from every gateway (affinity, `byAffinity`); others (null) to the least
 * busy node.
 */
export function affinityKey(cmd: string, args: Record<string, unknown>, client: string | undefined): string | null {
  const spec = commandSpec(cmd);
  if (!spec) return null;
  if (spec.billing === 'sandbox_free_limited') return addressWindowKey(client);
  if (needsToken(spec) && typeof args.machine_id === 'string') return `m:${args.machine_id}`;
  return null;
}

/** FNV-1a, 32 bits: a fixed spread of keys over node names (not a defence: the keys are the caller's). */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * `nodes` in the order a call with `key` tries them: highest-random-weight (rendezvous) hashing of the key
 * with each node's name, so every gateway listing the same nodes picks the same one, and a node that
 * goes or comes moves only its own keys.
 */
export function byAffinity<T extends { name: string }>(nodes: readonly T[], key: string): T[] {
  return nodes.map((n) => ({ n, w: fnv1a(`${key}|${n.name}`) })).sort((a, b) => b.w - a.w).map((x) => x.n);
}

/**
 * How long a node may be silent before it counts as gone, for a connect or a probe: half the reply
 * timeout (10 s when that is 0, no timeout), as a waiting connection asks HEALTH after half of it.
 */
const silentMs = (replyTimeoutMs: number) => Math.floor((replyTimeoutMs || 10_000) / 2);

/**
 * One core node: its pipelined connections (opened lazily, reopened after a drop) and its health.
 * Calls fill the first connection up to `fill` in flight before the next one is used (then the least
 * busy): the core's replies to one connection in one turn go out in one write (lineWriter), so fewer
 * connections mean fewer writes, and a second connection opens only under load.
 */
class CoreNode {
  readonly #clients: (Promise<SvcClient> | null)[];
  /** calls in flight on each connection */
  readonly #busy: number[];
  inflight = 0;
  /** consecutive failures; 0 while up */
  failures = 0;
  /** down until this time (ms, Date.now()); 0: up */
  downUntil = 0;

  readonly name: string;

  constructor(
    /** where and how to connect: replaced on a reload (new TLS files), used by connections opened after */
    public endpoint: Endpoint, connections: number, readonly replyTimeoutMs: number, readonly fill: number,
  ) {
    this.name = nodeName(endpoint);
    this.#clients = Array.from({ length: connections }, () => null);
    this.#busy = Array.from({ length: connections }, () => 0);
  }

  #pick(): number {
    let least = 0;
    for (let i = 0; i < this.#busy.length; i++) {
      if (this.#busy[i]! < this.fill) return i;
      if (this.#busy[i]! < this.#busy[least]!) least = i;
    }
    return least;
  }

  #client(i: number): Promise<SvcClient> {
    const opts = { replyTimeoutMs: this.replyTimeoutMs };
    // a host whose link is cut drops the connect without a word: give up after half the reply timeout
    const connectMs = Math.min(10_000, Math.max(100, silentMs(this.replyTimeoutMs)));
    return this.#clients[i] ??= SvcClient.connect(this.endpoint, connectMs, opts).catch((e: unknown) => {
      this.#clients[i] = null;
      throw e;
    });
  }

  async request(
    cmd: string, args: Record<string, unknown>, auth: Auth | undefined, client: string | undefined,
  ): Promise<Record<string, unknown>> {
    const i = this.#pick();
    this.#busy[i]!++;
    try {
      const c = await this.#client(i);
      return await c.request(cmd, args, auth, client ? { client } : undefined);
    } finally {
      this.#busy[i]!--;
    }
  }

  /**
   * The node's own word on itself: HEALTH on one of its connections, within `timeoutMs`; null when it
   * serves, else why not (no answer, an error, or a status other than ok: stopping, its store down).
   */
  async probe(timeoutMs: number): Promise<string | null> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((r) => {
      timer = setTimeout(() => r(`no HEALTH answer within ${timeoutMs} ms`), timeoutMs);
    });
    const asked = this.request('HEALTH', {}, undefined, undefined).then(
      (h) => (h.status === 'ok' ? null : `HEALTH status ${String(h.status)}`),
      (e: unknown) => `HEALTH failed: ${e instanceof Error ? e.message : String(e)}`,
    );
    try {
      return await Promise.race([asked, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Marks the node up; true when it was down. */
  up(): boolean {
    const was = this.failures > 0;
    this.failures = 0;
    this.downUntil = 0;
    return was;
  }

  /**
   * Marks the node down (once per outage: calls failing together on one death count as one failure);
   * the wait before it is tried again, or null when it was down already.
   */
  down(now: number, backoff: NodeBackoff): number | null {
    if (this.downUntil > now) return null;
    this.failures++;
    const wait = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(this.failures - 1, 20));
    this.downUntil = now + wait * (0.5 + Math.random() / 2);
    return this.downUntil - now;
  }

  /** Taken out of the list: closes once the calls on it have finished. */
  retire(): void {
    const closeWhenIdle = () => {
      if (this.inflight === 0) this.close();
      else setTimeout(closeWhenIdle, 100).unref();
    };
    closeWhenIdle();
  }

  close(): void {
    for (const c of this.#clients) void c?.then((x) => x.close(), () => undefined);
  }
}

/** How svc1Caller calls its nodes. */
export interface CallerOptions {
  /** pipelined connections per node, at most (default 4) */
  connections?: number;
  /**
   * calls in flight on one connection before the next is used (default 32, the core's
   * SVC_MAX_IN_FLIGHT: past it the core reads no more of that connection's lines until one finishes)
   */
  fill?: number;
  /**
   * a connection on which calls wait and nothing has come back for this long (not even the HEALTH it sends
   * after half of it) is dropped, and its node marked down like one whose connection broke (default 10 s;
   * 0: wait for ever). SVC_CORE_REPLY_TIMEOUT_MS.
   */
  replyTimeoutMs?: number;
  backoff?: NodeBackoff;
  /**
   * every this many ms each node is asked HEALTH (0: never, the default): one that does not answer
   * within half the reply timeout (at least this interval), or answers other than ok (stopping, its
   * database down), is marked down before a client's call finds out, and one marked down that answers ok
   * is up again. SVC_CORE_PROBE_MS.
   */
  probeMs?: number;
  /** told when a node goes down (with the wait before it is tried again, and why) and when it is back up */
  onNodeState?: (e: NodeStateEvent) => void;
}

export interface NodeStateEvent {
  node: string; state: 'down' | 'up'; failures: number; retry_in_ms?: number; reason?: string;
}

/** The svc/1 caller of a gateway, whose node list can change while it serves (SIGHUP). */
export interface NodesCaller extends CoreCaller {
  /**
   * Calls go to `endpoints` from now on: a node listed before keeps its connections and state (and takes
   * the new endpoint for connections it opens later); a node no longer listed gets no new calls and is
   * closed once its calls in flight have finished. Returns the names added and removed.
   */
  setNodes(endpoints: readonly Endpoint[]): { added: string[]; removed: string[] };
}

/**
 * The core over svc/1 (`svcd gateway`, and `svcd start`'s gateway workers): one node or several
 * (SVC_CORE_NODES, docs/scale-out.md "Topology"), each with a few pipelined backend connections.
 * A machine's token commands and a client's sandbox calls go to the live node their affinity key picks
 * (affinityKey, byAffinity); other calls to the live node with the fewest calls in flight (ties in turn).
 * A node whose connection fails, or that fails a probe (`probeMs`), is marked down and gets no calls
 * until its backoff has passed; with no node live, a call tries the down ones, soonest due first, so a
 * gateway whose nodes all restarted serves as soon as one is back. A call that failed before it was sent
 * goes to the next node; one whose connection died after it was sent goes on only when replaySafe, else
 * it fails with the ConnectionError (`sent`: the mapper answers 502 edge_unavailable, outcome unknown).
 * A node that answers shutting_down ran nothing: it is marked down and the call goes to the next node. A
 * node that keeps its connections open and answers nothing, not even a HEALTH, is a connection dying
 * after `replyTimeoutMs`; a node that is slow on one call but answers is not.
 */
export function svc1Caller(backend: Endpoint | readonly Endpoint[], opts: CallerOptions = {}): NodesCaller {
  const { connections = 4, fill = 32, backoff = NODE_BACKOFF, onNodeState, probeMs = 0 } = opts;
  const replyTimeoutMs = opts.replyTimeoutMs ?? 10_000;
  const endpoints = Array.isArray(backend) ? backend : [backend as Endpoint];
  if (endpoints.length === 0) throw new Error('svc1Caller: no core node');
  const make = (ep: Endpoint) => new CoreNode(ep, connections, replyTimeoutMs, fill);
  let nodes = endpoints.map(make);
  let turn = 0;
  /**
   * the nodes a call tries, in order: live ones (by the key's affinity, else by calls in flight, ties in
   * turn), then down ones by due time
   */
  const order = (now: number, key: string | null): CoreNode[] => {
    if (nodes.length === 1) return nodes; // one node (svcd start's workers): nothing to choose, nothing to allocate
    const start = turn++ % nodes.length;
    const rotated = [...nodes.slice(start), ...nodes.slice(0, start)];
    const up = rotated.filter((n) => n.downUntil <= now);
    const live = key === null ? up.sort((a, b) => a.inflight - b.inflight) : byAffinity(up, key);
    const down = rotated.filter((n) => n.downUntil > now).sort((a, b) => a.downUntil - b.downUntil);
    return [...live, ...down];
  };
  const up = (node: CoreNode) => {
    if (node.up()) onNodeState?.({ node: node.name, state: 'up', failures: 0 });
  };
  const down = (node: CoreNode, reason: string) => {
    const wait = node.down(Date.now(), backoff);
    if (wait === null) return;
    const e = { node: node.name, state: 'down' as const, failures: node.failures, reason };
    onNodeState?.({ ...e, retry_in_ms: Math.round(wait) });
  };
  const probing = new Set<CoreNode>();
  // a probe waits as long as a connection gives a silent node (half the reply timeout) before it says
  // down, at least one probe interval: a node slow under load is not taken for a dead one
  const probeWaitMs = Math.max(probeMs, silentMs(replyTimeoutMs));
  const probe = (node: CoreNode) => {
    if (probing.has(node)) return;
    probing.add(node);
    void node.probe(probeWaitMs).then((why) => (why === null ? up(node) : down(node, why)))
      .finally(() => probing.delete(node));
  };
  const prober = probeMs > 0 ? setInterval(() => { for (const n of nodes) probe(n); }, probeMs) : null;
  prober?.unref();
  return {
    async call(cmd, args, auth, client) {
      let lost: unknown;
      const key = nodes.length > 1 ? affinityKey(cmd, args, client) : null;
      for (const node of order(Date.now(), key)) {
        node.inflight++;
        try {
          const result = await node.request(cmd, args, auth, client);
          up(node);
          return result;
        } catch (e) {
          // a node shutting down ran nothing, nor one that read the call past its deadline (it lagged): the
          // call goes to the next node, whatever it is
          const leaving = e instanceof ServiceError && (e.code === 'shutting_down'
            || (e.code === 'cancelled' && e.details?.not_run === true));
          if (e instanceof ServiceError && !leaving) {
            up(node);
            throw new CoreError(e);
          }
          if (!leaving && !(e instanceof ConnectionError)) throw e;
          down(node, (e as Error).message);
          if (leaving) {
            lost = new CoreError(e);
            continue;
          }
          // sent and not safe to send again: the outcome is the caller's to find out
          if ((e as ConnectionError).sent && !replaySafe(cmd, args)) throw e;
          lost = e;
        } finally {
          node.inflight--;
        }
      }
      throw lost;
    },
    setNodes(next) {
      if (next.length === 0) throw new Error('no core node');
      const known = new Map(nodes.map((n) => [n.name, n]));
      const kept = next.map((ep) => {
        const node = known.get(nodeName(ep));
        if (!node) return make(ep);
        node.endpoint = ep;
        return node;
      });
      const removed = nodes.filter((n) => !kept.includes(n));
      const added = kept.filter((n) => !known.has(n.name)).map((n) => n.name);
      nodes = kept;
      for (const n of removed) n.retire();
      return { added, removed: removed.map((n) => n.name) };
    },
    close() {
      if (prober) clearInterval(prober);
      for (const n of nodes) n.close();
    },
  };
}

/**
 * SVC_CORE_NODES_FILE: the nodes, one HOST:PORT a line (or comma-separated; `#` starts a comment), re-read
 * on SIGHUP: nodes are added and removed without a restart.
 */
export function readCoreNodes(path: string, backendPort: number, mutual: Mutual | null): Endpoint[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`SVC_CORE_NODES_FILE ${path}: ${(e as Error).message}`);
  }
  const list = text.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean).join(',');
  if (!list) throw new Error(`SVC_CORE_NODES_FILE ${path} lists no node`);
  return coreNodes(list, backendPort, mutual, `SVC_CORE_NODES_FILE ${path}`);
}

/** A cluster member's TLS identity (PEM texts), for mutual TLS to the nodes' backends. */
export interface Mutual { ca: string; cert: string; key: string }

/**
 * SVC_CORE_NODES: the core nodes a gateway spreads its calls over, `HOST:PORT` of each one's backend
 * listener, comma-separated; unset or empty: the one at 127.0.0.1:`backendPort` (SVC_BACKEND_PORT). With
 * `mutual` (SVC_CLUSTER_*), each is reached over mutual TLS and its certificate must name HOST.
 */
export function coreNodes(
  value: string | undefined, backendPort: number, mutual: Mutual | null = null, setting = 'SVC_CORE_NODES',
): Endpoint[] {
  const items = (value ?? '').split(',').map((x) => x.trim()).filter(Boolean);
  const endpoint = (host: string, port: number) => nodeEndpoint(host, port, mutual);
  if (items.length === 0) return [endpoint('127.0.0.1', backendPort)];
  const seen = new Set<string>();
  return items.map((item) => {
    let hp: { host: string; port: number };
    try {
      hp = parseHostPort(item, 0);
    } catch {
      throw new Error(`${setting}: ${JSON.stringify(item)} is not HOST:PORT`);
    }
    const key = `${hp.host}:${hp.port}`;
    if (seen.has(key)) throw new Error(`${setting}: ${key} is listed twice`);
    seen.add(key);
    return endpoint(hp.host, hp.port);
  });
}

/** A node's backend at `host`:`port`: mutual TLS with a cluster identity, else plain TCP. */
export function nodeEndpoint(host: string, port: number, mutual: Mutual | null): Endpoint {
  return mutual ? { kind: 'tls', host, port, mutual } : { kind: 'tcp', host, port };
}

/** The name of a node in logs and metrics: HOST:PORT, or the socket path. */
export const nodeName = (ep: Endpoint): string => (ep.kind === 'unix' ? ep.path : `${ep.host}:${ep.port}`);

