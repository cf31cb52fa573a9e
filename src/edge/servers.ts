// The three svc/1 listeners of the core (DESIGN.md §1): the public edge (TLS 1.3, ALPN svc/1, one
// socket on "::" with IPv6-only off so IPv4 and IPv6 both reach it), the backend for the gateways
// (plain TCP on 127.0.0.1, or mutual TLS on any address: backendServer) and the admin socket (unix
// socket in the data dir, mode 0600, the only way to reach admin commands). Each listener bounds
// what strangers can hold: the edge a handshake deadline, connections in total and per client address
// (a burst over an address's cap waits; what cannot wait gets a `busy` frame, protocol/admission.ts),
// and one budget for unfinished lines; the backend and the admin socket a total each. Closing drains:
// every connection is told, finishes what it runs, and closes (connection.ts).
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { ServiceError } from '../errors.ts';
import {
  admitConnections, refusalOf, takePending, waitClosed, type Admission, type AdmissionLimits,
} from '../protocol/admission.ts';
import { AddressedBudget } from '../protocol/budgets.ts';
import { encodeLine } from '../protocol/line-codec.ts';
import { ALPN } from '../protocol/wire.ts';
import { loadClusterTls, peerName, type ClusterTls } from '../protocol/cluster-tls.ts';
import type { Config } from '../core/config.ts';
import { countConnections, countRefusedHandshake } from '../metrics/metrics.ts';
import type { Listener } from '../core/call.ts';
import type { Core } from '../core/core.ts';
import { refuseConnection, serveConnection, type Served } from './connection.ts';

export interface Listeners {
  edge: Server;
  backend: Server;
  admin: Server;
  addresses: { edge: string; backend: string; admin_socket: string };
  /** Re-reads the cluster's TLS files for the backend's new connections (SIGHUP); null: a plain backend. */
  reloadClusterTls(): ClusterTls | null;
  /** Drains every connection (see connection.ts) within `deadlineMs`; then closes what is left. */
  close(deadlineMs?: number): Promise<DrainReport>;
}

/** What a drain did: connections that closed by themselves, and those still open at the deadline. */
export interface DrainReport { drained: number; cut: number }

/** Refusals answered at once on the edge (each costs a TLS handshake) and on the local listeners. */
const EDGE_ANSWERING = 32;
const LOCAL_ANSWERING = 16;


/** Listens; a failure names the settings it came from (`what`), not only errno's words. */
function listen(
  server: Server, opts: { host?: string; port?: number; path?: string; ipv6Only?: boolean }, what: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (e: Error) => reject(new Error(`${what}: cannot listen: ${e.message}`, { cause: e }));
    server.once('error', failed);
    server.listen(opts, () => { server.off('error', failed); resolve(); });
  });
}

const fmt = (a: AddressInfo) => (a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`);

export async function startListeners(core: Core, log: Logger): Promise<Listeners> {
  const cfg = core.ctx.config;
  const open = new Map<Socket, Served | null>();
  // strangers share one budget for unfinished lines, each address at most its share of it; the backend
  // and admin socket are local and bounded by their connection caps (x 1 MiB a line), so a flood on the
  // edge cannot starve them
  const lineBudget = new AddressedBudget(cfg.lineBudgetBytes, cfg.lineBudgetPerAddressBytes);
  const conn = (listener: Listener) => ({
    listener,
    maxInFlight: cfg.maxInFlightPerConnection,
    idleTimeoutMs: cfg.idleTimeoutMs,
    lineTimeoutMs: cfg.lineTimeoutMs,
    lineBudget: listener === 'edge' ? lineBudget : null,
    log: log.child({ listener }),
  });
  /** Serves an admitted connection, or answers a refused one (`busy`) and closes it. */
  const serve = (socket: Socket, listener: Listener, caps: AdmissionLimits) => {
    open.set(socket, null);
    socket.once('close', () => open.delete(socket));
    const refusal = refusalOf(socket);
    if (refusal) return refuseConnection(socket, refusalMessage(refusal, caps));
    open.set(socket, serveConnection(socket, core, conn(listener)));
  };

  const edgeCaps = {
    total: cfg.edgeMaxConnections, perAddress: cfg.edgeMaxConnectionsPerAddress, queueMs: cfg.connectionQueueMs,
    answering: EDGE_ANSWERING,
  };
  const edge = createTlsServer({
    cert: core.tls.cert, key: core.tls.key, minVersion: 'TLSv1.3', ALPNProtocols: [ALPN],
    handshakeTimeout: cfg.handshakeTimeoutMs,
  }, (socket: TLSSocket) => {
    if (socket.alpnProtocol !== ALPN) {
      // a client that did not negotiate svc/1 gets one error frame and the door
      const error = new ServiceError('bad_frame', `ALPN must be ${ALPN}`).toWire();
      socket.end(encodeLine({ id: null, ok: false, error }));
      return;
    }
    serve(socket, 'edge', edgeCaps);
  });
  // a failed or timed-out handshake (handshakeTimeout ends here too) is the client's problem, but
  // Node leaves its socket open once anyone listens for this event: close it
  edge.on('tlsClientError', (_e: Error, socket: TLSSocket) => socket.destroy());

  const local = (total: number) => ({ total, perAddress: 0, queueMs: 0, answering: LOCAL_ANSWERING });
  const backendCaps = local(cfg.backendMaxConnections);
  const backend = backendServer(cfg, log, (socket) => serve(socket, 'backend', backendCaps));
  const adminPath = join(cfg.dataDir, 'admin.sock');
  const adminCaps = local(cfg.adminMaxConnections);
  const admin = createServer((socket) => serve(socket, 'admin', adminCaps));

  countConnections(edge, 'edge');
  countConnections(backend, 'backend');
  countConnections(admin, 'admin');
  const admissions: Admission[] = [
    admitConnections(edge, edgeCaps, 'edge'),
    admitConnections(backend, backendCaps, 'backend'),
    admitConnections(admin, adminCaps, 'admin'),
  ];
  const edgeHost = cfg.edgeHost;
  await listen(edge, { host: edgeHost, port: cfg.edgePort, ipv6Only: false },
    `SVC_EDGE_HOST / SVC_EDGE_PORT (${edgeHost}, ${cfg.edgePort})`);
  await listen(backend, { host: cfg.backendHost, port: cfg.backendPort },
    `SVC_BACKEND_HOST / SVC_BACKEND_PORT (${cfg.backendHost}, ${cfg.backendPort})`);
  if (existsSync(adminPath)) unlinkSync(adminPath); // a stale socket from a killed process
  const oldMask = process.umask(0o177);
  try {
    await listen(admin, { path: adminPath }, `the admin socket ${adminPath}`);
  } finally {
    process.umask(oldMask);
  }
  chmodSync(adminPath, 0o600);

  const servers = [edge, backend, admin];
  let closing: Promise<DrainReport> | null = null;
  return {
    edge, backend, admin,
    addresses: {
      edge: fmt(edge.address() as AddressInfo),
      backend: fmt(backend.address() as AddressInfo),
      admin_socket: adminPath,
    },
    reloadClusterTls: () => backend.reloadTls?.() ?? null,
    close(deadlineMs = cfg.drainTimeoutMs) {
      closing ??= drainAll(servers, admissions, open, deadlineMs);
      return closing;
    },
  };
}

/**
 * The backend listener: plain TCP on 127.0.0.1, or (SVC_CLUSTER_*) TLS 1.3 on any address, every peer
 * proving a certificate of the cluster CA before a byte of svc/1 is read (the `via` client address it
 * names is trusted). A peer without one fails its handshake; that is counted and logged at most once a
 * minute. `reloadTls` re-reads the files (SIGHUP): new connections use them, open ones keep theirs.
 */
function backendServer(
  cfg: Config, log: Logger, serve: (socket: Socket) => void,
): Server & { reloadTls?: () => ClusterTls } {
  if (!cfg.clusterTls) return createServer(serve); // on 127.0.0.1: loadConfig refuses any other address
  const files = cfg.clusterTls;
  const options = (m: ClusterTls) => ({ ca: m.ca, cert: m.cert, key: m.key });
  const server = createTlsServer({
    ...options(loadClusterTls(files)), requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.3',
    ALPNProtocols: [ALPN], handshakeTimeout: cfg.handshakeTimeoutMs,
  }, (socket: TLSSocket) => {
    log.debug({ peer: peerName(socket.getPeerCertificate()), remote: socket.remoteAddress }, 'cluster peer connected');
    serve(socket);
  });
  let lastLogged = 0;
  server.on('tlsClientError', (e: Error, socket: TLSSocket) => {
    countRefusedHandshake();
    if (Date.now() - lastLogged > 60_000) {
      lastLogged = Date.now();
      log.warn({ remote: socket.remoteAddress, reason: e.message }, 'backend: a peer without a cluster certificate');
    }
    socket.destroy();
  });
  return Object.assign(server, {
    reloadTls: () => {
      const m = loadClusterTls(files);
      server.setSecureContext({ ...options(m), minVersion: 'TLSv1.3' });
      return m;
    },
  });
}

function refusalMessage(why: 'address' | 'total', caps: AdmissionLimits): string {
  if (why === 'address') {
    return `this client address holds its ${caps.perAddress} connections and none closed within ${caps.queueMs} ms;`
      + ' retry after 1 s (or pipeline on one connection)';
  }
  return `this listener holds its ${caps.total} connections; retry after 1 s`;
}

/**
 * Stops accepting once what waits in the accept queues is taken (a connection the kernel accepted
 * before the drain is served, not reset with the listening socket), drains every connection, and
 * after `deadlineMs` destroys what is still open.
 */
async function drainAll(
  servers: Server[], admissions: Admission[], open: Map<Socket, Served | null>, deadlineMs: number,
): Promise<DrainReport> {
  for (const a of admissions) a.stop();
  await takePending();
  for (const server of servers) server.close();
  const before = open.size;
  for (const served of open.values()) served?.drain();
  const left = await waitClosed(() => [...open.keys()], deadlineMs);
  for (const socket of left) socket.destroy();
  const cut = left.length;
  return { drained: Math.max(0, before - cut), cut };
}
