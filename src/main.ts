// svcd: the composition root, the only module that imports every layer.
//   svcd [start]   core (and, once it lands, the gateway) in one process
//   svcd core      the core alone: svc/1 edge (TLS), backend (loopback TCP), admin socket
//   svcd selfcheck kernel known-answer check
// Configuration: environment variables (README "Configuration"). With SVC_READY_FILE set, svcd
// writes the bound addresses there as one JSON object once every listener is up.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { loadConfig } from './core/config.ts';
import { Core } from './core/core.ts';
import { startListeners } from './edge/servers.ts';
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

async function runCore(): Promise<void> {
  const config = loadConfig();
  const log = pino({ level: config.logLevel, base: { svc: 'svcd' } });
  const core = await Core.open(config);
  const listeners = await startListeners(core, log);
  const ready = { http: null as string | null, ...listeners.addresses, data_dir: config.dataDir, edge_cert_sha256: core.tls.fingerprint256 };
  if (config.readyFile) {
    writeFileSync(`${config.readyFile}.tmp`, JSON.stringify(ready) + '\n');
    renameSync(`${config.readyFile}.tmp`, config.readyFile); // readers never see half a file
  }
  log.info({ ...ready, node_id: core.ctx.identity.nodeId, self_signed: core.tls.selfSigned }, 'svcd ready');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'svcd stopping: no new connections, finishing in-flight work');
    const closing = listeners.close();
    await core.drain();
    await closing;
    await core.close();
    log.info('svcd stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => { void stop('SIGTERM'); });
  process.on('SIGINT', () => { void stop('SIGINT'); });
}

const cmd = process.argv[2] ?? 'start';
switch (cmd) {
  case 'selfcheck':
    process.exitCode = runSelfCheck();
    break;
  case 'start':
  case 'core':
    runCore().catch((e: unknown) => {
      console.error(`svcd: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(1);
    });
    break;
  default:
    console.error(`svcd: unknown command ${cmd}\nusage: svcd [start|core|selfcheck]`);
    process.exitCode = 2;
}
