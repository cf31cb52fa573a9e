// The HTTP server under the gateway's Koa app (issue "Trust" 13): Node's header, request and
// keep-alive timeouts from config, checked often enough to fire on time; connection caps in total
// and per client address; the process-wide body budget; an ApiError body for what Node itself rejects.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, createServer, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ServiceError } from '../errors.ts';
import { AddressCounter, capConnections } from '../protocol/budgets.ts';
import { countConnections } from '../metrics/metrics.ts';
import { setBodyBudget, trackResponse } from './body.ts';
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
  bodyBudgetBytes: number;
  /** of bodyBudgetBytes, what one client address may hold at once */
  bodyBudgetPerAddressBytes: number;
}

/** Serves `app` (the Koa app) on host:port under `limits`; resolves once it listens. */
export async function listenGateway(
  app: { callback(): RequestListener }, host: string, port: number, limits: HttpLimits,
): Promise<Server> {
  setBodyBudget(limits.bodyBudgetBytes, limits.bodyBudgetPerAddressBytes);
  const server = createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Node checks both timeouts on this interval (default 30 s): a 10 s limit must not mean 40 s
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    // Node's own 400 for an HTTP/1.1 request without Host has an empty body: track() answers it instead
    requireHostHeader: false,
  }, track(app.callback()));
  const perAddress = limits.maxConnectionsPerAddress > 0 ? new AddressCounter(limits.maxConnectionsPerAddress) : null;
  capConnections(server, limits.maxConnections, perAddress, limits.uncapped);
  server.on('clientError', answerClientError);
  countConnections(server, 'http');
  return new Promise((resolve, reject) => {
    server.once('listening', () => resolve(server));
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

function track(handle: RequestListener): RequestListener {
  return (req, res) => {
    if (req.headers.host === undefined && (req.httpVersionMajor > 1 || req.httpVersionMinor >= 1)) {
      const a = apiError(new ServiceError('invalid_request', NO_HOST));
      res.shouldKeepAlive = false;
      res.writeHead(a.status, a.headers);
      res.end(a.json);
      return;
    }
    trackResponse(req, res);
    return handle(req, res);
  };
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
  const { status, body } = toHttpError(e, randomUUID());
  const json = JSON.stringify(body);
  const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json),
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
