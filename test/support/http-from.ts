// HTTP requests from a chosen loopback source address (127.0.0.2, 127.0.0.3, ...): lets one test speak
// as several clients, as rate limits and per-address quotas see them. Loopback only.
import { request } from 'node:http';

export interface HttpReply { status: number; headers: Record<string, string | string[] | undefined>; body: any }

export function httpFrom(
  local: string, base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {},
): Promise<HttpReply> {
  const u = new URL(path, base);
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request({
      host: u.hostname, port: u.port, path: u.pathname + u.search, method, localAddress: local,
      headers: { ...(payload !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try { parsed = text ? JSON.parse(text) : null; } catch { /* not JSON: keep the text */ }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}
