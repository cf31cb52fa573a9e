// HTTP requests with a JSON body and a JSON reply: httpFrom from a chosen loopback source address
// (127.0.0.2, 127.0.0.3, ...), which lets one test speak as several clients, as rate limits and
// per-address quotas see them; httpJson through fetch, from the default address. Loopback only.
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

export interface FetchReply { status: number; headers: Headers; body: any }

/** One request through fetch: `body` as JSON (a string is sent as is), the reply's body parsed as JSON. */
export async function httpJson(
  url: string, method: string, body?: unknown, headers: Record<string, string> = {},
): Promise<FetchReply> {
  const res = await fetch(url, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}
