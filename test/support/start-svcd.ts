// Starts svcd (core + HTTP gateway, or the core alone) for ava tests: startSvcd for one test, sharedSvcd
// for every test of a file. One start at a time per test file, so tests that run concurrently do not
// all pay for key generation and the kernel self-check at once on a busy box; the teardown stops svcd
// and removes its data dir even when the start itself fails. With `checkLedger`, the stop must be
// clean: exit code 0 and a ledger that recomputes from its journal.
import type { ExecutionContext, TestFn } from 'ava';
import { Svcd } from './svcd.ts';

export interface StartOptions {
  /** svcd's arguments: ['start'] (core + HTTP gateway, the default) or ['core'] */
  args?: string[];
  /** at the end, stopCheckingLedger instead of a plain stop */
  checkLedger?: boolean;
}

let starting: Promise<unknown> = Promise.resolve();

function queuedStart(s: Svcd, args: string[]): Promise<void> {
  const mine = starting.then(() => s.start(args));
  starting = mine.catch(() => undefined);
  return mine;
}

async function finish(s: Svcd, checkLedger: boolean): Promise<void> {
  try {
    // a svcd that never started has no ledger to check (its start failed and said why)
    if (checkLedger && s.proc) await stopCheckingLedger(s);
    else await s.stop();
  } finally {
    s.cleanup();
  }
}

/** A svcd for one test, stopped at its teardown. */
export async function startSvcd(
  t: ExecutionContext, env: Record<string, string> = {}, { args = ['start'], checkLedger = false }: StartOptions = {},
): Promise<Svcd> {
  const s = new Svcd(env);
  t.teardown(() => finish(s, checkLedger));
  await queuedStart(s, args);
  return s;
}

/**
 * A svcd for every test of a file: started before the first, stopped after the last. Its hooks are
 * serial, so before hooks registered after this call run once svcd is ready, and after hooks
 * registered before it (closing a client) have finished when svcd stops.
 */
export function sharedSvcd(
  test: TestFn, env: Record<string, string> = {}, { args = ['start'], checkLedger = false }: StartOptions = {},
): Svcd {
  const s = new Svcd(env);
  test.serial.before(() => queuedStart(s, args));
  test.serial.after.always(() => finish(s, checkLedger));
  return s;
}

/**
 * Stops svcd and checks what a clean stop leaves: exit code 0, and a ledger that recomputes from its
 * journal (read from the stopped data dir). Throws naming what is wrong, so it fails a test, a hook or
 * a teardown alike.
 */
export async function stopCheckingLedger(s: Svcd): Promise<void> {
  const r = await s.stopAndCheckLedger();
  if (r.exitCode !== 0 || !r.ok) {
    throw new Error(`svcd stopped with exit code ${r.exitCode}; ledger ${r.ok ? 'ok' : r.problems.join('; ')}`);
  }
}
