// A connection checked out of a pg pool, held: the pool listens for its errors only while it is idle, and a
// connection that dies while held (the server restarting, the network resetting it) emits 'error', which
// nobody hearing ends the process. Its statements fail with that error too; here it is only remembered, so
// that the connection goes back to the pool closed, not for reuse.
import type pg from 'pg';

export interface Held {
  /** marks the connection as not to be reused (a statement on it failed in a way that may have broken it) */
  fail(e: Error): void;
  /** gives it back to the pool: closed if it died or failed, else for reuse */
  release(): void;
}

export function hold(c: pg.PoolClient): Held {
  let broken: Error | undefined;
  const died = (e: Error) => { broken ??= e; };
  c.on('error', died);
  return {
    fail: died,
    release() {
      c.removeListener('error', died);
      c.release(broken);
    },
  };
}
