// Starts svcd (core + HTTP gateway) for one ava test: one start at a time per test file, so tests that
// run concurrently do not all pay for key generation and the kernel self-check at once on a busy box,
// and a teardown that stops it and removes its data dir even when the start itself fails.
import type { ExecutionContext } from 'ava';
import { Svcd } from './svcd.ts';

let starting: Promise<unknown> = Promise.resolve();

export async function startSvcd(t: ExecutionContext, env: Record<string, string> = {}): Promise<Svcd> {
  const s = new Svcd(env);
  t.teardown(async () => { await s.stop(); s.cleanup(); });
  const mine = starting.then(() => s.start(['start']));
  starting = mine.catch(() => undefined);
  await mine;
  return s;
}
