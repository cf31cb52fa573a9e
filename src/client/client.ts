// The public client kit: a svc/1 client over TLS (the edge), plain TCP (the backend, for the
// gateway) or the admin unix socket. Pipelines requests (replies are matched by id), pins the edge
// certificate by SHA-256 fingerprint or trusts a CA file, and turns error frames back into
// ServiceError with the same code (a ReplyError, naming the request's id). Importable by users;
// never imports the core.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, TLSSocket, type PeerCertificate } from 'node:tls';
import { ServiceError } from '../errors.ts';
import { LineDecoder, encodeLine, lineWriter } from '../protocol/line-codec.ts';
import { ALPN, PROTOCOL, type FrameId, type ReplyFrame } from '../protocol/wire.ts';

export type Endpoint =
  | {
    kind: 'tls'; host: string; port: number; pin?: string; ca?: string; insecure?: boolean; servername?: string;
    /** source address to connect from (a multi-homed host, or tests speaking as several clients) */
    localAddress?: string;
    /**
     * mutual TLS inside a cluster (PEM texts): present `cert` with `key`, and trust `ca` only; the server's
     * certificate must name `host` (docs/scale-out.md "Across hosts")
     */
    mutual?: { ca: string; cert: string; key: string };
  }
  | { kind: 'tcp'; host: string; port: number; localAddress?: string }
  | { kind: 'unix'; path: string };

/** payment: an x402 payment, the PAYMENT-SIGNATURE header's text (docs/x402.md) */
export interface Auth { machine_id?: string; token?: string; payment?: string }
/** Who a trusted front end (the gateway) speaks for; honoured on the backend listener only. */
export interface Via { client: string }

/** Parses "host:port", "[v6]:port" or "v6::addr:port"-free forms into host and port. */
export function parseHostPort(s: string, defaultPort = 9443): { host: string; port: number } {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(s) ?? /^([^:]+)(?::(\d+))?$/.exec(s);
  if (!m) throw new ServiceError('invalid_request', `not a HOST:PORT: ${s}`);
  const port = m[2] ? Number(m[2]) : defaultPort;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ServiceError('invalid_request', `bad port in ${s}`);
  }
  return { host: m[1]!, port };
}

export const normalizeFingerprint = (f: string) => f.replaceAll(':', '').toLowerCase();

export class ConnectionError extends Error {
  /**
   * Whether the request may have reached the server: true (the default, the cautious answer) when the
   * connection was lost after the request was written, so its outcome is unknown; false when it never
   * left this process (the connection could not be opened, or was already gone, or the client closed).
   */
  readonly sent: boolean;

  constructor(message: string, options?: { cause?: unknown; sent?: boolean }) {
    super(message, options);
    this.name = 'ConnectionError';
    this.sent = options?.sent ?? true;
  }
}

/**
 * A refusal that answers one request: the ServiceError its error frame carries, and the id that request was
 * sent with, so a person can name the request (a CLI that sends ids of its own prints it with the error).
 */
export class ReplyError extends ServiceError {
  readonly requestId: FrameId;

  constructor(e: ServiceError, requestId: FrameId) {
    super(e.code, e.message, e.details);
    this.requestId = requestId;
  }
}

/** How a client frames and watches its requests (SvcClient.connect). */
export interface ConnectOptions {
  /**
   * No reply for this long to the oldest request drops the connection (its requests fail with
   * ConnectionError, sent) and the next request opens a new one; 0 or absent: no limit.
   */
  replyTimeoutMs?: number;
  /** the id each request frame carries (default 1, 2, 3…): a CLI sends ids a person can quote */
  frameId?: () => FrameId;
  /** sees each frame as it is sent or received, exactly as on the wire, tokens included (a wire log) */
  onFrame?: (direction: 'sent' | 'received', frame: Readonly<Record<string, unknown>>) => void;
}

interface Pending {
  resolve: (r: Record<string, unknown>) => void;
  reject: (e: unknown) => void;
  /** when it was sent (Date.now()) */
  at: number;
}

/** One live socket and the requests waiting on it (in the order they were sent: the oldest first). */
class Connection {
  readonly socket: Socket;
  readonly pending = new Map<FrameId, Pending>();
  /** requests made in one turn go out in one write (lineWriter) */
  readonly #write: (line: string) => void;
  dead: Error | null = null;
  /** the server said it is shutting down (a notice frame): no new requests here; ends once answered */
  closing = false;
  #nextId = 1;
  readonly #frameId: () => FrameId;
  readonly #onFrame: ConnectOptions['onFrame'];
  #watch: NodeJS.Timeout | null = null;
  /** when the last reply arrived (Date.now()) */
  #lastReply = Date.now();
  #probing = false;
  readonly #replyTimeoutMs: number;

  /**
   * `replyTimeoutMs` (0: none): a peer that accepts and never answers (stopped, wedged) cannot hold calls
   * for ever. While requests wait and nothing has come back for half that time, the connection sends a
   * HEALTH of its own: a live peer answers it at once, also while one call runs long (a large BVM
   * execution), and its answer counts as progress. With no reply at all for the whole time the connection
   * fails, and its requests with it. One timer a connection, not one a request.
   */
  constructor(socket: Socket, opts: ConnectOptions = {}) {
    const replyTimeoutMs = opts.replyTimeoutMs ?? 0;
    this.#replyTimeoutMs = replyTimeoutMs;
    this.socket = socket;
    this.#write = lineWriter(socket);
    this.#frameId = opts.frameId ?? (() => this.#nextId++);
    this.#onFrame = opts.onFrame;
    if (replyTimeoutMs > 0) {
      const every = Math.max(10, Math.min(1000, Math.floor(replyTimeoutMs / 4)));
      this.#watch = setInterval(() => this.#check(replyTimeoutMs), every);
      this.#watch.unref();
    }
    const decoder = new LineDecoder();
    socket.on('data', (chunk: Buffer) => {
      const { lines, overflow } = decoder.push(chunk);
      for (const line of lines) this.#onLine(line);
      if (overflow) this.fail(new ConnectionError('reply line too long'));
    });
    socket.on('error', (e) => this.fail(new ConnectionError(`connection error: ${e.message}`, { cause: e })));
    socket.on('close', () => this.fail(new ConnectionError('connection closed')));
  }

  #check(timeoutMs: number): void {
    const oldest = this.pending.values().next().value;
    if (!oldest) return;
    const quiet = Date.now() - Math.max(oldest.at, this.#lastReply);
    if (quiet >= timeoutMs) {
      this.fail(new ConnectionError(`no reply in ${timeoutMs} ms`));
    } else if (quiet >= timeoutMs / 2 && !this.#probing) {
      this.#probing = true;
      const done = () => { this.#probing = false; };
      this.request('HEALTH', {}).then(done, done);
    }
  }

  #onLine(line: string): void {
    this.#lastReply = Date.now();
    let f: ReplyFrame;
    try { f = JSON.parse(line) as ReplyFrame; } catch { this.fail(new ConnectionError('reply is not JSON')); return; }
    this.#onFrame?.('received', f);
    if (typeof f.id !== 'number' && typeof f.id !== 'string') {
      // the server's notice that it is shutting down: what was sent is still answered, nothing more is sent
      if (!f.ok && f.error?.code === 'shutting_down') return this.#closing();
      // any other frame without our id is a connection-level error from the server
      if (!f.ok) this.fail(ServiceError.fromWire(f.error));
      return;
    }
    const p = this.pending.get(f.id);
    if (!p) return;
    this.pending.delete(f.id);
    if (f.ok) p.resolve(f.result); else p.reject(new ReplyError(ServiceError.fromWire(f.error), f.id));
    if (this.closing && this.pending.size === 0) this.socket.end();
  }

  /** Shutting down (the server's notice): no new requests on this connection; closed once they are answered. */
  #closing(): void {
    this.closing = true;
    if (this.pending.size === 0) this.socket.end();
  }

  fail(e: Error): void {
    if (this.end(e)) this.socket.destroy();
  }

  /** Ends the connection's requests with `e` (false when it had ended already); the caller closes the socket. */
  end(e: Error): boolean {
    if (this.dead) return false;
    this.dead = e;
    if (this.#watch) clearInterval(this.#watch);
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    return true;
  }

  /**
   * When this connection gives up on a request sent now if the peer stays silent: the peer refuses to start
   * it later (a node stopped or cut off that reads it after coming back), since nobody would hear the answer.
   */
  #deadline(): number {
    const oldest = this.pending.values().next().value;
    return Math.max(oldest?.at ?? Date.now(), this.#lastReply) + this.#replyTimeoutMs;
  }

  request(cmd: string, args: Record<string, unknown>, auth?: Auth, via?: Via): Promise<Record<string, unknown>> {
    if (this.dead) return Promise.reject(new ConnectionError(this.dead.message, { cause: this.dead, sent: false }));
    const id = this.#frameId();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, at: Date.now() });
      const frame = {
        v: PROTOCOL, id, cmd, args,
        ...(auth && (auth.machine_id || auth.token || auth.payment) ? { auth } : {}),
        ...(via ? { via } : {}),
        ...(this.#replyTimeoutMs > 0 ? { deadline: this.#deadline() } : {}),
      };
      this.#onFrame?.('sent', frame);
      this.#write(encodeLine(frame));
    });
  }
}

/**
 * A svc/1 client for one endpoint. Requests are pipelined on one connection; when it drops, the
 * requests in flight on it fail with ConnectionError (the caller decides whether to retry: every
 * money path is idempotent) and the next request opens a new connection.
 */
export class SvcClient {
  readonly #ep: Endpoint;
  readonly #timeoutMs: number;
  readonly #opts: ConnectOptions;
  #conn: Connection | null = null;
  #connecting: Promise<Connection> | null = null;
  #closed = false;

  private constructor(ep: Endpoint, timeoutMs: number, opts: ConnectOptions) {
    this.#ep = ep;
    this.#timeoutMs = timeoutMs;
    this.#opts = opts;
  }

  /**
   * Connects (failing fast when the endpoint is unreachable or the certificate does not match) within
   * `timeoutMs`; `opts` (ConnectOptions) hold for every connection it opens.
   */
  static async connect(ep: Endpoint, timeoutMs = 10_000, opts: ConnectOptions = {}): Promise<SvcClient> {
    const c = new SvcClient(ep, timeoutMs, opts);
    await c.#live();
    return c;
  }

  /** Reconnections made after the first connection (for observability and tests). */
  reconnects = 0;

  async #live(): Promise<Connection> {
    if (this.#conn && !this.#conn.dead && !this.#conn.closing) return this.#conn;
    if (!this.#connecting) {
      const again = this.#conn !== null;
      this.#connecting = openSocket(this.#ep, this.#timeoutMs).then((s) => {
        if (again) this.reconnects++;
        this.#conn = new Connection(s, this.#opts);
        return this.#conn;
      }).finally(() => { this.#connecting = null; });
    }
    return this.#connecting;
  }

  /** Sends one command; resolves with its result or rejects with a ServiceError or ConnectionError. */
  async request(
    cmd: string, args: Record<string, unknown> = {}, auth?: Auth, via?: Via,
  ): Promise<Record<string, unknown>> {
    if (this.#closed) throw new ConnectionError('client closed', { sent: false });
    return (await this.#live()).request(cmd, args, auth, via);
  }

  /** SHA-256 of the certificate the TLS edge presented (hex, lowercase), while connected; else undefined. */
  get peerCertificateSha256(): string | undefined {
    const s = this.#conn?.socket;
    const cert = s instanceof TLSSocket ? s.getPeerX509Certificate() : undefined;
    return cert ? normalizeFingerprint(cert.fingerprint256) : undefined;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const c = this.#conn;
    // requests still waiting get an answer (an error), never a promise that stays pending
    if (c?.end(new ConnectionError('client closed'))) c.socket.end();
  }
}

async function openSocket(ep: Endpoint, timeoutMs: number): Promise<Socket> {
    const socket = await new Promise<Socket>((resolve, reject) => {
      let s: Socket;
      const timer = setTimeout(() => {
        s?.destroy();
        reject(new ConnectionError(`connect timed out after ${timeoutMs} ms`, { sent: false }));
      }, timeoutMs);
      const done = (e?: Error) => { clearTimeout(timer); if (e) reject(e); else resolve(s); };
      if (ep.kind === 'tls') {
        const pinned = ep.pin ? normalizeFingerprint(ep.pin) : null;
        const t: TLSSocket = tlsConnect({
          host: ep.host, port: ep.port, ALPNProtocols: [ALPN], minVersion: 'TLSv1.3',
          ...(ep.localAddress ? { localAddress: ep.localAddress } : {}),
          servername: ep.servername ?? (/^[\d.:]+$/.test(ep.host) ? undefined : ep.host),
          ...(ep.ca ? { ca: readFileSync(ep.ca) } : {}),
          ...(ep.mutual ? { ca: ep.mutual.ca, cert: ep.mutual.cert, key: ep.mutual.key } : {}),
          // with a pin (or --insecure) the chain is not checked against a CA; the pin is checked below
          rejectUnauthorized: !(pinned || ep.insecure),
          // (node asserts that checkServerIdentity, when present, is a function: omit it otherwise)
          ...(pinned || ep.insecure ? { checkServerIdentity: () => undefined } : {}),
        }, () => {
          if (pinned) {
            const cert = t.getPeerCertificate(true) as PeerCertificate & { raw?: Buffer };
            const got = cert.raw ? new X509Certificate(cert.raw).fingerprint256 : '';
            if (normalizeFingerprint(got) !== pinned) {
              t.destroy();
              done(new ConnectionError(`edge certificate fingerprint ${normalizeFingerprint(got)}`
                + ' does not match the pin', { sent: false }));
              return;
            }
          }
          if (t.alpnProtocol !== ALPN) {
            t.destroy();
            done(new ConnectionError(`edge did not negotiate ALPN ${ALPN}`, { sent: false }));
            return;
          }
          done();
        });
        s = t;
        t.once('error', (e) => {
          const why = `TLS connection to ${ep.host}:${ep.port} failed: ${e.message}`;
          done(new ConnectionError(why, { cause: e, sent: false }));
        });
      } else {
        s = ep.kind === 'tcp'
          ? netConnect({ host: ep.host, port: ep.port, ...(ep.localAddress ? { localAddress: ep.localAddress } : {}) })
          : netConnect({ path: ep.path });
        s.once('connect', () => done());
        const where = ep.kind === 'tcp' ? `${ep.host}:${ep.port}` : ep.path;
        s.once('error', (e) => {
          done(new ConnectionError(`connection to ${where} failed: ${e.message}`, { cause: e, sent: false }));
        });
      }
    });
    socket.setNoDelay(true);
  return socket;
}
