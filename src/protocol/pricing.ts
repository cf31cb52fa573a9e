// The price book competitive_v6 (SPEC "Pricing model", DESIGN.md §6). Integer arithmetic only:
//   bits_units  = ceil(coef_bits[service] * sqrt(bits) / 256)      (exact, via BigInt squares)
//   data_units  = units_per_kib * ceil(bytes / 1024)
//   time_units  = units_per_ms * estimated_ms
//   quote_units = (bits_units + data_units + time_units) * multiplier
// The DESIGN formula takes one ceil over the whole sum times the multiplier; since multipliers are
// integers, ceiling the only irrational term first gives the same result for every input except
// that it can never be off by a floating-point rounding (documented in docs/pricing.md).
import { SERVICE_NAMES, type ServiceName } from './services.ts';
import { VERSIONS } from './versions.ts';

/** Internal units per svcC (SPEC "Pricing model": unit_scale). */
export const UNIT_SCALE = 100_000_000n;

export const PRICE_BOOK = 'competitive_v6';
export const PRICE_VERSION = VERSIONS.priceVersion;
export const QUOTE_TERMS_VERSION = VERSIONS.quoteTermsVersion;
export const REFERENCE_VALUE_USD_PER_SVCC = '1.00';
export const UNIT_POLICY = 'internal_quote_reference_not_parity_not_backed_not_redeemable_not_yield';

export type PriorityClass = 'standard' | 'priority' | 'critical';
export const MULTIPLIERS: Record<PriorityClass, bigint> = { standard: 1n, priority: 2n, critical: 4n };

export interface ServiceCost {
  /** units per sqrt(bits)/256 */
  coef_bits: number;
  /** cost model for estimated_ms: base + per KiB of input + per 2^20 bits (BVM: per 10^6 fuel) */
  base_ms: number;
  ms_per_kib: number;
  ms_per_mbit: number;
}

export const UNITS_PER_KIB = 2_000;
export const UNITS_PER_MS = 10_000;

/** Calibrated against bench/kernels.ts on the reference machine (see docs/pricing.md). */
export const COSTS: Record<ServiceName, ServiceCost> = {
  'get-pulse': { coef_bits: 50_000, base_ms: 1, ms_per_kib: 0, ms_per_mbit: 1 },
  'make-bct': { coef_bits: 20_000, base_ms: 1, ms_per_kib: 0.002, ms_per_mbit: 0 },
  'verify-bct': { coef_bits: 20_000, base_ms: 1, ms_per_kib: 0.002, ms_per_mbit: 0 },
  'verify-result': { coef_bits: 20_000, base_ms: 1, ms_per_kib: 0.003, ms_per_mbit: 0 },
  'attest-event': { coef_bits: 40_000, base_ms: 1, ms_per_kib: 0.003, ms_per_mbit: 0 },
  'submit-id': { coef_bits: 40_000, base_ms: 1, ms_per_kib: 0.003, ms_per_mbit: 0 },
  'bvm-exec': { coef_bits: 30_000, base_ms: 1, ms_per_kib: 0.003, ms_per_mbit: 2.5 },
  'sealed-message': { coef_bits: 30_000, base_ms: 1, ms_per_kib: 0.003, ms_per_mbit: 0 },
  'timestamp-proof': { coef_bits: 30_000, base_ms: 1, ms_per_kib: 0.003, ms_per_mbit: 0 },
  'machine-event-log': { coef_bits: 30_000, base_ms: 1, ms_per_kib: 0.003, ms_per_mbit: 0 },
};

export interface Price {
  service: ServiceName;
  bits: number;
  input_bytes: number;
  estimated_ms: number;
  priority_class: PriorityClass;
  quote_units: number;
  usd_estimate: string;
}

/** Smallest integer u with u >= coef * sqrt(bits) / 256, i.e. (256u)^2 >= coef^2 * bits. */
function bitsUnits(coef: number, bits: number): bigint {
  const target = BigInt(coef) * BigInt(coef) * BigInt(bits);
  let u = BigInt(Math.ceil((coef * Math.sqrt(bits)) / 256));
  while (u > 0n && (256n * (u - 1n)) ** 2n >= target) u--;
  while ((256n * u) ** 2n < target) u++;
  return u;
}

export function priorityClass(priority: 'low' | 'normal' | 'high' | 'standard' | undefined): PriorityClass {
  return priority === 'high' ? 'priority' : 'standard';
}

export function estimateMs(service: ServiceName, bits: number, bytes: number): number {
  const c = COSTS[service];
  return Math.max(1, Math.ceil(
    c.base_ms + c.ms_per_kib * Math.ceil(bytes / 1024) + (c.ms_per_mbit * bits) / (1 << 20),
  ));
}

export function usdString(units: bigint): string {
  // 1 svcC = 1.00 USD reference; units / 1e8 with all 8 decimals
  const whole = units / UNIT_SCALE, frac = units % UNIT_SCALE;
  return `${whole}.${frac.toString().padStart(8, '0')}`;
}

export function price(service: ServiceName, bits: number, bytes: number, klass: PriorityClass): Price {
  const c = COSTS[service];
  const estimated_ms = estimateMs(service, bits, bytes);
  const units = (
    bitsUnits(c.coef_bits, bits)
    + BigInt(UNITS_PER_KIB) * BigInt(Math.ceil(bytes / 1024))
    + BigInt(UNITS_PER_MS) * BigInt(estimated_ms)
  ) * MULTIPLIERS[klass];
  if (units > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError('price out of range');
  return {
    service,
    bits,
    input_bytes: bytes,
    estimated_ms,
    priority_class: klass,
    quote_units: Number(units),
    usd_estimate: usdString(units),
  };
}

/** The example price each service publishes: 65,536 bits, 1 KiB of input (none for GET_PULSE), standard. */
export function examplePrice(service: ServiceName): Price {
  return price(service, 65536, service === 'get-pulse' ? 0 : 1024, 'standard');
}

/** The public pricebook as key=value lines (SPEC: "Pricebook text is key=value lines"). */
export function pricebookText(): string {
  const lines = [
    `price_book=${PRICE_BOOK}`, `price_version=${PRICE_VERSION}`, `quote_terms_version=${QUOTE_TERMS_VERSION}`,
    `unit=svcC`, `unit_scale=${UNIT_SCALE}`, `reference_value_usd_per_svcC=${REFERENCE_VALUE_USD_PER_SVCC}`,
    `unit_policy=${UNIT_POLICY}`,
    `units_per_kib=${UNITS_PER_KIB}`, `units_per_ms=${UNITS_PER_MS}`,
    ...Object.entries(MULTIPLIERS).map(([k, v]) => `multiplier.${k}=${v}`),
    'formula=ceil(coef_bits*sqrt(bits)/256)+units_per_kib*ceil(bytes/1024)+units_per_ms*estimated_ms, times multiplier',
  ];
  for (const s of SERVICE_NAMES) {
    const c = COSTS[s];
    lines.push(
      `service.${s}.coef_bits=${c.coef_bits}`,
      `service.${s}.base_ms=${c.base_ms}`,
      `service.${s}.ms_per_kib=${c.ms_per_kib}`,
      `service.${s}.ms_per_mbit=${c.ms_per_mbit}`,
    );
    const ex = examplePrice(s);
    lines.push(`example.${s}=bits:${ex.bits},input_bytes:${ex.input_bytes},estimated_ms:${ex.estimated_ms}`
      + `,priority_class:${ex.priority_class},quote_units:${ex.quote_units},usd_estimate:${ex.usd_estimate}`);
  }
  return lines.join('\n') + '\n';
}
