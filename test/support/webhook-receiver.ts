// A webhook receiver on loopback: records each request (headers, raw body) and answers with the status the
// test sets (200 unless told).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received { headers: Record<string, string | undefined>; body: string }
export interface Receiver {
  url: string;
  requests: Received[];
  /** the status (and body) of the answers from now on */
  answer(status: number, body?: string): void;
  close(): Promise<void>;
}

export async function receiver(): Promise<Receiver> {
  let reply = { status: 200, body: '' };
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = req.headers as Record<string, string | undefined>;
      requests.push({ headers, body: Buffer.concat(chunks).toString() });
      res.writeHead(reply.status, { 'content-type': 'text/plain' }).end(reply.body);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/svc`, requests,
    answer: (status, body = '') => { reply = { status, body }; },
    close: () => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); }),
  };
}
