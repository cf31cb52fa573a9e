// Caps shared by many connections (issue "Trust" 13): a byte budget (unfinished svc/1 lines, HTTP
// bodies being read) and connection counts per client address, and the one place both listener
// kinds (svc/1, HTTP) apply the connection caps. No socket module: servers are typed by shape.

/** What a reader charges for the bytes it holds: a ByteBudget, or one address's share of one. */
export interface Budget {
  readonly limit: number;
  /** Takes `n` bytes; false, taking nothing, when that would pass a limit. */
  tryTake(n: number): boolean;
  release(n: number): void;
}

/** Bytes held across connections: each holder takes before it allocates and releases what it took. */
export class ByteBudget implements Budget {
  readonly limit: number;
  #used = 0;

  constructor(limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`budget limit must be a byte count (${limit})`);
    this.limit = limit;
  }

  get used(): number { return this.#used; }

  /** Takes `n` bytes; false, taking nothing, when that would pass the limit. */
  tryTake(n: number): boolean {
    if (this.#used + n > this.limit) return false;
    this.#used += n;
    return true;
  }

  release(n: number): void {
    this.#used = Math.max(0, this.#used - n);
  }
}

/**
 * What one client address may hold of a budget unless configured: an eighth, and at least two whole
 * lines or bodies (2 MiB), never more than the budget.
 */
export function defaultShare(budget: number): number {
  return Math.min(budget, Math.max(2 << 20, Math.floor(budget / 8)));
}

/** One reader's charge on an AddressedBudget; `refused`: which limit its last refusal met. */
export interface BudgetShare extends Budget {
  readonly refused: 'address' | 'total' | null;
  /** what the share's address may hold at once (the AddressedBudget's perAddress) */
  readonly perAddress: number;
}

/**
 * A byte budget no client address can take alone: an address (addressKey) holds at most `perAddress`
 * bytes of it at once, whatever number of connections it spreads them over. Without it one address
 * under its connection cap (64 HTTP connections × a 1 MiB body, 16 svc/1 connections × a 1 MiB line)
 * held the whole default budget, and every other client's POST was 503 busy (stop 25's adversarial run).
 */
export class AddressedBudget {
  readonly total: ByteBudget;
  readonly perAddress: number;
  readonly #held = new Map<string, number>();

  constructor(limit: number, perAddress: number) {
    if (!Number.isSafeInteger(perAddress) || perAddress < 0) {
      throw new RangeError(`per-address share must be a byte count (${perAddress})`);
    }
    this.total = new ByteBudget(limit);
    this.perAddress = Math.min(perAddress, limit);
  }

  /** Bytes the address holds now. */
  heldBy(address: string): number {
    return this.#held.get(addressKey(address)) ?? 0;
  }

  /** Addresses holding bytes now (the table never outgrows the readers themselves). */
  get addresses(): number { return this.#held.size; }

  /** The share one reader (a request's body, a connection's unfinished line) charges for `address`. */
  share(address: string): BudgetShare {
    return new Share(this, this.#held, addressKey(address));
  }
}

/** A reader's share (a class, not closures: one is made for every HTTP body read). */
class Share implements BudgetShare {
  readonly #of: AddressedBudget;
  readonly #held: Map<string, number>;
  readonly #key: string;
  #mine = 0;
  refused: 'address' | 'total' | null = null;

  constructor(of: AddressedBudget, held: Map<string, number>, key: string) {
    this.#of = of;
    this.#held = held;
    this.#key = key;
  }

  get limit(): number { return this.#of.total.limit; }
  get perAddress(): number { return this.#of.perAddress; }

  tryTake(n: number): boolean {
    const now = this.#held.get(this.#key) ?? 0;
    if (now + n > this.#of.perAddress) {
      this.refused = 'address';
      return false;
    }
    if (!this.#of.total.tryTake(n)) {
      this.refused = 'total';
      return false;
    }
    this.#held.set(this.#key, now + n);
    this.#mine += n;
    this.refused = null;
    return true;
  }

  release(n: number): void {
    const back = Math.min(n, this.#mine); // never more than this reader took
    if (back <= 0) return;
    this.#mine -= back;
    this.#of.total.release(back);
    const left = (this.#held.get(this.#key) ?? 0) - back;
    if (left > 0) this.#held.set(this.#key, left);
    else this.#held.delete(this.#key);
  }
}

/**
 * The key a client address is counted under: IPv4 (also IPv4-mapped IPv6) by address, IPv6 by its
 * /64, the smallest block a site is given (RFC 6177), so one host cannot step around the cap.
 */
export function addressKey(address: string): string {
  const ip = address.toLowerCase().replace(/%.*$/, ''); // drop an IPv6 zone
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  if (mapped) return mapped[1]!;
  if (!ip.includes(':')) return ip;
  const [head = '', tail] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros = Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0');
  const groups = tail === undefined ? left : [...left, ...zeros, ...right];
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/** Open connections per client address (see addressKey), at most `perAddress` each. */
export class AddressCounter {
  readonly perAddress: number;
  readonly #open = new Map<string, number>();

  constructor(perAddress: number) {
    this.perAddress = perAddress;
  }

  /** Counts one more connection from `address`; false, counting nothing, when it is at its cap. */
  admit(address: string): boolean {
    const key = addressKey(address);
    const n = this.#open.get(key) ?? 0;
    if (n >= this.perAddress) return false;
    this.#open.set(key, n + 1);
    return true;
  }

  /** Call once per admitted connection when it closes. */
  release(address: string): void {
    const key = addressKey(address);
    const n = (this.#open.get(key) ?? 0) - 1;
    if (n > 0) this.#open.set(key, n); else this.#open.delete(key);
  }

  /** Addresses with open connections (the table never outgrows the connections themselves). */
  get size(): number { return this.#open.size; }
}

/** What capConnections needs of a server (net.Server, tls.Server, http.Server) and its sockets. */
interface Peer {
  readonly remoteAddress?: string | undefined;
  destroy(): unknown;
  once(event: 'close', fn: () => void): unknown;
}
interface Listening { maxConnections: number; on(event: 'connection', fn: (socket: Peer) => void): unknown }

/**
 * Caps a server's open connections in total (Node closes those over it at once) and, with a
 * counter, per client address: a raw socket over its address's cap is destroyed on arrival,
 * before any TLS or HTTP work is done for it. `uncapped` peers (our own proxies) count only in the total.
 */
export function capConnections(
  server: Listening, total: number, perAddress: AddressCounter | null, uncapped?: (address: string) => boolean,
): void {
  server.maxConnections = total;
  if (!perAddress) return;
  server.on('connection', (socket) => {
    const address = socket.remoteAddress;
    if (address !== undefined && uncapped?.(address)) return;
    if (address === undefined || !perAddress.admit(address)) {
      socket.destroy(); // over the cap, or already gone
      return;
    }
    socket.once('close', () => perAddress.release(address));
  });
}
