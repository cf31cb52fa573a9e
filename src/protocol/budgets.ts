// Budgets shared by many connections: bytes (unfinished svc/1 lines, HTTP bodies being read) in total
// and per client address, and the key a client address is counted under (addressKey; the connection
// caps in admission.ts use it too). No socket module.

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
 * held the whole default budget, and every other client's POST was 503 busy (measured in an adversarial run).
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
