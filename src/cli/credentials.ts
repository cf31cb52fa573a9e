// Where `svc` keeps machine tokens: SVC_MACHINE_TOKEN wins; otherwise a JSON credentials file
// (default ~/.config/svc/credentials.json, or --credentials / SVC_CREDENTIALS) written with mode
// 0600 when fund-account returns a new token. Tokens are never printed unless just issued.
import {
  chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export function credentialsPath(explicit?: string): string {
  return explicit ?? process.env.SVC_CREDENTIALS ?? join(homedir(), '.config', 'svc', 'credentials.json');
}

interface CredFile { machines: Record<string, { token: string; saved_at: string }> }

function read(path: string): CredFile {
  if (!existsSync(path)) return { machines: {} };
  const v = JSON.parse(readFileSync(path, 'utf8')) as Partial<CredFile>;
  return { machines: v.machines ?? {} };
}

export function tokenFor(machineId: string | undefined, path: string): string | undefined {
  if (process.env.SVC_MACHINE_TOKEN) return process.env.SVC_MACHINE_TOKEN;
  if (!machineId) return undefined;
  return read(path).machines[machineId]?.token;
}

/**
 * Adds a token. Several `svc` may save at once (a script funding machines in parallel), so the read, the
 * change and the write happen under a lock file, and each process writes its own temp file before the
 * atomic rename: a token is never lost to another process's write, and a reader never sees half a file.
 */
export function saveToken(machineId: string, token: string, path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  locked(path, () => {
    const f = read(path);
    f.machines[machineId] = { token, saved_at: new Date().toISOString() };
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(f, null, 2) + '\n', { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, path);
  });
}

/** A lock older than this was left by a process that died holding it (a save takes milliseconds). */
const STALE_LOCK_MS = 10_000;
const WAIT = new Int32Array(new SharedArrayBuffer(4));

function locked(path: string, fn: () => void): void {
  const lock = `${path}.lock`;
  const deadline = Date.now() + 2 * STALE_LOCK_MS;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) unlinkSync(lock);
    } catch { /* released meanwhile */ }
    if (Date.now() > deadline) throw new Error(`${lock} is held: remove it if no svc is running`);
    Atomics.wait(WAIT, 0, 0, 5); // a synchronous 5 ms pause: the CLI has nothing else to do meanwhile
  }
  try {
    fn();
  } finally {
    unlinkSync(lock);
  }
}
