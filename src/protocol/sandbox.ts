// The anonymous sandbox's request schemas (SPEC "Sandbox requests", "Limits"): free, limited,
// GET_PULSE only, no real settlement. Validated with the same Ajv setup as the registry.
import { id, machineId, obj, type Schema } from './schemas.ts';
import { compileValidator } from './validate.ts';

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

const validators = Object.fromEntries(Object.entries(SANDBOX_SCHEMAS).map(([k, v]) => [k, compileValidator(v)])) as Record<keyof typeof SANDBOX_SCHEMAS, (b: Record<string, unknown>) => void>;

/** Validates (and fills defaults into) a sandbox request; throws invalid_request naming the field. */
export function validateSandbox(kind: keyof typeof SANDBOX_SCHEMAS, body: Record<string, unknown>): void {
  validators[kind](body);
}
