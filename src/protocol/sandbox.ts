// The anonymous sandbox's request and result schemas (SPEC "Sandbox requests", "Limits"): free,
// limited, GET_PULSE only, no real settlement. The registry's SANDBOX_* commands take these as their
// args (so they are validated like every command); OpenAPI and the MCP sandbox tool publish them too.
import { hex, id, machineId, obj, result, type Schema } from './schemas.ts';

export const SANDBOX_LIMITS = { maxBits: 65536, maxOutputBytes: 8192, maxInputBytes: 4096, ttlSeconds: 300 } as const;

export const SANDBOX_SCHEMAS: Record<'quote' | 'accept' | 'execute' | 'verify', Schema> = {
  quote: obj({
    machine_id: { ...machineId, default: 'sandbox_machine' },
    bits: { type: 'integer', minimum: 1, maximum: SANDBOX_LIMITS.maxBits, default: SANDBOX_LIMITS.maxBits },
    max_output: {
      type: 'integer', minimum: 1, maximum: SANDBOX_LIMITS.maxOutputBytes, default: SANDBOX_LIMITS.maxOutputBytes,
    },
    priority: { type: 'string', enum: ['normal', 'standard'], default: 'normal' },
  }),
  accept: obj({ machine_id: machineId }, ['machine_id']),
  execute: obj({ machine_id: machineId, quote_id: id }, ['machine_id', 'quote_id']),
  verify: obj({ machine_id: machineId, receipt_id: id }, ['machine_id', 'receipt_id']),
};

const sandbox = { type: 'boolean', const: true } as const;
const issuedAt = { type: 'string', description: 'RFC 3339 time' } as const;

/** What each sandbox step returns (inside the response envelope). */
export const SANDBOX_RESULTS: Record<keyof typeof SANDBOX_SCHEMAS, Schema> = {
  quote: result({
    sandbox, quote_id: id, service: { type: 'string', const: 'get-pulse' }, machine_id: machineId,
    state: { type: 'string', const: 'issued' }, bits: { type: 'integer' }, max_output: { type: 'integer' },
    quote_units: { type: 'integer', const: 0 }, settlement: { type: 'string' }, expires_at: issuedAt,
    ttl_seconds: { type: 'integer' },
  }, ['sandbox', 'quote_id', 'machine_id', 'state', 'bits', 'quote_units', 'expires_at']),
  accept: result({
    sandbox, quote_id: id, machine_id: machineId, state: { type: 'string', const: 'accepted' }, expires_at: issuedAt,
  }, ['sandbox', 'quote_id', 'machine_id', 'state']),
  execute: result({
    sandbox, quote_id: id, machine_id: machineId, bits: { type: 'integer' },
    output_hex: { ...hex, description: 'bits/8 bytes of sandbox pulse output' }, receipt_id: id,
    units_charged: { type: 'integer', const: 0 }, replayed: { type: 'boolean' },
  }, ['sandbox', 'quote_id', 'machine_id', 'bits', 'output_hex', 'receipt_id', 'units_charged']),
  verify: result({
    sandbox, receipt_id: id, valid: { type: 'boolean' }, receipt: { type: 'object' }, signature: { type: 'string' },
    alg: { type: 'string', const: 'Ed25519' }, public_key: { type: 'string' }, key_id: { type: 'string' },
    issuer: { type: 'string' },
  }, ['sandbox', 'receipt_id', 'valid', 'receipt', 'signature', 'public_key']),
};
