// svcd: the composition root, the only module that imports every layer.
//   svcd [start]   core + HTTP gateway: in one process (the gateway calls the core directly), or with
//                  SVC_GATEWAY_PROCESSES=K > 0 the core and K node:cluster gateway workers sharing the
//                  HTTP port, each reaching the core over the loopback backend (docs/operations.md)
//   svcd core      the core alone: svc/1 edge (TLS), backend (loopback TCP), admin socket
//   svcd gateway   the HTTP gateway alone, against the core's backend at 127.0.0.1:SVC_BACKEND_PORT, or the
//                  core nodes SVC_CORE_NODES lists (docs/scale-out.md "Topology")
//   svcd manifest  the manifest hash to publish in DNS
//   svcd selfcheck kernel known-answer check
//   svcd restore   <backup> <data dir>: a checked restore of `svc-admin backup` (docs/operations.md)
//   svcd audit     the money audit of a stopped node's data dir (`svc-admin audit` while it runs)
// Configuration: environment variables (README "Configuration"). With SVC_READY_FILE set, svcd
// writes the bound addresses there as one JSON object once every listener is up.
import cluster, { type Worker } from 'node:cluster';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { PACKAGE_ROOT } from './package-root.ts';
import { sendOrDrop, type IpcChannel } from './ipc.ts';
import { pino } from 'pino';
import { loadConfig } from './core/config.ts';
import { NO_ADDRESS } from './core/rails.ts';
import { render } from './cli/output.ts';
import type { Core } from './core/core.ts';
import { createGateway } from './gateway/app.ts';
import { answeringFirst, inProcessCaller, type CoreCaller } from './gateway/core-call.ts';
import {
  coreNodes, nodeEndpoint, nodeName, readCoreNodes, svc1Caller, type Mutual,
} from './gateway/core-nodes.ts';
import type { Endpoint } from './client/client.ts';
import { loadClusterTls } from './protocol/cluster-tls.ts';
import { nodeWindows, windowDesk, type PrimaryChannel, type WindowMessage } from './gateway/node-windows.ts';
import { quoteDesk } from './core/quote-desk.ts';
import type { RateClass } from './protocol/registry.ts';
import { drainGateway, httpLimits, listenGateway, type HttpDrainReport } from './gateway/http-server.ts';
import type { Config } from './core/config.ts';
import { NodeIdentity, readQuoteKey } from './core/node-identity.ts';
import { DOCUMENT_PATHS, manifestHash } from './discovery/documents.ts';
import { siteFromBaseUrl } from './discovery/node-info.ts';
import type { Logger } from 'pino';
import { ABI_VERSION, kernelWasmPath } from './kernels/index.ts';
import { selfCheck } from './kernels/self-check.ts';
import { svcdCommand } from './cli/svcd-usage.ts';
import { CORE_VERSION } from './protocol/versions.ts';
import { listenMetrics, type MetricsListener } from './gateway/metrics-listener.ts';
import { enableProcessMetrics } from './metrics/metrics.ts';
import { answerMetricRequests } from './metrics/scrape.ts';
// The core's modules (its store engines, the chain watchers and their chain libraries, the edge, backup
// and audit) are loaded where they run: a gateway worker never loads them, which keeps it about 45 MB
// smaller and half a second quicker to start (docs/operations.md "Processes").
const coreModules = async () => {
  const [{ Core }, { observeCore }, { startListeners }] = await Promise.all([
    import('./core/core.ts'), import('./core/core-metrics.ts'), import('./edge/servers.ts'),
  ]);
  return { Core, observeCore, startListeners };
};

function runSelfCheck(): number {
  const info = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'build', 'BUILD_INFO.json'), 'utf8'));
  console.log(`svc kernels: ${kernelWasmPath()} (ABI ${ABI_VERSION}, sha256 ${info.outputs['kernels.wasm']})`);
  const results = selfCheck();
  for (const r of results) console.log(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name}`);
  const failed = results.filter((r) => !r.ok).length;
  console.log(failed ? `self-check FAILED (${failed})` : `self-check passed (${results.length} kernels)`);
  return failed ? 1 : 0;
}

/**
 * A gateway's HTTP server. `handedBack` (gateway workers): resolves once the cluster primary hands this
 * worker no more connections and every one it had already sent is back with it (see runGatewayWorker).
 */
async function startGateway(
  config: Config, log: Logger, core: CoreCaller, edgePort?: number, handedBack?: () => Promise<void>,
): Promise<{ url: string; close(): Promise<HttpDrainReport> }> {
  const gw = createGateway({
    core,
    rates: config.rates,
    log: log.child({ part: 'gateway' }),
    trustProxyHops: config.trustProxyHops,
    trustedProxies: config.trustedProxies,
    ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}),
    // published: the configured public port, else the one the edge listens on, else SVC_EDGE_PORT (gateway alone)
    edgePort: config.publicEdgePort ?? edgePort ?? config.edgePort,
  });
  const g = await listenGateway(gw, config.httpHost, config.httpPort, httpLimits(config));
  const a = g.server.address() as { address: string; port: number; family: string };
  const url = `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  gw.setBoundUrl(url);
  return {
    url,
    close: async () => {
      // a cluster worker keeps its share of the port until drained (new connections get 503): closing a
      // round-robin server early resets connections the primary already handed it (measured: in-flight
      // requests reset at once, with NODE_CLUSTER_SCHED_POLICY=none they are not)
      const keepListening = cluster.isWorker;
      const idleGraceMs = Math.min(1000, config.httpKeepAliveTimeoutMs);
      const report = await drainGateway(g, gw, { keepListening, deadlineMs: config.drainTimeoutMs, idleGraceMs });
      const cutAt = { ...report, after_ms: config.drainTimeoutMs };
      if (report.cut > 0) log.warn(cutAt, 'HTTP connections cut at the deadline');
      if (keepListening) {
        const closed = new Promise<void>((r) => g.server.close(() => r()));
        await handedBack?.();
        g.server.closeAllConnections();
        await closed;
      }
      gw.close();
      return report;
    },
  };
}

/**
 * GET /metrics on its own listener (SVC_METRICS_PORT; off when unset): null when off. Process metrics are
 * collected only then; a gateway worker collects its own and answers the primary's scrape over IPC.
 */
async function startMetrics(config: Config): Promise<MetricsListener | null> {
  if (config.metricsPort === null) return null;
  enableProcessMetrics();
  if (cluster.isWorker) {
    answerMetricRequests();
    return null;
  }
  return listenMetrics(config.metricsHost, config.metricsPort);
}

function writeReady(config: Config, ready: Record<string, unknown>): void {
  if (!config.readyFile) return;
  writeFileSync(`${config.readyFile}.tmp`, JSON.stringify(ready) + '\n');
  renameSync(`${config.readyFile}.tmp`, config.readyFile); // readers never see half a file
}

/** This gateway's cluster certificate, checked (SVC_CLUSTER_*), or null: plain TCP to the nodes. */
function clusterIdentity(config: Config, log: Logger): Mutual | null {
  if (!config.clusterTls) return null;
  const m = loadClusterTls(config.clusterTls);
  log.info({ name: m.name, not_after: m.notAfter.toISOString() }, 'cluster certificate loaded');
  return { ca: m.ca, cert: m.cert, key: m.key };
}

/** What a stop did, for the log line that ends the process. */
type StopReport = Record<string, unknown>;

function onSignals(log: Logger, stop: () => Promise<StopReport>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'svcd stopping: no new connections, finishing in-flight work');
    stop().then((report) => {
      log.info(report, 'svcd stopped');
      process.exit(0);
    }, (e: unknown) => {
      log.error({ err: e }, 'svcd stop failed');
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
}

/**
 * SIGHUP: `reload` re-reads what can change without a restart (the cluster's TLS files; a gateway's node
 * list) and says what it loaded; a failed reload keeps what was loaded before and is logged as an error.
 */
function onReload(log: Logger, reload: () => Record<string, unknown>): void {
  process.on('SIGHUP', () => {
    try {
      log.info(reload(), 'svcd reloaded (SIGHUP)');
    } catch (e) {
      log.error({ err: e }, 'svcd reload failed (SIGHUP): what was loaded before stays');
    }
  });
}

interface GatewayHandle { url: string; close(): Promise<HttpDrainReport> }

/** Messages between the primary and its gateway workers (node:cluster IPC). */
type WorkerMessage =
  | { type: 'svcd:gateway-ready'; url: string }
  // the node's per-address windows, granted to the workers in shares (gateway/node-windows.ts)
  | WindowMessage
  | { type: 'svcd:stop' }
  // the worker has closed its share of the port; the primary answers `svcd:gateway-closed-seen`
  | { type: 'svcd:gateway-closed' }
  | { type: 'svcd:gateway-closed-seen' }
  // a worker's last message: written out, so is everything before it (the connections handed back)
  | { type: 'svcd:gateway-bye'; report: HttpDrainReport };

/** How long a stopping worker waits for the primary's answer to svcd:gateway-closed (it may be gone). */
const PRIMARY_ANSWER_MS = 2000;

/**
 * A stopping worker's last exchange with the primary. Closing a round-robin server only tells the
 * primary so; a connection the primary was handing this worker meanwhile arrives after the close,
 * and Node hands it back to be sent to another worker, unless this process has exited by then: the
 * connection is then lost and hangs until the primary exits (measured: 3 runs in 4 under a burst of
 * connections). IPC is in order both ways, so once the primary's answer to a message sent after the
 * close is here, it has stopped handing us connections and every one it sent before is back with it.
 */
/** A worker's exit once what it sent the primary is written out (IPC writes are in order). */
function flushedExit(report: HttpDrainReport): void {
  const exit = () => process.exit(0);
  if (!process.connected) return exit();
  setTimeout(exit, PRIMARY_ANSWER_MS).unref();
  process.send!({ type: 'svcd:gateway-bye', report } satisfies WorkerMessage, undefined, {}, exit);
}

function primaryHandedBack(): Promise<void> {
  if (!process.connected) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, PRIMARY_ANSWER_MS);
    function done() {
      clearTimeout(timer);
      process.off('message', seen);
      resolve();
    }
    function seen(m: WorkerMessage) {
      if (m.type === 'svcd:gateway-closed-seen') done();
    }
    process.on('message', seen);
    process.send!({ type: 'svcd:gateway-closed' } satisfies WorkerMessage, undefined, {}, (e) => {
      if (e) done();
    });
  });
}

/**
 * A gateway worker of `svcd start` with SVC_GATEWAY_PROCESSES > 0: the HTTP front on the shared port,
 * the core over svc/1. It stops when the primary says so, or when the primary is gone.
 */
async function runGatewayWorker(config: Config, log: Logger): Promise<void> {
  // the core's own backend: on its address, or loopback when it listens on every address
  const host = ['0.0.0.0', '::'].includes(config.backendHost) ? '127.0.0.1' : config.backendHost;
  const backend = svc1Caller(nodeEndpoint(host, config.backendPort, clusterIdentity(config, log)), {
    replyTimeoutMs: config.coreReplyTimeoutMs, fill: config.maxInFlightPerConnection,
  });
  // free quotes are answered here (core/quote-desk.ts), admitted from shares of the node's windows that
  // the core grants over IPC (gateway/node-windows.ts)
  const windows = nodeWindows(process as PrimaryChannel, config.rates, config.coreReplyTimeoutMs || 10_000);
  const take = (klass: RateClass, client: string) => windows.take(klass, client);
  const desk = quoteDesk({ quoteKey: readQuoteKey(config.dataDir), take });
  const core = answeringFirst(desk, backend, (e) => log.error({ err: e }, 'free quote failed'));
  const edgePort = Number(process.env.SVC_CLUSTER_EDGE_PORT) || undefined;
  const gw = await startGateway(config, log, core, edgePort, primaryHandedBack);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void gw.close().then((report) => {
      windows.close();
      log.info(report, 'gateway worker stopped');
      flushedExit(report);
    });
  };
  process.on('message', (m: WorkerMessage) => { if (m.type === 'svcd:stop') stop(); });
  process.on('disconnect', stop);
  process.on('SIGTERM', stop);
  // Ctrl+C reaches the whole process group: the primary decides the order of shutdown; and reloads
  process.on('SIGINT', () => undefined);
  process.on('SIGHUP', () => undefined);
  sendOrDrop(process as IpcChannel, { type: 'svcd:gateway-ready', url: gw.url } satisfies WorkerMessage);
}

const CLOSED_SEEN: WorkerMessage = { type: 'svcd:gateway-closed-seen' };

/**
 * The primary's side of SVC_GATEWAY_PROCESSES = K: forks K gateway workers, resolves once all are
 * listening, replaces a worker that dies (backing off while they die young), and on close stops
 * them (each finishes its in-flight requests) before the core stops.
 */
function startGatewayWorkers(
  config: Config, log: Logger, core: Core, backendPort: number, edgePort: number,
): Promise<GatewayHandle> {
  const env = { SVC_BACKEND_PORT: String(backendPort), SVC_CLUSTER_EDGE_PORT: String(edgePort) };
  const workers = new Set<Worker>();
  // the node's per-address windows, granted to the workers in shares (gateway/node-windows.ts)
  const windows = windowDesk({
    grant: (klass, client, share, max) => core.grantWindow(klass, client, share, max),
    giveBack: (klass, client, start, n) => core.giveBackWindow(klass, client, start, n),
  }, {
    workers: () => [...workers].map((w) => w.id),
    send: (id, m) => {
      for (const w of workers) if (w.id === id && w.isConnected()) sendOrDrop(w, m satisfies WorkerMessage);
    },
    recallTimeoutMs: Math.min(config.coreReplyTimeoutMs || 10_000, 1000),
  });
  let stopping = false;
  let backoffMs = 100;
  return new Promise((resolve, reject) => {
    let waiting = config.gatewayProcesses;
    let url = '';
    const fork = () => {
      const born = Date.now();
      const w = cluster.fork(env);
      workers.add(w);
      w.on('message', (m: WorkerMessage) => {
        if (m.type === 'svcd:take' || m.type === 'svcd:returned') return windows.onMessage(w.id, m);
        if (m.type === 'svcd:gateway-closed') sendOrDrop(w, CLOSED_SEEN);
        if (m.type !== 'svcd:gateway-ready') return;
        url = m.url;
        if (waiting > 0 && --waiting === 0) resolve({ url, close });
      });
      w.on('exit', (code, signal) => {
        workers.delete(w);
        windows.workerGone(w.id);
        if (stopping) return;
        if (waiting > 0) {
          stopping = true;
          for (const o of workers) o.kill('SIGKILL');
          reject(new Error(`gateway worker exited during start (code ${code}, signal ${signal})`));
          return;
        }
        backoffMs = Date.now() - born < 5000 ? Math.min(backoffMs * 2, 30_000) : 100;
        log.error({ worker: w.id, code, signal, restart_in_ms: backoffMs }, 'gateway worker died; replacing it');
        setTimeout(() => { if (!stopping) fork(); }, backoffMs).unref();
      });
    };
    // each worker's drain report comes with its last message; summed for the primary's last log line
    const sum: HttpDrainReport = { served: 0, refused: 0, cut: 0 };
    const close = async (): Promise<HttpDrainReport> => {
      stopping = true;
      await Promise.all([...workers].map((w) => new Promise<void>((done) => {
        if (w.isDead()) return done();
        const kill = setTimeout(() => w.kill('SIGKILL'), config.drainTimeoutMs + 5000);
        w.on('message', (m: WorkerMessage) => {
          if (m.type !== 'svcd:gateway-bye') return;
          for (const k of ['served', 'refused', 'cut'] as const) sum[k] += m.report[k];
        });
        w.once('exit', () => { clearTimeout(kill); done(); });
        sendOrDrop(w, { type: 'svcd:stop' } satisfies WorkerMessage); // one that died meanwhile: its exit ends the wait
      })));
      return sum;
    };
    for (let i = 0; i < config.gatewayProcesses; i++) fork();
  });
}

/**
 * The core nodes `svcd gateway` spreads its calls over (docs/scale-out.md "Topology"): SVC_CORE_NODES_FILE
 * (re-read on SIGHUP), else SVC_CORE_NODES, else this host's backend; with SVC_CLUSTER_*, over mutual TLS.
 */
function gatewayNodes(config: Config, log: Logger): Endpoint[] {
  const file = process.env.SVC_CORE_NODES_FILE;
  if (file && process.env.SVC_CORE_NODES) throw new Error('set SVC_CORE_NODES or SVC_CORE_NODES_FILE, not both');
  const mutual = clusterIdentity(config, log);
  if (file) return readCoreNodes(file, config.backendPort, mutual);
  return coreNodes(process.env.SVC_CORE_NODES, config.backendPort, mutual);
}

/** `svcd gateway`: the HTTP gateway alone, in front of one or several core nodes. */
async function runGatewayAlone(config: Config, log: Logger): Promise<void> {
  const nodes = gatewayNodes(config, log);
  const nodeLog = log.child({ part: 'gateway' });
  const backend = svc1Caller(nodes, {
    replyTimeoutMs: config.coreReplyTimeoutMs, fill: config.maxInFlightPerConnection, probeMs: config.coreProbeMs,
    onNodeState: (e) => (e.state === 'down' ? nodeLog.warn(e, 'core node down') : nodeLog.info(e, 'core node up')),
  });
  const gw = await startGateway(config, log, backend);
  const metrics = await startMetrics(config);
  const names = nodes.map(nodeName);
  // SIGHUP: the node list (from its file) and the cluster's TLS files again
  onReload(log, () => {
    const next = gatewayNodes(config, log);
    return { core_nodes: next.map(nodeName), ...backend.setNodes(next) };
  });
  onSignals(log, async () => {
    const http = await gw.close();
    await metrics?.close();
    return { http };
  });
  writeReady(config, {
    http: gw.url, edge: null, backend: names[0], core_nodes: names, admin_socket: null, data_dir: null,
    metrics: metrics?.address ?? null,
  });
  log.info({ http: gw.url, core_nodes: names }, 'svcd gateway ready');
}

async function run(parts: { core: boolean; gateway: boolean }): Promise<void> {
  const config = loadConfig();
  const log = pino({ level: config.logLevel, base: { svc: 'svcd' } });
  if (cluster.isWorker) {
    await startMetrics(config);
    await runGatewayWorker(config, log.child({ part: 'gateway', worker: cluster.worker!.id }));
    return;
  }
  if (!parts.core) {
    await runGatewayAlone(config, log);
    return;
  }
  const { Core, observeCore, startListeners } = await coreModules();
  const core = await Core.open(config, {
    onBackgroundError: (what, e) => log.warn({ err: e }, `${what} failed; tried again at its next round`),
  });
  observeCore(core);
  const listeners = await startListeners(core, log);
  const port = (addr: string) => Number(addr.split(':').pop());
  // one process: the gateway calls the core directly (no loopback hop, DESIGN.md §1)
  const direct = () => inProcessCaller(
    (cmd, args, auth, client, validated) => core.handle(cmd, args, auth, 'gateway', client, validated),
    (e) => log.error({ err: e }, 'core call failed'),
    (e) => log.warn({ err: e.cause }, e.message),
  );
  const edgePort = port(listeners.addresses.edge);
  const workers = parts.gateway && config.gatewayProcesses > 0;
  const gw: GatewayHandle | null = !parts.gateway ? null : workers
    ? await startGatewayWorkers(config, log, core, port(listeners.addresses.backend), edgePort)
    : await startGateway(config, log, direct(), edgePort);
  const metrics = await startMetrics(config);
  const ready = {
    http: gw?.url ?? null,
    ...listeners.addresses,
    data_dir: config.dataDir,
    edge_cert_sha256: core.tls.fingerprint256,
    gateway_processes: workers ? config.gatewayProcesses : 0,
    metrics: metrics?.address ?? null,
  };
  core.startWatchers(log.child({ part: 'watchers' }));
  onReload(log, () => {
    const m = listeners.reloadClusterTls();
    return m ? { cluster_certificate: m.name, not_after: m.notAfter.toISOString() } : {};
  });
  // stop signals are handled before anyone is told svcd is ready: a SIGTERM right after drains, never kills
  onSignals(log, async () => {
    // every gateway (in process, or each worker on its stop message) turns readiness false at once and
    // finishes its in-flight HTTP requests before the core stops taking calls; worker gateways still
    // need the backend listener for that, the in-process one needs no listener
    const edge = workers ? null : listeners.close();
    const http = await gw?.close();
    const closing = edge ?? listeners.close();
    await core.drain(config.drainTimeoutMs);
    const svc1 = await closing;
    await core.close();
    await metrics?.close();
    return { http: http ?? null, svc1 };
  });
  writeReady(config, ready);
  const nodeId = core.ctx.identity.nodeId;
  if (process.stdout.isTTY) {
    // a person at a terminal: what is listening, the pin, the rails; the JSON line is for machines
    const { banner } = await import('./core/ready-banner.ts');
    process.stdout.write(`${banner(config, {
      version: CORE_VERSION, nodeId, http: ready.http, edge: ready.edge, backend: ready.backend,
      adminSocket: ready.admin_socket, metrics: ready.metrics, gatewayProcesses: ready.gateway_processes,
      edgeCertSha256: ready.edge_cert_sha256, selfSigned: core.tls.selfSigned,
      x402FeeAccounts: core.x402?.feeAccounts(),
    })}\n\n`);
  } else {
    log.info({ ...ready, node_id: nodeId, self_signed: core.tls.selfSigned }, 'svcd ready');
    logPayments(log, config, core.x402?.feeAccounts() ?? {});
  }
}

/** `svcd manifest`: the manifest hash to publish as a DNS TXT record (SPEC "Versioning"). */
async function printManifest(): Promise<number> {
  const config = loadConfig();
  const identity = NodeIdentity.loadOrCreate(config.dataDir);
  const { loadTlsMaterial } = await import('./core/tls-material.ts');
  const tls = await loadTlsMaterial({
    dataDir: config.dataDir, certFile: config.tlsCert, keyFile: config.tlsKey, hosts: [config.edgeHost],
  });
  const httpHost = config.httpHost.includes(':') ? `[${config.httpHost}]` : config.httpHost;
  const baseUrl = config.baseUrl ?? `http://${httpHost}:${config.httpPort}`;
  const edgePort = config.publicEdgePort ?? config.edgePort;
  if (edgePort === 0) {
    throw new Error('SVC_EDGE_PORT is 0 (picked at start), so the manifest cannot name it: set SVC_PUBLIC_EDGE_PORT');
  }
  const wallets = Object.fromEntries(config.rails.map((r) => [r.rail, r.address]));
  const site = siteFromBaseUrl(baseUrl, edgePort, wallets);
  const node = { ...identity.public, keys: identity.publishedKeys(), edge_cert_sha256: tls.fingerprint256 };
  const hash = manifestHash(node, site);
  console.log(`manifest: ${baseUrl}${DOCUMENT_PATHS.manifest}`);
  console.log(`sha256:   ${hash}`);
  console.log(`edge pin: ${tls.fingerprint256} (svc --pin / SVC_EDGE_PIN)`);
  console.log(`DNS TXT:  _svc-manifest.${site.edge_host} TXT "v=svc_public_discovery_v1; sha256=${hash}"`);
  return 0;
}

/**
 * `svcd restore --expect-sha256 HEX <backup> <data dir>`: checks that the backup is the one taken (its
 * manifest's SHA-256 is the manifest_sha256 BACKUP printed), then its files, ledger invariant, audit with every
 * receipt verified and journal head, and only then creates the data dir from it. svcd must not run on it.
 * The hash is required: a record written into a copy with its manifest rewritten can be self-consistent
 * (a credit with its journal entry), and only the hash kept apart from the backup tells.
 */
async function restore(args: string[]): Promise<number> {
  const at = args.indexOf('--expect-sha256');
  const expect = at >= 0 ? args[at + 1] : undefined;
  const paths = args.filter((_, i) => at < 0 || (i !== at && i !== at + 1));
  if (paths.length !== 2 || !/^[0-9a-fA-F]{64}$/.test(expect ?? '')) {
    console.error('usage: svcd restore --expect-sha256 MANIFEST_SHA256 <backup dir> <new data dir>\n'
      + '  MANIFEST_SHA256: the manifest_sha256 `svc-admin backup` printed, kept apart from the backup. It proves\n'
      + '  the backup is the one taken: without it a copy edited with its manifest rewritten restores as clean.\n'
      + '  Lost it, and you trust where the backup was kept? Then take it from the backup itself, knowingly:\n'
      + '  sha256sum <backup dir>/backup-manifest.json');
    return 2;
  }
  const [backup, dataDir] = paths.map((a) => resolvePath(a)) as [string, string];
  const { restoreBackup } = await import('./core/backup.ts');
  const r = await restoreBackup(backup, dataDir, expect!);
  const t = r.audit.totals;
  console.log(`restored ${backup} (taken ${r.manifest.created_at}, node ${r.manifest.node_id}) into ${dataDir}`);
  console.log(`  manifest SHA-256 ${r.manifestSha256}, as expected`);
  console.log(`  ${r.manifest.files.length} files match the manifest; journal head ${r.manifest.journal_head.sha256}`);
  const l = r.audit.ledger;
  console.log(`  ledger: ${l.accounts} accounts, ${l.entries} journal entries, invariant holds`);
  console.log(`  audit clean: ${t.receipts} receipts verify and match their captures and executed quotes`);
  return 0;
}

/** `svcd audit [--json] [--csv DIR]`: AUDIT on a stopped node's data dir (SVC_DATA_DIR), e.g. one refusing to start. */
async function offlineAudit(args: string[]): Promise<number> {
  const csvAt = args.indexOf('--csv');
  const unknown = args.filter((a, i) => a !== '--json' && a !== '--csv' && i !== csvAt + 1);
  if (unknown.length || (csvAt >= 0 && !args[csvAt + 1])) {
    console.error('usage: svcd audit [--json] [--csv DIR]   (svcd stopped; online: svc-admin audit)');
    return 2;
  }
  const config = loadConfig();
  const [{ openStore }, { audit, auditCsv }] = await Promise.all([
    import('./store/store.ts'), import('./core/audit.ts'),
  ]);
  const store = await openStore(config.dataDir, config.store).catch((e: unknown) => {
    throw new Error(`cannot open the ledger in ${config.dataDir} (is svcd running? then use svc-admin audit): ${e}`);
  });
  let report;
  try {
    report = await audit(store, NodeIdentity.loadOrCreate(config.dataDir));
  } finally {
    await store.close();
  }
  if (csvAt >= 0) {
    const dir = resolvePath(args[csvAt + 1]!);
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(auditCsv(report))) writeFileSync(join(dir, name), text);
  }
  console.log(render(report, args.includes('--json')));
  return report.clean ? 0 : 1;
}

/**
 * `svcd migrate --to postgres://…`: the stopped node's LevelDB ledger (SVC_DATA_DIR) into an empty
 * PostgreSQL database, audited on both sides (core/migrate.ts). The URL is never printed.
 */
async function migrateCommand(args: string[]): Promise<number> {
  const at = args.indexOf('--to');
  const to = at >= 0 ? args[at + 1] : undefined;
  if (!to || args.length !== 2 || !/^postgres(ql)?:\/\//.test(to)) {
    console.error('usage: svcd migrate --to postgres://user:password@host:5432/db   (svcd stopped; SVC_DATA_DIR: the '
      + 'node\'s data dir)\n  copies its LevelDB ledger into that empty database and audits both sides');
    return 2;
  }
  const config = loadConfig();
  if (!existsSync(join(config.dataDir, 'ledger'))) {
    throw new Error(`no LevelDB ledger in ${config.dataDir} (SVC_DATA_DIR)`);
  }
  const [{ openStore }, { migrate }] = await Promise.all([import('./store/store.ts'), import('./core/migrate.ts')]);
  const source = await openStore(config.dataDir, null).catch((e: unknown) => {
    throw new Error(`cannot open the LevelDB ledger in ${config.dataDir} (is svcd running? stop it first): ${e}`);
  });
  try {
    const target = await openStore(config.dataDir, to);
    try {
      const m = await migrate(source, target, NodeIdentity.loadOrCreate(config.dataDir));
      const total = Object.values(m.copied).reduce((a, b) => a + b, 0);
      console.log(`copied ${total} records into the database (${Object.entries(m.copied).map(([k, v]) => `${k} ${v}`)
        .join(', ')})`);
      const t = m.after.totals;
      if (m.differences.length) {
        console.error(`the audits differ in: ${m.differences.join(', ')}; do not switch this node to the database`);
        return 1;
      }
      console.log(`audit before and after: equal (${m.after.machines.length} machines, ${t.receipts} receipts, `
        + `credited ${t.credited_units}, spent ${t.spent_units} units; ${m.after.clean ? 'clean' : 'NOT clean'})`);
      console.log('next: start this node with SVC_STORE set to the database (same SVC_DATA_DIR: its keys stay there); '
        + `keep ${join(config.dataDir, 'ledger')} as the copy you came from`);
      return m.after.clean ? 0 : 1;
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/** Which rails take payments, said once at start: local mode and rails without an address are named. */
function logPayments(log: Logger, config: Config, feeAccounts: Record<string, string>): void {
  const x = config.x402;
  if (x) {
    const networks = [x.evm, x.solana].flatMap((n) => (n ? [{
      network: n.network, asset: n.asset, pay_to: n.payTo, fee_account: feeAccounts[n.network] ?? null,
    }] : []));
    log.info({ x402: { networks } }, 'x402 on: paid executions may be paid per request; each network\'s fee '
      + 'account (EVM relayer, Solana fee payer) pays its settlements\' fees (docs/x402.md)');
  }
  const unset = config.rails.filter((r) => r.address === NO_ADDRESS).map((r) => r.rail);
  if (config.payments === 'local') {
    log.warn({ payments: 'local', rails_without_address: unset }, 'local payments mode (SVC_PAYMENTS=local): '
      + 'invoices open on rails without a receiving address and are settled by hand; for trying svc out only');
  } else if (unset.length) {
    log.info({ payments: 'live', rails_without_address: unset }, 'rails without a receiving address '
      + '(SVC_WALLET_<RAIL>) take no payments: FUND_ACCOUNT on them is refused');
  }
}

const fail = (e: unknown) => {
  console.error(`svcd: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
};

const parsed = svcdCommand(process.argv.slice(2)); // null: help, version or a usage error was printed
const cmd = parsed?.command ?? null;
switch (cmd) {
  case null:
    break;
  case 'restore':
    restore(parsed!.args).then((c) => { process.exitCode = c; }, fail);
    break;
  case 'audit':
    offlineAudit(parsed!.args).then((c) => { process.exitCode = c; }, fail);
    break;
  case 'selfcheck':
    process.exitCode = runSelfCheck();
    break;
  case 'migrate':
    migrateCommand(parsed!.args).then((c) => { process.exitCode = c; }, fail);
    break;
  case 'cluster-cert':
    import('./cli/cluster-cert.ts').then((m) => m.clusterCertCommand(parsed!.args))
      .then((c) => { process.exitCode = c; }, fail);
    break;
  case 'manifest':
    printManifest().then((c) => { process.exitCode = c; }, fail);
    break;
  case 'start':
  case 'core':
  case 'gateway':
    run({ core: cmd !== 'gateway', gateway: cmd !== 'core' }).catch((e: unknown) => {
      console.error(`svcd: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(1);
    });
    break;
}
