// Helpers of the in-process money guards (test/guards/money.test.ts, quotes.test.ts): a refusal by
// its catalogue code, the ledger invariant, a journaled credit, and a quote as QUOTE makes it.
import type { ExecutionContext } from 'ava';
import { createQuote, type QuoteRecord } from '../../src/core/quotes.ts';
import { ServiceError, type ErrorCode } from '../../src/errors.ts';
import { commandSpec } from '../../src/protocol/registry.ts';
import { validateArgs } from '../../src/protocol/validate.ts';
import type { Fixture } from './core-fixture.ts';

/** The ServiceError `p` throws (or rejects with), checked to carry `code`. */
export async function refused(t: ExecutionContext, p: Promise<unknown> | (() => unknown), code: ErrorCode) {
  const e = typeof p === 'function'
    ? t.throws(p as () => unknown)
    : await t.throwsAsync(p);
  t.true(e instanceof ServiceError, String(e));
  t.is((e as ServiceError).code, code, e?.message);
  return e as ServiceError;
}

export async function ledgerHolds(t: ExecutionContext, f: Fixture) {
  const check = await f.ctx.ledger.verify();
  t.true(check.ok, check.problems.join('; '));
}

/** Credits `units` to a machine through the ledger's own journaled change. */
export async function credit(f: Fixture, machineId: string, units: bigint) {
  await f.ctx.ledger.withMachine(machineId, async () => {
    const acct = await f.ctx.ledger.account(machineId);
    const { ops } = f.ctx.ledger.change(machineId, acct, 'credit', units, 0n, { test: 'credit' }, f.clock.now());
    await f.store.write(ops);
  });
}

/** A quote as QUOTE makes it (the schema's defaults applied): submit-id for 3 bytes to m-q unless told. */
export function quote(f: Fixture, args: Record<string, unknown>): QuoteRecord {
  const a = { service: 'submit-id', machine_id: 'm-q', bytes: 3, ...args };
  validateArgs(commandSpec('QUOTE')!, a);
  return createQuote(f.ctx, a);
}
