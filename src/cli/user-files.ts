// The files `svc` keeps for its user, in one directory: $XDG_CONFIG_HOME/svc, else ~/.config/svc
// (made mode 0700): config.json (profiles, profiles.ts) and credentials.json (machine tokens,
// credentials.ts), each written mode 0600. Several `svc` may write at once (a script logging in and
// funding machines in parallel), so a change is a read, the change and a write under a lock file,
// each process writing its own temp file before the atomic rename: no change is lost to another
// process's write, and a reader never sees half a file.
import {
  chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

/** The XDG base directory rule: a relative XDG_CONFIG_HOME is invalid and ignored. */
export function configDir(): string {
  const xdg = process.env.XDG_CONFIG_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.config'), 'svc');
}

/** The file's JSON, or `empty` when there is no file yet. */
export function readJsonFile<T extends object>(path: string, empty: T): T {
  if (!existsSync(path)) return empty;
  return { ...empty, ...(JSON.parse(readFileSync(path, 'utf8')) as Partial<T>) };
}

/** Reads the file, lets `change` edit it and writes it back, under the lock (mode 0600). */
export function updateJsonFile<T extends object>(path: string, empty: T, change: (v: T) => void): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  locked(path, () => {
    const v = readJsonFile(path, empty);
    change(v);
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(v, null, 2) + '\n', { mode: 0o600 });
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
