// The HTTP server under the gateway's Koa app: Node's header, request and keep-alive timeouts from
// config, checked often enough to fire on time; connection caps in total and per client address
// (protocol/admission.ts: a burst over an address's cap waits, what cannot wait is answered 429 or 503
// and closed); the process-wide body budget; an ApiError body for what Node itself rejects.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ServiceError } from '../errors.ts';
import {
  admitConnections, refusalOf, takePending, waitClosed, type Admission, type Refusal,
} from '../protocol/admission.ts';
import { countConnections } from '../metrics/metrics.ts';
import { setBodyBudget, trackResponse } from './body.ts';
import { proxyMatcher } from './client-address.ts';
import { toHttpError } from './http-errors.ts';

export interface HttpLimits {
  headersTimeoutMs: number;
  /** the whole request, headers and body; at least headersTimeoutMs */
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  /** 0: no per-address cap */
  maxConnectionsPerAddress: number;
  /** peers exempt from the per-address cap: our own proxies, through which every client comes */
  uncapped?: (peer: string) => boolean;
  /** how long a connection over its address's cap waits for a slot before it is answered 429 */
  connectionQueueMs: number;
  bodyBudgetBytes: number;
  /** of bodyBudgetBytes, what one client address may hold at once */
  bodyBudgetPerAddressBytes: number;
}

/** The settings the HTTP server's limits come from (svcd's configuration has them by these names). */
export interface HttpSettings {
  httpHeadersTimeoutMs: number; httpRequestTimeoutMs: number; httpKeepAliveTimeoutMs: number;
  httpMaxConnections: number; httpMaxConnectionsPerAddress: number; connectionQueueMs: number;
  bodyBudgetBytes: number; bodyBudgetPerAddressBytes: number;
  /** proxies of ours in front (SVC_TRUST_PROXY) and which peers they are (SVC_TRUSTED_PROXIES) */
  trustProxyHops: number; trustedProxies: string[];
}

/** The HTTP server's limits from svcd's settings. */
export function httpLimits(c: HttpSettings): HttpLimits {
  return {
    headersTimeoutMs: c.httpHeadersTimeoutMs,
    requestTimeoutMs: c.httpRequestTimeoutMs,
    keepAliveTimeoutMs: c.httpKeepAliveTimeoutMs,
    maxConnections: c.httpMaxConnections,
    maxConnectionsPerAddress: c.httpMaxConnectionsPerAddress,
    // behind our proxies their connections carry every client: they are not capped per address
    ...(c.trustProxyHops > 0 ? { uncapped: proxyMatcher(c.trustedProxies) } : {}),
    connectionQueueMs: c.connectionQueueMs,
    bodyBudgetBytes: c.bodyBudgetBytes,
    bodyBudgetPerAddressBytes: c.bodyBudgetPerAddressBytes,
  };
}

/** Refusals answered at once (each costs reading one request head); past it they are dropped, counted. */
const ANSWERING = 256;

export interface GatewayServer {
  server: Server;
  admission: Admission;
  /** connections handed to the HTTP server and not yet closed */
  sockets: Set<Socket>;
}

/** Serves `app` (the Koa app) on host:port under `limits`; resolves once it listens. */
export async function listenGateway(
  app: { callback(): RequestListener }, host: string, port: number, limits: HttpLimits,
): Promise<GatewayServer> {
  setBodyBudget(limits.bodyBudgetBytes, limits.bodyBudgetPerAddressBytes);
  const server = createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Node checks both timeouts on this interval (default 30 s): a 10 s limit must not mean 40 s
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    // Node's own 400 for an HTTP/1.1 request without Host has an empty body: track() answers it instead
    requireHostHeader: false,
  }, track(app.callback(), limits));
  server.on('clientError', answerClientError);
  countConnections(server, 'http');
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const admission = admitConnections(server, {
    total: limits.maxConnections,
    perAddress: limits.maxConnectionsPerAddress,
    ...(limits.uncapped ? { uncapped: limits.uncapped } : {}),
    queueMs: limits.connectionQueueMs,
    answering: ANSWERING,
  }, 'http');
  return new Promise((resolve, reject) => {
    server.once('listening', () => resolve({ server, admission, sockets }));
    server.once('error', (e) => {
      reject(new Error(`SVC_HTTP_HOST / SVC_HTTP_PORT (${host}, ${port}): cannot listen: ${e.message}`, { cause: e }));
    });
    server.listen(port, host);
  });
}

/**
 * The Koa handler, with each request's response registered for readJsonBody; an HTTP/1.1 request
 * without Host (RFC 9112 §3.2: 400) is answered here in the ApiError shape, and its connection closed.
 */
const NO_HOST = 'an HTTP/1.1 request needs a Host header (RFC 9112 §3.2)';

function track(handle: RequestListener, limits: HttpLimits): RequestListener {
  return (req, res) => {
    const refusal = refusalOf(req.socket);
    if (refusal) return answerAndClose(res, refused(refusal, limits));
    if (req.headers.host === undefined && (req.httpVersionMajor > 1 || req.httpVersionMinor >= 1)) {
      return answerAndClose(res, new ServiceError('invalid_request', NO_HOST));
    }
    trackResponse(req, res);
    return handle(req, res);
  };
}

function answerAndClose(res: ServerResponse, e: ServiceError): void {
  const a = apiError(e);
  res.shouldKeepAlive = false;
  res.writeHead(a.status, a.headers);
  res.end(a.json);
}

/** The answer to a connection over a cap: 429 when it is its address's own, 503 when the server is full. */
function refused(why: Refusal, limits: HttpLimits): ServiceError {
  if (why === 'address') {
    const held = `this client address holds its ${limits.maxConnectionsPerAddress} connections`;
    const waited = limits.connectionQueueMs > 0 ? ` and none closed within ${limits.connectionQueueMs} ms` : '';
    return new ServiceError('rate_limited', `${held}${waited}; retry after 1 s (or reuse a connection)`,
      { retry_after_s: 1, quota: 'connections per address', limit: limits.maxConnectionsPerAddress });
  }
  return new ServiceError('busy', `this server holds its ${limits.maxConnections} connections; retry after 1 s`,
    { retry_after_s: 1 });
}

/**
 * What Node's parser rejects (malformed request, headers too large, a timed-out request) never
 * reaches Koa: answer it in the ApiError shape and close, as Node's default answer would.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // a response already started on this socket must not be corrupted (Node's own rule)
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code !== 'ECONNRESET' && socket.writable && !inFlight?.headersSent) {
    const a = apiError(clientErrorOf(err));
    const head = Object.entries(a.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    socket.write(`HTTP/1.1 ${a.status} ${STATUS_CODES[a.status]}\r\n${head}connection: close\r\n\r\n${a.json}`);
  }
  socket.destroy();
}

/** An answer Koa never sees, in the ApiError shape: its status, headers and JSON body. */
function apiError(e: ServiceError): { status: number; headers: Record<string, string | number>; json: string } {
  const { status, body, headers: extra } = toHttpError(e, randomUUID());
  const json = JSON.stringify(body);
  const headers = { ...extra, 'content-type': 'application/json', 'content-length': Buffer.byteLength(json),
    'x-request-id': body.request_id };
  return { status, headers, json };
}

function clientErrorOf(err: NodeJS.ErrnoException): ServiceError {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new ServiceError('request_timeout', 'the request did not arrive in time; closing');
  }
  if (err.code === 'HPE_HEADER_OVERFLOW') return new ServiceError('payload_too_large', 'request headers exceed 16 KiB');
  return new ServiceError('invalid_request', `malformed HTTP request (${err.code ?? 'parse error'})`);
}

/** What the drain needs of the Koa app (createGateway). */
export interface DrainingApp {
  startDraining(late: (socket: Socket) => boolean): void;
  drainCounts(): { served: number; refused: number };
}

/** What a drain did: requests served and refused (503) after it began, connections cut at the deadline. */
export interface HttpDrainReport { served: number; refused: number; cut: number }

/**
 * SIGTERM on one gateway. Readiness turns false and every answer closes its connection. What already
 * arrived is taken first (three turns of the event loop: connections waiting in the accept queue are
 * accepted, request bytes that arrived are read), so a request sent before the signal is never reset
 * with the listening socket or an idle-looking connection. Then the listener closes (`keepListening`,
 * a cluster worker: it stays open until the primary hands it nothing more, and connections it gets
 * meanwhile are answered 503 shutting_down); a keep-alive connection's next request within `idleGraceMs`
 * is served, then connections still idle are closed, and the ones with a request finish it.
 * Connections still open at `deadlineMs` are cut.
 */
export async function drainGateway(
  g: GatewayServer, app: DrainingApp, opts: { keepListening: boolean; deadlineMs: number; idleGraceMs: number },
): Promise<HttpDrainReport> {
  g.admission.stop();
  const early = new Set(g.sockets);
  app.startDraining(opts.keepListening ? (socket) => !early.has(socket) : () => false);
  await takePending();
  for (const s of [...g.sockets]) if (!early.has(s)) early.add(s); // accepted in those turns: served
  // net.Server's close: http.Server's would close the idle connections now too (Node >= 19)
  if (!opts.keepListening) Reflect.apply(NetServer.prototype.close, g.server, []);
  // a busy keep-alive client sends its next request within the grace and is served (Connection: close);
  // only connections idle that long are closed, and a request racing that close was not read
  await new Promise((r) => setTimeout(r, Math.min(opts.idleGraceMs, opts.deadlineMs)));
  g.server.closeIdleConnections();
  const waitFor = opts.keepListening ? early : g.sockets;
  const cut = await waitClosed(() => [...waitFor].filter((s) => !s.destroyed && g.sockets.has(s)), opts.deadlineMs);
  for (const s of cut) s.destroy();
  return { ...app.drainCounts(), cut: cut.length };
}
