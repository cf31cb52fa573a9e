// The anonymous sandbox's request schemas (SPEC "Sandbox requests", "Limits"): free, limited,
// GET_PULSE only, no real settlement. Validated with the same Ajv setup as the registry.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { ServiceError } from '../errors.ts';
import { id, machineId, obj, type Schema } from './schemas.ts';

export const SANDBOX_LIMITS = { maxBits: 65536, maxOutputBytes: 8192, maxInputBytes: 4096, ttlSeconds: 300 } as const;

export const SANDBOX_SCHEMAS: Record<'quote' | 'accept' | 'execute' | 'verify', Schema> = {
  quote: obj({
    machine_id: { ...machineId, default: 'sandbox_machine' },
    bits: { type: 'integer', minimum: 1, maximum: SANDBOX_LIMITS.maxBits, default: SANDBOX_LIMITS.maxBits },
    max_output: { type: 'integer', minimum: 1, maximum: SANDBOX_LIMITS.maxOutputBytes, default: SANDBOX_LIMITS.maxOutputBytes },
    priority: { type: 'string', enum: ['normal', 'standard'], default: 'normal' },
  }),
  accept: obj({ machine_id: machineId }, ['machine_id']),
  execute: obj({ machine_id: machineId, quote_id: id }, ['machine_id', 'quote_id']),
  verify: obj({ machine_id: machineId, receipt_id: id }, ['machine_id', 'receipt_id']),
};

const ajv = new Ajv2020({ strict: true, useDefaults: true });
const compiled = Object.fromEntries(Object.entries(SANDBOX_SCHEMAS).map(([k, v]) => [k, ajv.compile(v)])) as Record<keyof typeof SANDBOX_SCHEMAS, ValidateFunction>;

export function validateSandbox(kind: keyof typeof SANDBOX_SCHEMAS, body: Record<string, unknown>): void {
  const v = compiled[kind];
  if (!v(body)) {
    const e = v.errors![0]!;
    const field = e.instancePath.slice(1) || (e.params as { missingProperty?: string; additionalProperty?: string }).missingProperty || (e.params as { additionalProperty?: string }).additionalProperty || '';
    const msg = e.keyword === 'required' ? `${field} is required` : e.keyword === 'additionalProperties' ? `unknown field ${field}` : `${field} ${e.message ?? 'is invalid'}`;
    throw new ServiceError('invalid_request', msg, { field });
  }
}
