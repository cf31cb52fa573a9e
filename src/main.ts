// svcd: the composition root, the only module that imports every layer.
//   svcd [start]   core + HTTP gateway in one process (the gateway still talks svc/1 over loopback)
//   svcd core      the core alone: svc/1 edge (TLS), backend (loopback TCP), admin socket
//   svcd gateway   the HTTP gateway alone, against the core's backend at 127.0.0.1:SVC_BACKEND_PORT
//   svcd manifest  the manifest hash to publish in DNS
//   svcd selfcheck kernel known-answer check
// Configuration: environment variables (README "Configuration"). With SVC_READY_FILE set, svcd
// writes the bound addresses there as one JSON object once every listener is up.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { loadConfig } from './core/config.ts';
import { Core } from './core/core.ts';
import { startListeners } from './edge/servers.ts';
import { createGateway } from './gateway/app.ts';
import { listenGateway } from './gateway/http-server.ts';
import { DEFAULT_RATES, parseRate } from './gateway/rate-limit.ts';
import type { Config } from './core/config.ts';
import { NodeIdentity } from './core/node-identity.ts';
import { loadTlsMaterial } from './core/tls-material.ts';
import { DOCUMENT_PATHS, manifestHash } from './discovery/documents.ts';
import { siteFromBaseUrl } from './discovery/node-info.ts';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { ABI_VERSION, kernelWasmPath } from './kernels/index.ts';
import { selfCheck } from './kernels/self-check.ts';

function runSelfCheck(): number {
  const info = JSON.parse(readFileSync(fileURLToPath(new URL('../build/BUILD_INFO.json', import.meta.url)), 'utf8'));
  console.log(`svc kernels: ${kernelWasmPath()} (ABI ${ABI_VERSION}, sha256 ${info.outputs['kernels.wasm']})`);
  const results = selfCheck();
  for (const r of results) console.log(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name}`);
  const failed = results.filter((r) => !r.ok).length;
  console.log(failed ? `self-check FAILED (${failed})` : `self-check passed (${results.length} kernels)`);
  return failed ? 1 : 0;
}

async function startGateway(config: Config, log: Logger, backendPort: number, edgePort?: number): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const gw = createGateway({
    backend: { kind: 'tcp', host: '127.0.0.1', port: backendPort },
    rates: {
      public_low: parseRate(config.ratePublicLow, DEFAULT_RATES.public_low, 'SVC_RATE_PUBLIC_LOW'),
      paid_execution: parseRate(config.ratePaidExecution, DEFAULT_RATES.paid_execution, 'SVC_RATE_PAID_EXECUTION'),
    },
    log: log.child({ part: 'gateway' }),
    trustProxy: config.trustProxy,
    ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}),
    edgePort: edgePort ?? config.edgePort,
  });
  const server = await listenGateway(gw.app, config.httpHost, config.httpPort, {
    headersTimeoutMs: config.httpHeadersTimeoutMs,
    requestTimeoutMs: config.httpRequestTimeoutMs,
    keepAliveTimeoutMs: config.httpKeepAliveTimeoutMs,
    maxConnections: config.httpMaxConnections,
    // behind a proxy every connection comes from the proxy: per-client caps belong there
    maxConnectionsPerAddress: config.trustProxy ? 0 : config.httpMaxConnectionsPerAddress,
    bodyBudgetBytes: config.bodyBudgetBytes,
  });
  const a = server.address() as { address: string; port: number; family: string };
  const url = `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  gw.setBoundUrl(url);
  return {
    server, url,
    close: () => new Promise<void>((r) => { server.close(() => r()); server.closeIdleConnections(); setTimeout(() => server.closeAllConnections(), 2000).unref(); gw.close(); }),
  };
}

function writeReady(config: Config, ready: Record<string, unknown>): void {
  if (!config.readyFile) return;
  writeFileSync(`${config.readyFile}.tmp`, JSON.stringify(ready) + '\n');
  renameSync(`${config.readyFile}.tmp`, config.readyFile); // readers never see half a file
}

function onSignals(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'svcd stopping: no new connections, finishing in-flight work');
    stop().then(() => { log.info('svcd stopped'); process.exit(0); }, (e: unknown) => { log.error({ err: e }, 'svcd stop failed'); process.exit(1); });
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
}

async function run(parts: { core: boolean; gateway: boolean }): Promise<void> {
  const config = loadConfig();
  const log = pino({ level: config.logLevel, base: { svc: 'svcd' } });
  if (!parts.core) {
    const gw = await startGateway(config, log, config.backendPort);
    writeReady(config, { http: gw.url, edge: null, backend: `127.0.0.1:${config.backendPort}`, admin_socket: null, data_dir: null });
    log.info({ http: gw.url }, 'svcd gateway ready');
    onSignals(log, () => gw.close());
    return;
  }
  const core = await Core.open(config);
  const listeners = await startListeners(core, log);
  const port = (addr: string) => Number(addr.split(':').pop());
  const gw = parts.gateway ? await startGateway(config, log, port(listeners.addresses.backend), port(listeners.addresses.edge)) : null;
  const ready = { http: gw?.url ?? null, ...listeners.addresses, data_dir: config.dataDir, edge_cert_sha256: core.tls.fingerprint256 };
  writeReady(config, ready);
  log.info({ ...ready, node_id: core.ctx.identity.nodeId, self_signed: core.tls.selfSigned }, 'svcd ready');
  onSignals(log, async () => {
    const closing = Promise.all([listeners.close(), gw?.close()]);
    await core.drain();
    await closing;
    await core.close();
  });
}

/** `svcd manifest`: the manifest hash to publish as a DNS TXT record (SPEC "Versioning"). */
async function printManifest(): Promise<number> {
  const config = loadConfig();
  const identity = NodeIdentity.loadOrCreate(config.dataDir);
  const tls = await loadTlsMaterial({ dataDir: config.dataDir, certFile: config.tlsCert, keyFile: config.tlsKey, hosts: [config.edgeHost] });
  const baseUrl = config.baseUrl ?? `http://${config.httpHost.includes(':') ? `[${config.httpHost}]` : config.httpHost}:${config.httpPort}`;
  const site = siteFromBaseUrl(baseUrl, config.edgePort, Object.fromEntries(config.rails.map((r) => [r.rail, r.address])));
  const node = { ...identity.public, edge_cert_sha256: tls.fingerprint256 };
  const hash = manifestHash(node, site);
  console.log(`manifest: ${baseUrl}${DOCUMENT_PATHS.manifest}`);
  console.log(`sha256:   ${hash}`);
  console.log(`DNS TXT:  _svc-manifest.${site.edge_host} TXT "v=svc_public_discovery_v1; sha256=${hash}"`);
  return 0;
}

const cmd = process.argv[2] ?? 'start';
switch (cmd) {
  case 'selfcheck':
    process.exitCode = runSelfCheck();
    break;
  case 'manifest':
    printManifest().then((c) => { process.exitCode = c; }, (e: unknown) => { console.error(`svcd: ${e instanceof Error ? e.message : String(e)}`); process.exitCode = 1; });
    break;
  case 'start':
  case 'core':
  case 'gateway':
    run({ core: cmd !== 'gateway', gateway: cmd !== 'core' }).catch((e: unknown) => {
      console.error(`svcd: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(1);
    });
    break;
  default:
    console.error(`svcd: unknown command ${cmd}\nusage: svcd [start|core|gateway|manifest|selfcheck]`);
    process.exitCode = 2;
}
