// Rate limits per class (DESIGN.md §9), shared by the gateway and the core: fixed windows per key in a
// bounded table. What a key is stays with the caller: a client address before authentication, the
// authenticated machine after it. Pure: no sockets, no clock but the one passed in.
import { ServiceError } from '../errors.ts';
import type { RateClass } from './registry.ts';

export interface RateRule { limit: number; windowSec: number }
export type RateRules = Record<RateClass, RateRule>;

export const DEFAULT_RATES: RateRules = {
  public_low: { limit: 120, windowSec: 60 },
  paid_execution: { limit: 600, windowSec: 60 },
};

/** Keys held at once; past it the oldest windows are dropped (never the whole table). */
const MAX_KEYS = 100_000;

export interface RateDecision {
  allowed: boolean;
  /** IETF RateLimit / RateLimit-Policy headers (draft-ietf-httpapi-ratelimit-headers), Retry-After when denied */
  headers: Record<string, string>;
  retryAfterSec: number;
}

interface Window { start: number; count: number }

export class RateLimiter {
  readonly #rules: RateRules;
  readonly #maxKeys: number;
  // insertion order is window start order: a renewed window is deleted and set again
  readonly #windows = new Map<string, Window>();

  constructor(rules: RateRules = DEFAULT_RATES, maxKeys = MAX_KEYS) {
    this.#rules = rules;
    this.#maxKeys = maxKeys;
  }

  get size(): number { return this.#windows.size; }

  /** Counts one request of `klass` for `key`. */
  take(klass: RateClass, key: string, nowMs = Date.now()): RateDecision {
    const rule = this.#rules[klass];
    const k = `${klass}|${key}`;
    let w = this.#windows.get(k);
    if (!w || nowMs - w.start >= rule.windowSec * 1000) {
      if (w) this.#windows.delete(k);
      else if (this.#windows.size >= this.#maxKeys) this.#evict(nowMs);
      w = { start: nowMs, count: 0 };
      this.#windows.set(k, w);
    }
    w.count++;
    const reset = Math.max(1, Math.ceil((w.start + rule.windowSec * 1000 - nowMs) / 1000));
    const remaining = Math.max(0, rule.limit - w.count);
    const headers: Record<string, string> = {
      'RateLimit-Policy': `"${klass}";q=${rule.limit};w=${rule.windowSec}`,
      RateLimit: `"${klass}";r=${remaining};t=${reset}`,
    };
    if (w.count <= rule.limit) return { allowed: true, headers, retryAfterSec: 0 };
    return { allowed: false, headers: { ...headers, 'Retry-After': String(reset) }, retryAfterSec: reset };
  }

  /** take(), throwing 429 rate_limited (details carry what the HTTP headers need) when denied. */
  check(klass: RateClass, key: string, what: string, nowMs = Date.now()): RateDecision {
    const d = this.take(klass, key, nowMs);
    if (!d.allowed) throw rateLimited(klass, d, what);
    return d;
  }

  /**
   * Throws 429 when `key` is already over its limit, without counting: for requests that will be
   * counted against another key if they authenticate, and against this one if they do not.
   */
  assertOpen(klass: RateClass, key: string, what: string, nowMs = Date.now()): void {
    const rule = this.#rules[klass];
    const w = this.#windows.get(`${klass}|${key}`);
    if (!w || nowMs - w.start >= rule.windowSec * 1000 || w.count < rule.limit) return;
    const reset = Math.max(1, Math.ceil((w.start + rule.windowSec * 1000 - nowMs) / 1000));
    const headers = {
      'RateLimit-Policy': `"${klass}";q=${rule.limit};w=${rule.windowSec}`,
      RateLimit: `"${klass}";r=0;t=${reset}`,
      'Retry-After': String(reset),
    };
    throw rateLimited(klass, { allowed: false, headers, retryAfterSec: reset }, what);
  }

  // Expired windows go first; if the table is still full, the oldest windows go (they are the
  // nearest to their end anyway). Never the whole table: a flood of new keys must not reset the
  // count of every other caller (the adversarial run did exactly that at 100k keys).
  #evict(nowMs: number): void {
    for (const [k, w] of this.#windows) {
      const klass = k.slice(0, k.indexOf('|')) as RateClass;
      if (nowMs - w.start >= this.#rules[klass].windowSec * 1000) this.#windows.delete(k);
    }
    const target = Math.floor(this.#maxKeys * 0.9);
    for (const k of this.#windows.keys()) {
      if (this.#windows.size <= target) break;
      this.#windows.delete(k);
    }
  }
}

function rateLimited(klass: RateClass, d: RateDecision, what: string): ServiceError {
  const message = `rate limit for ${klass} reached (${what}); retry after ${d.retryAfterSec} s`;
  return new ServiceError('rate_limited', message, {
    rate_class: klass,
    retry_after_s: d.retryAfterSec,
    rate_limit: d.headers.RateLimit,
    rate_limit_policy: d.headers['RateLimit-Policy'],
  });
}

/**
 * The rate-limit key of a client address: IPv4 (also IPv4-mapped IPv6) as it is, IPv6 by its /64
 * (one subscriber usually holds a whole /64, so a per-address key would be free to rotate).
 */
export function clientKey(address: string | undefined): string {
  if (!address) return 'unknown';
  // addresses come from sockets, so they are well formed: a colon means IPv6
  const mapped = address.toLowerCase().startsWith('::ffff:') && address.slice(7).includes('.');
  const a = mapped ? address.slice(7) : address;
  if (!a.includes(':')) return a;
  return `${expandIPv6(a).slice(0, 4).join(':')}::/64`;
}

function expandIPv6(a: string): string[] {
  const [head, tail] = a.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.map((g) => (g.includes('.') ? g : g.toLowerCase().replace(/^0+(?=.)/, '')));
}

/** Parses LIMIT/SECONDS (e.g. 120/60); `name` is the setting it came from, for the message. */
export function parseRate(spec: string | undefined, def: RateRule, name: string): RateRule {
  if (!spec) return def;
  const m = /^(\d+)\/(\d+)$/.exec(spec);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) {
    throw new Error(`${name} must look like LIMIT/SECONDS, e.g. 120/60 (got ${spec})`);
  }
  return { limit: Number(m[1]), windowSec: Number(m[2]) };
}
