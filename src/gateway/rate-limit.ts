// Rate limits per class (DESIGN.md §9): public_low keyed by client address, paid_execution by
// machine_id. Fixed windows per key, bounded key table; over the limit is 429 rate_limited with
// Retry-After and the IETF RateLimit / RateLimit-Policy headers (draft-ietf-httpapi-ratelimit-headers).
import type { RateClass } from '../protocol/registry.ts';

export interface RateRule { limit: number; windowSec: number }
export type RateRules = Record<RateClass, RateRule>;

export const DEFAULT_RATES: RateRules = { public_low: { limit: 120, windowSec: 60 }, paid_execution: { limit: 600, windowSec: 60 } };

const MAX_KEYS = 100_000;

export class RateLimiter {
  readonly #rules: RateRules;
  readonly #windows = new Map<string, { start: number; count: number }>();

  constructor(rules: RateRules = DEFAULT_RATES) {
    this.#rules = rules;
  }

  /** Counts one request; returns the headers to send and whether it is allowed. */
  take(klass: RateClass, key: string, nowMs = Date.now()): { allowed: boolean; headers: Record<string, string> } {
    const rule = this.#rules[klass];
    const k = `${klass}|${key}`;
    let w = this.#windows.get(k);
    if (!w || nowMs - w.start >= rule.windowSec * 1000) {
      if (!w && this.#windows.size >= MAX_KEYS) this.#evict(nowMs);
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
    if (w.count > rule.limit) return { allowed: false, headers: { ...headers, 'Retry-After': String(reset) } };
    return { allowed: true, headers };
  }

  #evict(nowMs: number): void {
    for (const [k, w] of this.#windows) {
      const klass = k.slice(0, k.indexOf('|')) as RateClass;
      if (nowMs - w.start >= this.#rules[klass].windowSec * 1000) this.#windows.delete(k);
    }
    if (this.#windows.size >= MAX_KEYS) this.#windows.clear(); // under attack: start over rather than grow
  }
}

export function parseRate(spec: string | undefined, def: RateRule, name: string): RateRule {
  if (!spec) return def;
  const m = /^(\d+)\/(\d+)$/.exec(spec);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new Error(`${name} must look like LIMIT/SECONDS, e.g. 120/60 (got ${spec})`);
  return { limit: Number(m[1]), windowSec: Number(m[2]) };
}
