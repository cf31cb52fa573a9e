// Rate limits per class (DESIGN.md §9), shared by the gateway and the core: fixed windows per key in a
// bounded table. What a key is stays with the caller: a client address before authentication, the
// authenticated machine after it. Pure: no sockets, no clock but the one passed in.
import { ServiceError } from '../errors.ts';
import { rateLimited as refusals } from '../metrics/metrics.ts';
import { addressKey } from './budgets.ts';
import type { RateClass } from './registry.ts';

export interface RateRule { limit: number; windowSec: number }
export type RateRules = Record<RateClass, RateRule>;

export const DEFAULT_RATES: RateRules = {
  public_low: { limit: 120, windowSec: 60 },
  paid_execution: { limit: 600, windowSec: 60 },
};

/** Keys held at once; past it the cheapest windows to lose are dropped (see #evict; never the whole table). */
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
  /** while the table is full of exhausted windows: when the first of them ends (no scan per new key before) */
  #fullUntil = 0;

  constructor(rules: RateRules = DEFAULT_RATES, maxKeys = MAX_KEYS) {
    this.#rules = rules;
    this.#maxKeys = maxKeys;
  }

  get size(): number { return this.#windows.size; }

  /** Counts one request of `klass` for `key`. */
  take(klass: RateClass, key: string, nowMs = Date.now()): RateDecision {
    return rateDecision(klass, this.#rules[klass], this.count(klass, key, nowMs));
  }

  /** take() without the headers: the window's state after counting one request. */
  count(klass: RateClass, key: string, nowMs = Date.now()): WindowState {
    const rule = this.#rules[klass];
    const w = this.#window(klass, key, nowMs);
    w.count++;
    return { allowed: w.count <= rule.limit, remaining: rule.limit - w.count, reset: resetSec(w, rule, nowMs) };
  }

  /**
   * Counts several requests of `klass` for `key` at once, for a gateway worker to admit itself later
   * (gateway/node-windows.ts): `share` of what the window has left (at least 1, at most `max`), or none
   * when nothing is left (then nothing is counted and `state` is the refusal). `start` names the window:
   * a give-back for another one is void; `endMs` is when it ends.
   */
  grant(klass: RateClass, key: string, share: number, max: number, nowMs = Date.now()): WindowGrant {
    const rule = this.#rules[klass];
    let w: Window;
    try {
      w = this.#window(klass, key, nowMs);
    } catch (e) {
      // the table is full of exhausted windows: nothing to grant until the first one ends
      if (!(e instanceof ServiceError)) throw e;
      const reset = Number(e.details?.retry_after_s ?? 1);
      return { granted: 0, start: nowMs, endMs: nowMs + reset * 1000, state: { allowed: false, remaining: 0, reset } };
    }
    const left = Math.max(0, rule.limit - w.count);
    const granted = Math.min(left, Math.max(1, Math.min(max, Math.floor(left * share))));
    w.count += granted;
    const state = { allowed: granted > 0, remaining: rule.limit - w.count, reset: resetSec(w, rule, nowMs) };
    return { granted, start: w.start, endMs: w.start + rule.windowSec * 1000, state };
  }

  /** Uncounts `n` requests granted in window `start` and never admitted (a worker gave them back). */
  giveBack(klass: RateClass, key: string, start: number, n: number): void {
    const w = this.#windows.get(`${klass}|${key}`);
    if (w && w.start === start) w.count = Math.max(0, w.count - n);
  }

  /** The window of `key` now: a new one when there is none or the last has ended. */
  #window(klass: RateClass, key: string, nowMs: number): Window {
    const k = `${klass}|${key}`;
    let w = this.#windows.get(k);
    if (!w || nowMs - w.start >= this.#rules[klass].windowSec * 1000) {
      if (w) this.#windows.delete(k);
      else if (this.#windows.size >= this.#maxKeys) {
        if (nowMs < this.#fullUntil) throw this.#full(nowMs);
        this.#evict(nowMs);
      }
      w = { start: nowMs, count: 0 };
      this.#windows.set(k, w);
    }
    return w;
  }

  /** take(), throwing 429 rate_limited (details carry what the HTTP headers need) when denied. */
  check(klass: RateClass, key: string, what: string, nowMs = Date.now()): RateDecision {
    return assertAllowed(klass, this.take(klass, key, nowMs), what);
  }

  /**
   * Throws 429 when `key` is already over its limit, without counting: for requests that will be
   * counted against another key if they authenticate, and against this one if they do not.
   */
  assertOpen(klass: RateClass, key: string, what: string, nowMs = Date.now()): void {
    const rule = this.#rules[klass];
    const w = this.#windows.get(`${klass}|${key}`);
    if (!w || nowMs - w.start >= rule.windowSec * 1000 || w.count < rule.limit) return;
    const refused = { allowed: false, remaining: 0, reset: resetSec(w, rule, nowMs) };
    assertAllowed(klass, rateDecision(klass, rule, refused), what);
  }

  // What is cheapest to lose goes: expired windows, then the open windows with the fewest requests counted
  // (forgetting one gives its key back at most that many requests), oldest first among equals. Never an
  // exhausted window before its end: a flood of new keys must not let the flooder (or anyone it limits)
  // start afresh (the adversarial run did: 119 of 130 follow-ups allowed after 100k new addresses). When
  // every window left is exhausted, the new key is refused: busy until the first of them ends.
  #evict(nowMs: number): void {
    const open: [string, Window][] = [];
    for (const [k, w] of this.#windows) {
      const rule = this.#rules[k.slice(0, k.indexOf('|')) as RateClass];
      if (nowMs - w.start >= rule.windowSec * 1000) this.#windows.delete(k);
      else if (w.count < rule.limit) open.push([k, w]);
    }
    const target = Math.floor(this.#maxKeys * 0.9);
    if (this.#windows.size <= target) return;
    open.sort((a, b) => a[1].count - b[1].count || a[1].start - b[1].start);
    for (const [k] of open) {
      if (this.#windows.size <= target) return;
      this.#windows.delete(k);
    }
    if (this.#windows.size >= this.#maxKeys) throw this.#full(nowMs);
  }

  /** The table holds only exhausted windows: 503 busy until the first one ends. */
  #full(nowMs: number): ServiceError {
    if (nowMs >= this.#fullUntil) {
      let end = Infinity;
      for (const [k, w] of this.#windows) {
        end = Math.min(end, w.start + this.#rules[k.slice(0, k.indexOf('|')) as RateClass].windowSec * 1000);
      }
      this.#fullUntil = end;
    }
    const end = this.#fullUntil;
    const retry = Math.max(1, Math.ceil((end - nowMs) / 1000));
    return new ServiceError('busy', `the rate-limit table is full of exhausted windows; retry after ${retry} s`,
      { retry_after_s: retry });
  }
}

/** Whole seconds until window `w` ends, at least 1 (the RateLimit `t` and Retry-After). */
function resetSec(w: Window, rule: RateRule, nowMs: number): number {
  return Math.max(1, Math.ceil((w.start + rule.windowSec * 1000 - nowMs) / 1000));
}

/** Requests counted ahead for a worker to admit (RateLimiter.grant). */
export interface WindowGrant { granted: number; start: number; endMs: number; state: WindowState }

/** What a window's count means for one request: `remaining` after it (below 0: over), `reset` in seconds. */
export interface WindowState { allowed: boolean; remaining: number; reset: number }

/** The response headers a rate-limited route sends (rateDecision): a browser on another origin must read them. */
export const RATE_LIMIT_HEADERS = ['RateLimit', 'RateLimit-Policy', 'Retry-After'] as const;

/** The decision, and its headers, for a window in `state` (also rebuilt from a state another process sent). */
export function rateDecision(klass: RateClass, rule: RateRule, state: WindowState): RateDecision {
  const { allowed, reset } = state;
  const headers: Record<string, string> = {
    'RateLimit-Policy': `"${klass}";q=${rule.limit};w=${rule.windowSec}`,
    RateLimit: `"${klass}";r=${Math.max(0, state.remaining)};t=${reset}`,
  };
  if (allowed) return { allowed, headers, retryAfterSec: 0 };
  return { allowed, headers: { ...headers, 'Retry-After': String(reset) }, retryAfterSec: reset };
}

/** `d` when it allows; else throws 429 rate_limited (counted in svc_rate_limited_total). */
export function assertAllowed(klass: RateClass, d: RateDecision, what: string): RateDecision {
  if (!d.allowed) throw rateLimited(klass, d, what);
  return d;
}

function rateLimited(klass: RateClass, d: RateDecision, what: string): ServiceError {
  refusals.at(klass, what === 'per machine' ? 'machine' : 'address').v++; // svc_rate_limited_total
  const message = `rate limit for ${klass} reached (${what}); retry after ${d.retryAfterSec} s`;
  return new ServiceError('rate_limited', message, {
    rate_class: klass,
    retry_after_s: d.retryAfterSec,
    rate_limit: d.headers.RateLimit,
    rate_limit_policy: d.headers['RateLimit-Policy'],
  });
}

/**
 * The rate-limit key of a client address: the one key every per-address limit uses (addressKey:
 * IPv4 as it is, IPv6 by its /64, since one subscriber usually holds a whole /64).
 */
export function clientKey(address: string | undefined): string {
  return address ? addressKey(address) : 'unknown';
}

/** The per-address window's key of a client address (the gateway's and the core's, and the grants'). */
export function addressWindowKey(address: string | undefined): string {
  return `ip:${clientKey(address)}`;
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
