// Who gets a connection, decided before any TLS or HTTP work is done for it: caps in total and per
// client address (addressKey), applied by taking over a server's 'connection' handlers. A connection
// over its address's cap waits unread, in a short queue of its address, for one of the address's
// connections to close; one that cannot wait is not dropped but refused *with words*: it is handed to
// the server marked (refusalOf), and the protocol answers it (HTTP 429 or 503, a svc/1 `busy` frame)
// and closes. Answering costs what the caps protect, so at most `answering` refusals are answered at
// once; past that a connection is dropped, and every drop is counted.
import { connectionRefusals } from '../metrics/metrics.ts';
import { addressKey } from './budgets.ts';

/** Why a connection is refused: its address holds its cap, or the listener holds its total. */
export type Refusal = 'address' | 'total';

export interface AdmissionLimits {
  /** connections at once, refused ones being answered included */
  total: number;
  /** per client address; 0: no per-address cap */
  perAddress: number;
  /** peers exempt from the per-address cap (our own proxies): they count in the total only */
  uncapped?: (address: string) => boolean;
  /** how long a connection over its address's cap may wait for a slot; 0: refused at once */
  queueMs: number;
  /** connections one address may have waiting (default 4 x perAddress) */
  queuePerAddress?: number;
  /** refusals answered at once; past it they are dropped (counted) */
  answering: number;
}

/** What admission needs of a socket (net.Socket; typed by shape, so tests can pass an emitter). */
export interface Peer {
  readonly remoteAddress?: string | undefined;
  readonly destroyed: boolean;
  destroy(): unknown;
  once(event: 'close', fn: () => void): unknown;
  on(event: 'error', fn: (e: Error) => void): unknown;
  off(event: 'error', fn: (e: Error) => void): unknown;
}
type Handler = (socket: Peer) => void;
interface Listening {
  maxConnections: number;
  listeners(event: 'connection'): Function[];
  removeAllListeners(event: 'connection'): unknown;
  on(event: 'connection', fn: (socket: Peer) => void): unknown;
  on(event: 'drop', fn: () => void): unknown;
}

const refused = new WeakMap<object, Refusal>();

/**
 * Whether the server's handler must refuse `socket` (and why): a net socket admission marked, or a
 * TLSSocket wrapped around one.
 */
export function refusalOf(socket: object): Refusal | undefined {
  return refused.get(socket) ?? refused.get((socket as { _parent?: object })._parent ?? socket);
}

interface Waiting { socket: Peer; timer: NodeJS.Timeout }
const ignore = () => undefined;

export class Admission {
  readonly #limits: Required<Omit<AdmissionLimits, 'uncapped'>> & Pick<AdmissionLimits, 'uncapped'>;
  readonly #handle: Handler;
  readonly #listener: string;
  /** admitted connections open, per address key */
  readonly #open = new Map<string, number>();
  /** per address key, the connections waiting for one of its slots, oldest first */
  readonly #queues = new Map<string, Waiting[]>();
  #admitted = 0;
  #answering = 0;
  #waiting = 0;
  #stopping = false;

  constructor(limits: AdmissionLimits, handle: Handler, listener: string) {
    this.#limits = { queuePerAddress: 4 * limits.perAddress, ...limits };
    this.#handle = handle;
    this.#listener = listener;
  }

  get admitted(): number { return this.#admitted; }
  get waiting(): number { return this.#waiting; }

  offer(socket: Peer): void {
    if (socket.destroyed) return; // gone before we saw it
    // a unix socket's peer has no address: the admin socket, capped in total only
    const address = socket.remoteAddress ?? 'local';
    if (this.#admitted >= this.#limits.total) return this.#refuse(socket, 'total');
    const capped = this.#limits.perAddress > 0 && !this.#limits.uncapped?.(address);
    if (!capped) return this.#admit(socket, null);
    const key = addressKey(address);
    const open = this.#open.get(key) ?? 0;
    if (open < this.#limits.perAddress && !this.#queues.has(key)) return this.#admit(socket, key);
    this.#wait(socket, key);
  }

  /** Stopping: waiting connections are admitted now (the server's drain answers them), none wait any more. */
  stop(): void {
    this.#stopping = true;
    for (const [key, queue] of this.#queues) {
      this.#queues.delete(key);
      for (const w of queue) this.#release(w, key);
    }
  }

  #admit(socket: Peer, key: string | null): void {
    this.#admitted++;
    if (key !== null) this.#open.set(key, (this.#open.get(key) ?? 0) + 1);
    socket.once('close', () => {
      this.#admitted--;
      if (key !== null) this.#closed(key);
    });
    this.#handle(socket);
  }

  /** One of `key`'s admitted connections closed: its oldest waiting connection takes the slot. */
  #closed(key: string): void {
    const n = (this.#open.get(key) ?? 1) - 1;
    if (n > 0) this.#open.set(key, n); else this.#open.delete(key);
    const queue = this.#queues.get(key);
    // the oldest still there (one that gave up while it waited is skipped)
    while (queue?.length) {
      const next = queue.shift()!;
      if (queue.length === 0) this.#queues.delete(key);
      if (this.#release(next, key)) return;
    }
  }

  #wait(socket: Peer, key: string): void {
    const queue = this.#queues.get(key) ?? [];
    if (this.#stopping || this.#limits.queueMs <= 0 || queue.length >= this.#limits.queuePerAddress
      || this.#waiting >= this.#limits.total) {
      return this.#refuse(socket, 'address');
    }
    // an unread socket still reports errors (a reset while it waits): nobody else listens yet
    socket.on('error', ignore);
    const w: Waiting = { socket, timer: setTimeout(() => this.#timedOut(w, key), this.#limits.queueMs) };
    w.timer.unref();
    socket.once('close', () => this.#unqueue(w, key));
    queue.push(w);
    this.#queues.set(key, queue);
    this.#waiting++;
  }

  #unqueue(w: Waiting, key: string): boolean {
    const queue = this.#queues.get(key);
    const i = queue?.indexOf(w) ?? -1;
    if (i < 0) return false;
    queue!.splice(i, 1);
    if (queue!.length === 0) this.#queues.delete(key);
    clearTimeout(w.timer);
    this.#waiting--;
    return true;
  }

  #timedOut(w: Waiting, key: string): void {
    if (!this.#unqueue(w, key)) return;
    w.socket.off('error', ignore);
    this.#refuse(w.socket, 'address');
  }

  /** A waiting connection leaves the queue: admitted (over the cap only while stopping); false when gone. */
  #release(w: Waiting, key: string): boolean {
    clearTimeout(w.timer);
    this.#waiting--;
    w.socket.off('error', ignore);
    if (w.socket.destroyed) return false;
    this.#admit(w.socket, key);
    return true;
  }

  #refuse(socket: Peer, why: Refusal): void {
    if (this.#answering >= this.#limits.answering) {
      connectionRefusals.at(this.#listener, why, 'false').v++;
      socket.destroy();
      return;
    }
    connectionRefusals.at(this.#listener, why, 'true').v++;
    this.#answering++;
    socket.once('close', () => { this.#answering--; });
    refused.set(socket, why);
    this.#handle(socket);
  }
}

/**
 * Puts `server`'s connections through an Admission: the handlers it has now (its protocol's: Node's
 * HTTP or TLS listener, or ours) run only for admitted connections and for refusals to be answered.
 * Past `total + answering` connections Node itself drops them; those are counted too.
 */
export function admitConnections(server: Listening, limits: AdmissionLimits, listener: string): Admission {
  const handlers = server.listeners('connection') as Handler[];
  server.removeAllListeners('connection');
  const handle: Handler = (socket) => { for (const h of handlers) h.call(server, socket); };
  const admission = new Admission(limits, handle, listener);
  // admitted (total), waiting (at most total) and being refused (answering): past all three Node drops
  server.maxConnections = 2 * limits.total + limits.answering;
  server.on('connection', (socket) => admission.offer(socket));
  server.on('drop', () => { connectionRefusals.at(listener, 'total', 'false').v++; });
  return admission;
}

/**
 * Three turns of the event loop, for a listener about to close: in the first poll phase the connections
 * waiting in the kernel's accept queue are accepted (closing the listening socket would reset them), in
 * the next ones what they and the open connections already sent is read.
 */
export async function takePending(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((r) => setImmediate(r));
}

/** What waitClosed needs of a socket. */
interface Closing {
  readonly destroyed: boolean;
  once(e: 'close', f: () => void): unknown;
  off(e: 'close', f: () => void): unknown;
}

/**
 * Waits until every socket `open()` lists has closed, or `ms` has passed; returns those still open then
 * (the caller cuts them). `open` is asked again after each close: the list may shrink by other means.
 */
export async function waitClosed<S extends Closing>(open: () => S[], ms: number): Promise<S[]> {
  const deadline = Date.now() + ms;
  for (let left = open(); left.length > 0; left = open()) {
    const wait = deadline - Date.now();
    if (wait <= 0) return left;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        for (const s of left) s.off('close', done);
        resolve();
      };
      const timer = setTimeout(done, wait);
      for (const s of left) s.once('close', done);
    });
  }
  return [];
}
