// The metrics listener (SVC_METRICS_HOST / SVC_METRICS_PORT): GET /metrics in the Prometheus text
// format on its own HTTP server, 127.0.0.1 by default, never on the public gateway port (the gateway
// has no /metrics route; config refuses SVC_METRICS_PORT = SVC_HTTP_PORT). Anything else it is asked
// gets the ApiError shape. Small limits: it serves a scraper or two, not the public.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ServiceError } from '../errors.ts';
import { contentType, scrape } from '../metrics/scrape.ts';
import { toHttpError } from './http-errors.ts';

export const METRICS_PATH = '/metrics';

export interface MetricsListener { server: Server; address: string; close(): Promise<void> }

function answerError(res: ServerResponse, e: ServiceError, headers: Record<string, string> = {}): void {
  const { status, body } = toHttpError(e, randomUUID());
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== METRICS_PATH) return answerError(res, new ServiceError('not_found', `no route ${req.method} ${path}`));
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    const msg = `${req.method} is not allowed on ${METRICS_PATH} (Allow: GET, HEAD)`;
    return answerError(res, new ServiceError('method_not_allowed', msg), { Allow: 'GET, HEAD' });
  }
  scrape().then((text) => {
    res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : text);
  }, (e: unknown) => answerError(res, new ServiceError('internal', 'metrics scrape failed', undefined, { cause: e })));
}

/** Listens on host:port; resolves once bound. */
export function listenMetrics(host: string, port: number): Promise<MetricsListener> {
  const server = createServer({ headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 5_000 }, handle);
  server.maxConnections = 64;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const a = server.address() as AddressInfo;
      const address = a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
      resolve({
        server, address,
        close: () => new Promise<void>((r) => { server.close(() => r()); server.closeAllConnections(); }),
      });
    });
  });
}
