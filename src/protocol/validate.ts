// Argument validation from the registry's schemas (Ajv, JSON Schema 2020-12, defaults applied).
// The gateway compiles the same schemas, so HTTP and svc/1 accept exactly the same requests.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { ServiceError } from '../errors.ts';
import { ALL_COMMANDS, type CommandSpec } from './registry.ts';

const ajv = new Ajv2020({ strict: true, allErrors: false, useDefaults: true, coerceTypes: false });
const validators = new Map<string, ValidateFunction>(ALL_COMMANDS.map((c) => [c.name, ajv.compile(c.args)]));

function describe(e: ErrorObject): string {
  const field = e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : '';
  switch (e.keyword) {
    case 'required': return `${(e.params as { missingProperty: string }).missingProperty} is required`;
    case 'additionalProperties': return `unknown field ${(e.params as { additionalProperty: string }).additionalProperty}`;
    case 'enum': return `${field} must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    case 'pattern': return `${field} has the wrong format`;
    default: return `${field || 'request'} ${e.message ?? 'is invalid'}`;
  }
}

/** Validates (and fills defaults into) a command's args; throws invalid_request naming the field. */
export function validateArgs(spec: CommandSpec, args: Record<string, unknown>): void {
  const v = validators.get(spec.name)!;
  if (!v(args)) {
    const e = v.errors![0]!;
    throw new ServiceError('invalid_request', describe(e), { field: e.instancePath.slice(1) || (e.params as { missingProperty?: string; additionalProperty?: string }).missingProperty || (e.params as { additionalProperty?: string }).additionalProperty || null });
  }
}
