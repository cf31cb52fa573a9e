// The registry's example calls (src/protocol/examples.ts) are calls the service takes and answers it
// gives: every command a client can reach over HTTP has one (QUOTE one per service), each example's args
// pass the very validator the gateway and the core run, and each result matches the command's result schema.
import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ALL_COMMANDS } from '../../src/protocol/registry.ts';
import { SERVICE_NAMES } from '../../src/protocol/services.ts';
import { validateArgs } from '../../src/protocol/validate.ts';

const reachable = ALL_COMMANDS.filter((c) => c.http || c.gatewayRoute);

test('every command reachable over HTTP has an example; QUOTE one per service', (t) => {
  t.true(reachable.length >= 20, `${reachable.length} commands`);
  for (const c of reachable) t.true((c.examples?.length ?? 0) > 0, `${c.name} has no example`);
  const quote = ALL_COMMANDS.find((c) => c.name === 'QUOTE')!;
  t.deepEqual(quote.examples!.map((e) => e.args.service), [...SERVICE_NAMES]);
});

test('every example\'s args are valid for the command, by the validator the service runs', (t) => {
  for (const c of ALL_COMMANDS) {
    for (const [i, e] of (c.examples ?? []).entries()) {
      const args = structuredClone(e.args) as Record<string, unknown>; // the validator fills in defaults
      t.notThrows(() => validateArgs(c, args), `${c.name} example ${i}`);
    }
  }
});

test('every example\'s result matches the command\'s result schema', (t) => {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  for (const c of ALL_COMMANDS) {
    if (!c.examples) continue;
    const valid = ajv.compile(c.result);
    for (const [i, e] of c.examples.entries()) {
      t.true(valid(e.result), `${c.name} example ${i}: ${ajv.errorsText(valid.errors)}`);
    }
  }
});

test('the examples tell one story: each execution spends the quote its service\'s quote example issued', (t) => {
  const byName = new Map(ALL_COMMANDS.map((c) => [c.name, c]));
  for (const q of byName.get('QUOTE')!.examples!) {
    const exec = byName.get(q.result.command as string)!.examples![0]!;
    t.is(exec.args.quote_id, q.result.quote_id, q.result.command as string);
    t.is(exec.result.quote_id, q.result.quote_id);
    t.is(exec.result.units_charged, q.result.quote_units, 'charged what was quoted');
  }
  const receipt = byName.get('VERIFY_RECEIPT')!.examples![0]!;
  t.is(receipt.args.receipt_id, byName.get('GET_PULSE')!.examples![0]!.result.receipt_id);
});
