// Argument validation (src/protocol/validate.ts): the invalid_request a caller gets names the field and
// says what is wrong with it in words (required, unknown, one of, format, well-formed Unicode, the rest
// from Ajv), "a or b is required" for one-of-these requirements, and defaults are filled in place. The
// gateway and the core share it, so HTTP and svc/1 refuse alike.
import test from 'ava';
import { ServiceError } from '../../src/errors.ts';
import { commandSpec } from '../../src/protocol/registry.ts';
import { WELL_FORMED } from '../../src/protocol/schemas.ts';
import { compileValidator, validateArgs } from '../../src/protocol/validate.ts';

const check = compileValidator({
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', pattern: WELL_FORMED },
    code: { type: 'string', pattern: '^[a-z]+$' },
    color: { type: 'string', enum: ['red', 'green'] },
    size: { type: 'integer', minimum: 1, default: 7 },
    inner: {
      type: 'object', additionalProperties: false,
      properties: { deep: { type: 'object', properties: { n: { type: 'integer' } } } },
    },
  },
});

function refusal(f: () => void): { message: string; field: unknown } {
  try {
    f();
  } catch (e) {
    if (!(e instanceof ServiceError)) throw e;
    if (e.code !== 'invalid_request') throw e;
    return { message: e.message, field: e.details?.field };
  }
  throw new Error('accepted');
}

test('validate: each refusal names its field and says what is wrong, in words', (t) => {
  t.deepEqual(refusal(() => check({})), { message: 'name is required', field: 'name' });
  t.deepEqual(refusal(() => check({ name: 'a', extra: 1 })), { message: 'unknown field extra', field: 'extra' });
  t.deepEqual(refusal(() => check({ name: 'a', color: 'blue' })),
    { message: 'color must be one of red, green', field: 'color' });
  t.deepEqual(refusal(() => check({ name: 'a', code: 'A1' })), { message: 'code has the wrong format', field: 'code' });
  t.deepEqual(refusal(() => check({ name: 'a\uD800' })),
    { message: 'name is not well-formed Unicode (unpaired surrogate)', field: 'name' });
  t.deepEqual(refusal(() => check({ name: 'a', size: 0 })), { message: 'size must be >= 1', field: 'size' });
  t.deepEqual(refusal(() => check({ name: 'a', inner: { deep: { n: 'x' } } })),
    { message: 'inner.deep.n must be integer', field: 'inner/deep/n' });
  t.deepEqual(refusal(() => check([] as unknown as Record<string, unknown>)),
    { message: 'request must be object', field: null });
});

test('validate: defaults are filled in place; a valid body passes untouched otherwise', (t) => {
  const body: Record<string, unknown> = { name: 'a' };
  check(body);
  t.deepEqual(body, { name: 'a', size: 7 });
  const given: Record<string, unknown> = { name: 'b', size: 3, color: 'red' };
  check(given);
  t.deepEqual(given, { name: 'b', size: 3, color: 'red' });
});

test('validate: a one-of-these requirement names every alternative', (t) => {
  const either = compileValidator({
    type: 'object',
    properties: { a: { type: 'string' }, b: { type: 'string' } },
    anyOf: [{ properties: { a: true }, required: ['a'] }, { properties: { b: true }, required: ['b'] }],
  });
  t.deepEqual(refusal(() => either({})), { message: 'a or b is required', field: 'a' });
  t.notThrows(() => either({ b: 'x' }));
  const one = compileValidator({
    type: 'object', properties: { a: { type: 'string' } }, anyOf: [{ properties: { a: true }, required: ['a'] }],
  });
  t.deepEqual(refusal(() => one({})), { message: 'a is required', field: 'a' });
});

test('validate: validateArgs checks a command\'s args by its registry schema', (t) => {
  const spec = commandSpec('ACCEPT_QUOTE')!;
  t.deepEqual(refusal(() => validateArgs(spec, { quote_id: 'q1' })), { message: 'machine_id is required',
    field: 'machine_id' });
  t.notThrows(() => validateArgs(spec, { quote_id: 'q1', machine_id: 'm-1' }));
  const quote = { service: 'make-bct', machine_id: 'm-1' };
  t.deepEqual(refusal(() => validateArgs(commandSpec('QUOTE')!, quote)).message, 'bytes or plain_hex is required');
});

test('validate: only an anyOf names alternatives, and only when more than one is missing; no type coercion', (t) => {
  const oneOf = compileValidator({
    type: 'object',
    properties: { a: { type: 'string' }, b: { type: 'string' } },
    oneOf: [{ properties: { a: true }, required: ['a'] }, { properties: { b: true }, required: ['b'] }],
  });
  t.deepEqual(refusal(() => oneOf({})), { message: 'a is required', field: 'a' }, 'a oneOf names its first');
  const typed = compileValidator({
    type: 'object',
    properties: { a: { type: 'string' }, b: { type: 'string' } },
    anyOf: [{ properties: { b: { type: 'string' } }, required: ['b'] }, { properties: { a: true }, required: ['a'] }],
  });
  t.deepEqual(refusal(() => typed({ b: 5 })), { message: 'b must be string', field: 'b' },
    'one alternative missing, the other wrong: the first error');
  t.deepEqual(refusal(() => check({ name: 'a', size: '3' })), { message: 'size must be integer', field: 'size' });
  t.deepEqual(refusal(() => check({ name: 5 })), { message: 'name must be string', field: 'name' });
});
