// Raw bytes on the wire for adversarial tests: HTTP/1.1 requests built byte by byte (bad methods, paths,
// headers and framing that node:http and fetch refuse to send) and svc/1 lines over a TLS socket with no
// client-side checks. Every exchange has a client timeout, so a server that hangs fails the test instead.
// Also raw svc/1 frames on the admin socket, the shape check of a svc/1 error frame, and held
// connections from a chosen source address (loopback 127.0.0.x) that keep what the server sent them.
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import type { ExecutionContext } from 'ava';
import type { ErrorCode } from '../../src/errors.ts';

export interface HttpRequestSpec {
  method: string;
  /** the request-target, as raw bytes when it holds non-ASCII */
  target: string | Buffer;
  version?: string;
  /** sent as given, in order; Host and Connection: close come first unless `bare` */
  headers?: [string, string | Buffer][];
  body?: Buffer | string;
  /** send the body with Transfer-Encoding: chunked in pieces of this size, instead of Content-Length */
  chunkSize?: number;
  /** omit the automatic Host, Connection and Content-Length headers */
  bare?: boolean;
}

export function buildHttpRequest(r: HttpRequestSpec): Buffer {
  const body = r.body === undefined ? undefined : Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body, 'utf8');
  const line = (...parts: (string | Buffer)[]) => Buffer.concat(parts.map((p) => Buffer.from(p)));
  const lines: Buffer[] = [line(`${r.method} `, r.target, ` ${r.version ?? 'HTTP/1.1'}\r\n`)];
  const header = (k: string, v: string | Buffer) => lines.push(line(`${k}: `, v, '\r\n'));
  if (!r.bare) {
    header('Host', '127.0.0.1');
    header('Connection', 'close');
  }
  for (const [k, v] of r.headers ?? []) header(k, v);
  let payload = body ?? Buffer.alloc(0);
  if (body && r.chunkSize) {
    header('Transfer-Encoding', 'chunked');
    const parts: Buffer[] = [];
    for (let i = 0; i < body.length; i += r.chunkSize) {
      const piece = body.subarray(i, i + r.chunkSize);
      parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
    }
    parts.push(Buffer.from('0\r\n\r\n'));
    payload = Buffer.concat(parts);
  } else if (body && !r.bare) {
    header('Content-Length', String(body.length));
  }
  return Buffer.concat([...lines, Buffer.from('\r\n'), payload]);
}

export interface RawReply {
  /** the final (non-1xx) status, or null when the server closed without one */
  status: number | null;
  headers: Record<string, string>;
  body: Buffer;
  timedOut: boolean;
  error?: string;
}

function parseReply(buf: Buffer): Omit<RawReply, 'timedOut' | 'error'> {
  let offset = 0;
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', offset, 'latin1');
    if (end < 0) return { status: null, headers: {}, body: Buffer.alloc(0) };
    const head = buf.toString('latin1', offset, end).split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '');
    if (!m) return { status: null, headers: {}, body: Buffer.alloc(0) };
    const status = Number(m[1]);
    if (status < 200) { offset = end + 4; continue; } // 100 Continue and friends
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const i = line.indexOf(':');
      if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    return { status, headers, body: buf.subarray(end + 4) };
  }
}

/** Sends one request on a fresh connection and reads until the server closes it (or the timeout). */
export function rawHttp(port: number, request: Buffer, timeoutMs = 10_000, host = '127.0.0.1'): Promise<RawReply> {
  return new Promise((resolve) => {
    const sock = netConnect({ host, port });
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (timedOut: boolean, error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ ...parseReply(Buffer.concat(chunks)), timedOut, ...(error ? { error } : {}) });
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('close', () => finish(false));
    // a reset after the reply (the server closed with our body unread) still leaves the reply in chunks
    sock.on('error', (e) => finish(false, e.message));
    sock.write(request);
  });
}

/**
 * Sends the start of a request and goes away: `end` half-closes (EOF mid-body), `destroy` drops the
 * connection once the bytes are written. Resolves when the socket is closed, or after `timeoutMs`.
 */
export function sendAndVanish(
  port: number, request: Buffer, how: 'end' | 'destroy', timeoutMs = 2000, host = '127.0.0.1',
): Promise<void> {
  return new Promise((resolve) => {
    const sock = netConnect({ host, port });
    const timer = setTimeout(() => sock.destroy(), timeoutMs);
    sock.on('error', () => { /* close follows */ });
    sock.on('close', () => { clearTimeout(timer); resolve(); });
    sock.write(request, () => { if (how === 'end') sock.end(); else sock.destroy(); });
  });
}

/** A svc/1 connection over TLS that writes raw lines and reads reply lines, one exchange at a time. */
export class RawLines {
  readonly #sock: TLSSocket;
  #buf = '';
  #lines: string[] = [];
  #closed = false;
  #wake: (() => void) | null = null;

  private constructor(sock: TLSSocket) {
    this.#sock = sock;
    sock.setEncoding('utf8');
    sock.setNoDelay(true);
    sock.on('data', (d: string) => {
      this.#buf += d;
      let i;
      while ((i = this.#buf.indexOf('\n')) >= 0) {
        this.#lines.push(this.#buf.slice(0, i));
        this.#buf = this.#buf.slice(i + 1);
      }
      this.#wake?.();
    });
    sock.on('close', () => { this.#closed = true; this.#wake?.(); });
    sock.on('error', () => { /* close follows */ });
  }

  static open(port: number): Promise<RawLines> {
    return new Promise((resolve, reject) => {
      const t = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['svc/1'] },
        () => resolve(new RawLines(t)));
      t.once('error', reject);
    });
  }

  get closed(): boolean { return this.#closed; }

  /** Writes `data`, then waits for the next reply line: null when the connection closed or the timeout passed. */
  async exchange(data: string | Buffer, timeoutMs = 10_000): Promise<string | null> {
    if (data.length) this.#sock.write(data);
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; this.#wake?.(); }, timeoutMs);
    while (!this.#lines.length && !this.#closed && !timedOut) await new Promise<void>((r) => { this.#wake = r; });
    clearTimeout(timer);
    this.#wake = null;
    return this.#lines.shift() ?? null;
  }

  close(): void { this.#sock.destroy(); }
}

/** One svc/1 request line. */
export const frame = (id: number, cmd: string, args: Record<string, unknown> = {}): string =>
  `${JSON.stringify({ v: 'svc/1', id, cmd, args })}\n`;

/** Asserts the svc/1 error frame's shape: {id, ok:false, error:{code, message[, details]}}, nothing more. */
export function isErrorFrame(t: ExecutionContext, line: string | null, id: number, code: ErrorCode) {
  t.truthy(line, 'a reply line');
  const f = JSON.parse(line!);
  t.deepEqual([f.id, f.ok, f.error?.code], [id, false, code]);
  t.deepEqual(Object.keys(f).sort(), ['error', 'id', 'ok']);
  t.true(typeof f.error.message === 'string' && f.error.message.length > 0);
  t.deepEqual(Object.keys(f.error).filter((k) => !['code', 'message', 'details'].includes(k)), []);
  return f.error as { code: string; message: string; details?: Record<string, unknown> };
}

/** One raw exchange on the admin socket (a Unix socket speaking svc/1 without TLS). */
export function adminExchange(path: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = netConnect(path, () => s.write(line));
    let buf = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => {
      buf += d;
      const i = buf.indexOf('\n');
      if (i >= 0) { s.destroy(); resolve(buf.slice(0, i)); }
    });
    s.on('error', reject);
  });
}

/** A connection held open: everything the server sent it, and whether it was closed. */
export interface Held { socket: Socket; data: string; closed: boolean }

/** Keeps what `socket` receives and whether it closed. */
export function held(socket: Socket): Held {
  const h: Held = { socket, data: '', closed: false };
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => { h.data += d; });
  socket.on('close', () => { h.closed = true; });
  socket.on('error', () => { /* a reset after the server's answer is part of being closed */ });
  return h;
}

/** A TCP connection to 127.0.0.1:`port` from `localAddress`, held. */
export const heldTcp = (port: number, localAddress: string): Promise<Held> => new Promise((resolve, reject) => {
  const socket = netConnect({ host: '127.0.0.1', port, localAddress }, () => resolve(h));
  socket.once('error', reject);
  const h = held(socket);
});

/** A svc/1 TLS connection (ALPN svc/1, certificate unchecked) to 127.0.0.1:`port` from `localAddress`, held. */
export const heldTls = (port: number, localAddress: string): Promise<Held> => new Promise((resolve, reject) => {
  const raw = netConnect({ host: '127.0.0.1', port, localAddress });
  const socket = tlsConnect({ socket: raw, rejectUnauthorized: false, ALPNProtocols: ['svc/1'] });
  socket.once('secureConnect', () => resolve(h));
  socket.once('error', reject);
  socket.once('close', () => reject(new Error(`closed before the handshake finished (from ${localAddress})`)));
  const h = held(socket);
});
