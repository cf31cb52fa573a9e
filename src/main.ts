// svcd: the composition root, the only module that imports every layer.
//   svcd [start]   core + HTTP gateway in one process (the gateway still talks svc/1 over loopback)
//   svcd core      the core alone: svc/1 edge (TLS), backend (loopback TCP), admin socket
//   svcd gateway   the HTTP gateway alone, against the core's backend at 127.0.0.1:SVC_BACKEND_PORT
//   svcd selfcheck kernel known-answer check
// Configuration: environment variables (README "Configuration"). With SVC_READY_FILE set, svcd
// writes the bound addresses there as one JSON object once every listener is up.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { loadConfig } from './core/config.ts';
import { Core } from './core/core.ts';
import { startListeners } from './edge/servers.ts';
import { createGateway, listenGateway } from './gateway/app.ts';
import { DEFAULT_RATES, parseRate } from './gateway/rate-limit.ts';
import type { Config } from './core/config.ts';
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

async function startGateway(config: Config, log: Logger, backendPort: number): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const gw = createGateway({
    backend: { kind: 'tcp', host: '127.0.0.1', port: backendPort },
    rates: {
      public_low: parseRate(config.ratePublicLow, DEFAULT_RATES.public_low, 'SVC_RATE_PUBLIC_LOW'),
      paid_execution: parseRate(config.ratePaidExecution, DEFAULT_RATES.paid_execution, 'SVC_RATE_PAID_EXECUTION'),
    },
    log: log.child({ part: 'gateway' }),
    trustProxy: config.trustProxy,
  });
  const server = await listenGateway(gw.app, config.httpHost, config.httpPort);
  const a = server.address() as { address: string; port: number; family: string };
  const url = `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
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
  const gw = parts.gateway ? await startGateway(config, log, Number(listeners.addresses.backend.split(':').pop())) : null;
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

const cmd = process.argv[2] ?? 'start';
switch (cmd) {
  case 'selfcheck':
    process.exitCode = runSelfCheck();
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
    console.error(`svcd: unknown command ${cmd}\nusage: svcd [start|core|gateway|selfcheck]`);
    process.exitCode = 2;
}
