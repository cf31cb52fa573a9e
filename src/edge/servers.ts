// The three svc/1 listeners of the core (DESIGN.md §1): the public edge (TLS 1.3, ALPN svc/1, one
// socket on "::" with IPv6-only off so IPv4 and IPv6 both reach it), the backend for the gateway
// (plain TCP, 127.0.0.1 only — anything else is refused at start) and the admin socket (unix
// socket in the data dir, mode 0600, the only way to reach admin commands). Each listener bounds
// what strangers can hold (issue "Trust" 13): the edge a handshake deadline, connections in total
// and per client address, and one budget for unfinished lines; the backend a total for the gateways.
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { ServiceError } from '../errors.ts';
import { AddressCounter, AddressedBudget, capConnections } from '../protocol/budgets.ts';
import { encodeLine } from '../protocol/line-codec.ts';
import { ALPN } from '../protocol/wire.ts';
import { countConnections } from '../metrics/metrics.ts';
import type { Core, Listener } from '../core/core.ts';
import { serveConnection } from './connection.ts';

export interface Listeners {
  edge: Server;
  backend: Server;
  admin: Server;
  addresses: { edge: string; backend: string; admin_socket: string };
  close(): Promise<void>;
}

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
  const sockets = new Set<Socket>();
  const track = (s: Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)); };
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

  const edge = createTlsServer({
    cert: core.tls.cert, key: core.tls.key, minVersion: 'TLSv1.3', ALPNProtocols: [ALPN],
    handshakeTimeout: cfg.handshakeTimeoutMs,
  }, (socket: TLSSocket) => {
    track(socket);
    if (socket.alpnProtocol !== ALPN) {
      // a client that did not negotiate svc/1 gets one error frame and the door
      const error = new ServiceError('bad_frame', `ALPN must be ${ALPN}`).toWire();
      socket.end(encodeLine({ id: null, ok: false, error }));
      return;
    }
    serveConnection(socket, core, conn('edge'));
  });
  // a failed or timed-out handshake (handshakeTimeout ends here too) is the client's problem, but
  // Node leaves its socket open once anyone listens for this event: close it
  edge.on('tlsClientError', (_e: Error, socket: TLSSocket) => socket.destroy());
  capConnections(edge, cfg.edgeMaxConnections, new AddressCounter(cfg.edgeMaxConnectionsPerAddress));

  if (cfg.backendHost !== '127.0.0.1') throw new Error('the backend listens on 127.0.0.1 only');
  const backend = createServer((socket) => { track(socket); serveConnection(socket, core, conn('backend')); });
  capConnections(backend, cfg.backendMaxConnections, null);
  const adminPath = join(cfg.dataDir, 'admin.sock');
  const admin = createServer((socket) => { track(socket); serveConnection(socket, core, conn('admin')); });

  countConnections(edge, 'edge');
  countConnections(backend, 'backend');
  countConnections(admin, 'admin');
  const edgeHost = cfg.edgeHost;
  await listen(edge, { host: edgeHost, port: cfg.edgePort, ipv6Only: false },
    `SVC_EDGE_HOST / SVC_EDGE_PORT (${edgeHost}, ${cfg.edgePort})`);
  await listen(backend, { host: '127.0.0.1', port: cfg.backendPort }, `SVC_BACKEND_PORT (${cfg.backendPort})`);
  if (existsSync(adminPath)) unlinkSync(adminPath); // a stale socket from a killed process
  const oldMask = process.umask(0o177);
  try {
    await listen(admin, { path: adminPath }, `the admin socket ${adminPath}`);
  } finally {
    process.umask(oldMask);
  }
  chmodSync(adminPath, 0o600);

  const closeServer = (s: Server) => new Promise<void>((r) => s.close(() => r()));
  return {
    edge, backend, admin,
    addresses: {
      edge: fmt(edge.address() as AddressInfo),
      backend: fmt(backend.address() as AddressInfo),
      admin_socket: adminPath,
    },
    async close() {
      const closing = [closeServer(edge), closeServer(backend), closeServer(admin)];
      // stop accepting, give in-flight requests a moment, then end idle connections
      for (const s of sockets) s.end();
      setTimeout(() => { for (const s of sockets) s.destroy(); }, 2000).unref();
      await Promise.all(closing);
    },
  };
}
