// JSON Schemas (2020-12) shared by the command registry: field rules straight from the contract
// (SPEC "Resources and their fields", "Limits"). The gateway and svc/1 compile the same objects,
// so a request is valid over HTTP exactly when it is valid over svc/1. The per-service quote
// bodies and execution args are derived here from the service data in services.ts.
import { executionInputs, serviceByName, serviceOf, type ServiceName } from './services.ts';

export type Schema = Record<string, unknown>;

export const LIMITS = {
  machineIdMax: 128,
  idempotencyKeyMax: 128,
  /** hex input fields: 512 KiB of bytes, so a request with one fits the 1 MiB svc/1 line */
  hexMaxChars: 2 * 512 * 1024,
  quoteTtlMinMs: 1000,
  quoteTtlDefaultMs: 60_000,
  quoteTtlMaxMs: 86_400_000,
  bitsDefault: 65536,
  maxOutputDefault: 8192,
  invoiceUnitsMax: 1_000_000,
  /** LIST_INVOICES: records one page reads at most, whatever its filter matches */
  listInvoicesScan: 1000,
} as const;

/**
 * Well-formed UTF-16 only. Ajv compiles patterns with the `u` flag, where a surrogate pair is one
 * code point outside this class and an unpaired surrogate is its own code point inside it. An
 * ill-formed identifier would reach UTF-8 as U+FFFD and alias another ("x\uD800" = "x\uFFFD").
 */
export const WELL_FORMED = '^[^\\uD800-\\uDFFF]*$';
const text = (minLength: number, maxLength: number, description?: string): Schema =>
  ({ type: 'string', minLength, maxLength, pattern: WELL_FORMED, ...(description ? { description } : {}) });

export const machineId: Schema = text(1, LIMITS.machineIdMax, 'caller machine identifier');
export const idempotencyKey: Schema = text(1, LIMITS.idempotencyKeyMax);
export const hex: Schema = { type: 'string', pattern: '^([0-9a-fA-F]{2})*$', maxLength: LIMITS.hexMaxChars };
export const id: Schema = text(1, 128);
/** A payment reference (transaction id) recorded on a settled invoice. */
/**
 * A payment reference: printable text, not blank, no space at either end; no control characters (C0,
 * DEL, C1), line or paragraph separators or bidi controls, which would break or disguise a line of
 * list-invoices or an audit.
 */
const HIDDEN = '\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069\\uD800-\\uDFFF';
export const reference: Schema = {
  type: 'string', minLength: 1, maxLength: 256, pattern: `^(?=\\S)(?=[\\s\\S]*\\S$)[^${HIDDEN}]+$`,
  description: 'payment reference (transaction id): printable, no control, line or bidi characters',
};
/** An operator's note on a record (a dismissal's why): printable as a reference is, up to 500 characters. */
export const note: Schema = {
  type: 'string', minLength: 1, maxLength: 500, pattern: reference.pattern,
  description: 'a note for the record: printable, no control, line or bidi characters',
};
/** The four payment rails, by their keys in GET /api/v1/payment. */
export const RAIL_IDS = ['USDT_TRON', 'USDC_BASE', 'USDC_SOLANA', 'USDT_SOLANA'] as const;
/** Why a chain deposit waits in the unmatched queue (docs/settlement.md "Matching and crediting"). */
export const UNMATCHED_REASONS = [
  'invoice_expired', 'invoice_already_settled', 'duplicate_payment', 'reference_already_credited',
  'before_invoice', 'amount_mismatch', 'unknown_amount', 'no_open_invoice',
] as const;
/** A chain deposit's states: credited on sight, queued, claimed by the operator, dismissed by the operator. */
export const DEPOSIT_STATES = ['credited', 'unmatched', 'claimed', 'dismissed'] as const;
/** The events webhooks report (docs/settlement.md "Webhooks"). */
export const WEBHOOK_EVENTS = ['invoice.settled', 'invoice.expired', 'deposit.unmatched', 'deposit.reorged'] as const;
/** A webhook delivery: being tried, answered 2xx, or given up after a day of tries. */
export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;
export const units: Schema = {
  type: 'string',
  pattern: '^[0-9]{1,30}$',
  description: 'integer internal units as a decimal string (1 svcC = 100000000)',
};
export const priority: Schema = { type: 'string', enum: ['low', 'normal', 'high'], default: 'normal' };

export const obj = (properties: Record<string, Schema>, required: string[] = [], extra: Schema = {}): Schema =>
  ({ type: 'object', properties, required, additionalProperties: false, ...extra });
/** Result objects may grow: additional properties allowed (SPEC "Response envelope"). */
export const result = (properties: Record<string, Schema>, required: string[] = []): Schema =>
  ({ type: 'object', properties, required, additionalProperties: true });

const bits: Schema = { type: 'integer', minimum: 1, maximum: 0xffff_ffff };

/** The fields every quote body has (SPEC "Quote request"); bytes and the inputs are per service. */
const quoteCommon = (service: ServiceName): Record<string, Schema> => {
  const svc = serviceByName(service)!;
  const maxBits = 'maxBits' in svc ? { maximum: svc.maxBits } : {};
  return {
    machine_id: machineId,
    idempotency_key: idempotencyKey,
    bits: { ...bits, ...maxBits, default: LIMITS.bitsDefault },
    max_output: { type: 'integer', minimum: 0, maximum: 1 << 24, default: LIMITS.maxOutputDefault },
    priority,
    quote_ttl_ms: {
      type: 'integer', minimum: LIMITS.quoteTtlMinMs, maximum: LIMITS.quoteTtlMaxMs, default: LIMITS.quoteTtlDefaultMs,
    },
  };
};

const requires = (field: string): Schema => ({ type: 'object', properties: { [field]: true }, required: [field] });

/**
 * The quote request body for one service (without `service`). `bytes` follows the service's
 * input: GET_PULSE reads none (only 0 is accepted, so nothing is priced that is never read); a
 * fixed-size input (TIMESTAMP_PROOF's digest) defaults to its size; MAKE_BCT and VERIFY_BCT take
 * their input (bound by digest) or `bytes` (bound as the exact size); every other service needs
 * `bytes`, the most its execution may send.
 */
export function quoteBodySchema(service: ServiceName): Schema {
  const svc = serviceByName(service)!;
  const props = quoteCommon(service);
  const required = ['machine_id'];
  const extra: Schema = {};
  const size = svc.bytes;
  if (size === null) {
    props.bytes = { type: 'integer', minimum: 0, maximum: 0, description: `${svc.command} reads no input: 0 if given` };
  } else if (size.min === size.max) {
    props.bytes = {
      type: 'integer', minimum: size.min, maximum: size.max, default: size.min,
      description: `input size: always ${size.min} bytes (the default)`,
    };
  } else if (svc.quoteInput) {
    props.bytes = {
      type: 'integer', minimum: size.min, maximum: size.max,
      description: `input size (${size.min}..${size.max}) when ${svc.quoteInput} is not given; `
        + 'the execution must send exactly this many bytes',
    };
    const about = (svc.about as Record<string, string>)[svc.quoteInput];
    props[svc.quoteInput] = { ...hex, description: `${about} (at most ${size.max} bytes), bound by its SHA-256` };
    extra.anyOf = [requires('bytes'), requires(svc.quoteInput)];
  } else {
    props.bytes = {
      type: 'integer', minimum: size.min, maximum: size.max,
      description: `required: the most input bytes the execution may send (${size.min}..${size.max})`,
    };
    required.push('bytes');
  }
  return obj(props, required, extra);
}

/** An execution's args: the ExecutionRequest fields, with only the inputs this command takes. */
export function executionArgsSchema(command: string): Schema {
  const svc = serviceOf(command)!;
  const props: Record<string, Schema> = { machine_id: machineId, quote_id: id, bits, idempotency_key: idempotencyKey };
  const required = ['machine_id', 'quote_id'];
  for (const { field, required: isRequired, about } of executionInputs(svc)) {
    props[field] = { ...hex, description: `${about}, as hex${isRequired ? '' : ' (optional)'}` };
    if (isRequired) required.push(field);
  }
  return obj(props, required);
}

export const priceSchema: Schema = result({
  service: { type: 'string' }, bits: { type: 'integer' }, input_bytes: { type: 'integer' },
  estimated_ms: { type: 'integer' },
  priority_class: { type: 'string', enum: ['standard', 'priority', 'critical'] },
  quote_units: { type: 'integer' }, usd_estimate: { type: 'string' },
}, ['service', 'bits', 'input_bytes', 'estimated_ms', 'priority_class', 'quote_units', 'usd_estimate']);

export const quoteResult: Schema = result({
  quote_id: id, service: { type: 'string' }, machine_id: machineId,
  state: { type: 'string', enum: ['issued', 'accepted', 'executed', 'expired'] },
  price: priceSchema, quote_units: { type: 'integer' }, price_version: { type: 'string' },
  quote_terms_version: { type: 'integer' },
  expires_at: { type: 'string' },
}, [
  'quote_id', 'service', 'machine_id', 'state', 'quote_units', 'price', 'price_version', 'quote_terms_version',
  'expires_at',
]);

export const executionResult: Schema = result({
  quote_id: id, receipt_id: id, result_tag: { type: 'string' }, service: { type: 'string' },
  units_charged: { type: 'integer' },
}, ['quote_id', 'receipt_id', 'result_tag', 'service', 'units_charged']);

export const balanceResult: Schema = result({
  machine_id: machineId, available_units: units, reserved_units: units, unit_scale: { type: 'integer' },
  available_svcC: { type: 'string' },
}, ['machine_id', 'available_units', 'reserved_units', 'unit_scale']);

/** An invoice's states (INVOICE_STATUS, the invoice record). */
export const INVOICE_STATES = ['pending', 'settled', 'expired'] as const;
export type InvoiceState = typeof INVOICE_STATES[number];

export const invoiceResult: Schema = result({
  invoice_id: id, machine_id: machineId, state: { type: 'string', enum: [...INVOICE_STATES] },
  units: { type: 'integer' },
  rail: { type: 'string' }, network: { type: 'string' }, asset: { type: 'string' }, pay_to: { type: 'string' },
  amount_due: { type: 'string', description: 'token base units (6 decimals)' }, amount_due_decimal: { type: 'string' },
  expires_at: { type: 'string' },
  machine_token: { type: 'string', description: 'returned once, when this invoice claimed the machine_id' },
  credit_units: { ...units, description: 'internal units credited on settlement: amount_due × 100' },
  settlement_reference: { type: 'string' },
  settled_late: { type: 'boolean', description: 'credited by the operator after the invoice expired' },
  reference: {
    type: 'string', description: 'Solana rails: the Solana Pay reference (a public key) the transfer must name',
  },
  payment_uri: {
    type: 'string', description: 'Solana rails: a Solana Pay transfer request (solana:…) a wallet opens to pay',
  },
  amount_unique: {
    type: 'boolean', description: 'false: the amount is not unique on the rail; only the reference matches a payment',
  },
}, ['invoice_id', 'machine_id', 'state', 'units', 'rail', 'pay_to', 'amount_due', 'expires_at']);

export const receiptResult: Schema = result({
  receipt_id: id, receipt: { type: 'object' }, signature: { type: 'string' }, public_key: { type: 'string' },
  key_id: { type: 'string' }, valid: { type: 'boolean' },
}, ['receipt_id', 'receipt', 'signature', 'public_key', 'key_id']);
