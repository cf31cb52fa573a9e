// Argument validation from the registry's schemas (Ajv, JSON Schema 2020-12, defaults applied).
// The gateway compiles the same schemas, so HTTP and svc/1 accept exactly the same requests.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { ServiceError } from '../errors.ts';
import type { CommandSpec } from './registry.ts';
import { WELL_FORMED, type Schema } from './schemas.ts';

const ajv = new Ajv2020({ strict: true, allErrors: false, useDefaults: true, coerceTypes: false });

function describe(e: ErrorObject): string {
  const field = e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : '';
  switch (e.keyword) {
    case 'required': return `${(e.params as { missingProperty: string }).missingProperty} is required`;
    case 'additionalProperties':
      return `unknown field ${(e.params as { additionalProperty: string }).additionalProperty}`;
    case 'enum':
      return `${field} must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    case 'pattern':
      if ((e.params as { pattern: string }).pattern === WELL_FORMED) {
        return `${field} is not well-formed Unicode (unpaired surrogate)`;
      }
      return `${field} has the wrong format`;
    default: return `${field || 'request'} ${e.message ?? 'is invalid'}`;
  }
}

/** Compiles a schema into a check that fills defaults in place and throws invalid_request naming the field. */
export function compileValidator(schema: Schema): (body: Record<string, unknown>) => void {
  const v: ValidateFunction = ajv.compile(schema);
  return (body) => {
    if (v(body)) return;
    const e = v.errors![0]!;
    const p = e.params as { missingProperty?: string; additionalProperty?: string };
    // "one of these is required" (anyOf of required): name every alternative, not just the first
    const missing = (x: ErrorObject) => (x.params as { missingProperty: string }).missingProperty;
    const alternatives = v.errors!.some((x) => x.keyword === 'anyOf')
      ? v.errors!.filter((x) => x.keyword === 'required').map(missing)
      : [];
    const message = alternatives.length > 1 ? `${alternatives.join(' or ')} is required` : describe(e);
    const field = e.instancePath.slice(1) || p.missingProperty || p.additionalProperty || null;
    throw new ServiceError('invalid_request', message, { field });
  };
}

/**
 * Each command's check, compiled on its first use: compiling all of them (about 140 ms) is not a start-up's
 * cost, and most processes use a few (a CLI one, a gateway worker the public ones).
 */
const validators = new WeakMap<CommandSpec, (body: Record<string, unknown>) => void>();

/** Validates (and fills defaults into) a command's args; throws invalid_request naming the field. */
export function validateArgs(spec: CommandSpec, args: Record<string, unknown>): void {
  let check = validators.get(spec);
  if (!check) {
    check = compileValidator(spec.args);
    validators.set(spec, check);
  }
  check(args);
}
