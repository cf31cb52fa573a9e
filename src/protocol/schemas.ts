// JSON Schemas (2020-12) shared by the command registry: field rules straight from the contract
// (SPEC "Resources and their fields", "Limits"). The gateway and svc/1 compile the same objects,
// so a request is valid over HTTP exactly when it is valid over svc/1.

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
} as const;

export const machineId: Schema = { type: 'string', minLength: 1, maxLength: LIMITS.machineIdMax, description: 'caller machine identifier' };
export const idempotencyKey: Schema = { type: 'string', minLength: 1, maxLength: LIMITS.idempotencyKeyMax };
export const hex: Schema = { type: 'string', pattern: '^([0-9a-fA-F]{2})*$', maxLength: LIMITS.hexMaxChars };
export const id: Schema = { type: 'string', minLength: 1, maxLength: 128 };
export const units: Schema = { type: 'string', pattern: '^[0-9]{1,30}$', description: 'integer internal units as a decimal string (1 svcC = 100000000)' };
export const priority: Schema = { type: 'string', enum: ['low', 'normal', 'high'], default: 'normal' };

export const obj = (properties: Record<string, Schema>, required: string[] = [], extra: Schema = {}): Schema =>
  ({ type: 'object', properties, required, additionalProperties: false, ...extra });
/** Result objects may grow: additional properties allowed (SPEC "Response envelope"). */
export const result = (properties: Record<string, Schema>, required: string[] = []): Schema =>
  ({ type: 'object', properties, required, additionalProperties: true });

export const quoteFields: Record<string, Schema> = {
  machine_id: machineId,
  idempotency_key: idempotencyKey,
  bits: { type: 'integer', minimum: 1, maximum: 0xffff_ffff, default: LIMITS.bitsDefault },
  bytes: { type: 'integer', minimum: 0, maximum: 1 << 30 },
  max_output: { type: 'integer', minimum: 0, maximum: 1 << 24, default: LIMITS.maxOutputDefault },
  priority,
  quote_ttl_ms: { type: 'integer', minimum: LIMITS.quoteTtlMinMs, maximum: LIMITS.quoteTtlMaxMs, default: LIMITS.quoteTtlDefaultMs },
  plain_hex: hex,
  packet_hex: hex,
};

export const priceSchema: Schema = result({
  service: { type: 'string' }, bits: { type: 'integer' }, input_bytes: { type: 'integer' }, estimated_ms: { type: 'integer' },
  priority_class: { type: 'string', enum: ['standard', 'priority', 'critical'] }, quote_units: { type: 'integer' }, usd_estimate: { type: 'string' },
}, ['service', 'bits', 'input_bytes', 'estimated_ms', 'priority_class', 'quote_units', 'usd_estimate']);

export const quoteResult: Schema = result({
  quote_id: id, service: { type: 'string' }, machine_id: machineId, state: { type: 'string', enum: ['issued', 'accepted', 'executed', 'expired'] },
  price: priceSchema, quote_units: { type: 'integer' }, price_version: { type: 'string' }, quote_terms_version: { type: 'integer' },
  expires_at: { type: 'string' },
}, ['quote_id', 'service', 'machine_id', 'state', 'quote_units', 'price', 'price_version', 'quote_terms_version', 'expires_at']);

export const executionResult: Schema = result({
  quote_id: id, receipt_id: id, result_tag: { type: 'string' }, service: { type: 'string' }, units_charged: { type: 'integer' },
}, ['quote_id', 'receipt_id', 'result_tag', 'service', 'units_charged']);

export const balanceResult: Schema = result({
  machine_id: machineId, available_units: units, reserved_units: units, unit_scale: { type: 'integer' }, available_svcC: { type: 'string' },
}, ['machine_id', 'available_units', 'reserved_units', 'unit_scale']);

export const invoiceResult: Schema = result({
  invoice_id: id, machine_id: machineId, state: { type: 'string', enum: ['pending', 'settled', 'expired'] }, units: { type: 'integer' },
  rail: { type: 'string' }, network: { type: 'string' }, asset: { type: 'string' }, pay_to: { type: 'string' },
  amount_due: { type: 'string', description: 'token base units (6 decimals)' }, amount_due_decimal: { type: 'string' },
  expires_at: { type: 'string' }, machine_token: { type: 'string', description: 'returned once, when this invoice claimed the machine_id' },
}, ['invoice_id', 'machine_id', 'state', 'units', 'rail', 'pay_to', 'amount_due', 'expires_at']);

export const receiptResult: Schema = result({
  receipt_id: id, receipt: { type: 'object' }, signature: { type: 'string' }, public_key: { type: 'string' }, key_id: { type: 'string' }, valid: { type: 'boolean' },
}, ['receipt_id', 'receipt', 'signature', 'public_key', 'key_id']);
