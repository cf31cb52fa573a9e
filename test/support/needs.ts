// The one way a test depends on something outside the repository (../shared/vectors, the SPEC,
// Chromium): present → the test runs; absent in a plain clone → it is registered as skipped with
// the reason in its title, so the run shows what did not run; absent when the CI variable is set →
// it is registered as a failing test, so CI can never go green by skipping. test/support/needs.test.ts
// checks that no test file skips any other way.
import type { ExecutionContext, TestFn } from 'ava';

export interface Need {
  /** what is missing, for the title: "../shared/vectors/wycheproof/ed25519_test.json" */
  what: string;
  present: boolean;
  /** how to provide it */
  hint: string;
}

export type Decision = 'run' | 'skip' | 'fail';

/** CI is on when the variable is set to anything but "", "0" or "false" (GitHub, GitLab and .ci/run set it). */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.CI;
  return v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false';
}

export function decide(present: boolean, env: NodeJS.ProcessEnv = process.env): Decision {
  if (present) return 'run';
  return inCi(env) ? 'fail' : 'skip';
}

type Impl = (t: ExecutionContext) => void | Promise<void>;
type Registrar = Pick<TestFn, 'skip'> & ((title: string, impl: Impl) => void);

/** One need made of several: present when all are, named by those missing. */
export function allOf(...needs: Need[]): Need {
  const missing = needs.filter((n) => !n.present);
  return {
    what: missing.map((n) => n.what).join(', ') || needs.map((n) => n.what).join(', '),
    present: missing.length === 0,
    hint: missing.map((n) => n.hint).join('; '),
  };
}

/** Registers `title` on `test` (or test.serial) according to decide(). */
export function testNeeding(
  test: Registrar, title: string, need: Need, impl: Impl, env: NodeJS.ProcessEnv = process.env,
): Decision {
  const d = decide(need.present, env);
  if (d === 'run') test(title, impl);
  else if (d === 'skip') test.skip(`${title} — SKIPPED: ${need.what} not found (${need.hint})`, () => {});
  else {
    test(`${title} — MISSING in CI: ${need.what}`, (t) => {
      t.fail(`${need.what} not found, and CI is set: a CI run must not skip this (${need.hint})`);
    });
  }
  return d;
}
