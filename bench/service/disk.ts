// What the disk allows and what svcd leaves on it, measured in the same run as the throughput rows:
// the synced-put limit of this disk (a LevelDB of our own, one put at a time and 32 at once), synced
// writes per request (strace counts fsync/fdatasync in the server's process), and the bytes an
// expired free quote leaves in the data dir.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { Svcd } from '../../test/support/svcd.ts';
import { loadRequests } from './load.ts';
import { BENCH_ENV } from './servers.ts';

export interface PutLimit {
  sequential: number;
  concurrent32: number;
}

/** Synced LevelDB puts of 200 B per second on the disk under the temp dir: one at a time, then 32 in flight. */
export async function syncedPutLimit(ms: number): Promise<PutLimit> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-disk-'));
  const db = new Level<string, string>(dir);
  const value = randomBytes(100).toString('hex');
  let n = 0;
  const loop = async (end: number) => {
    while (performance.now() < end) {
      await db.put(`k${n++}`, value, { sync: true });
    }
  };
  try {
    await db.open();
    const rate = async (workers: number) => {
      const start = n;
      const t0 = performance.now();
      await Promise.all(Array.from({ length: workers }, () => loop(t0 + ms)));
      return ((n - start) * 1000) / (performance.now() - t0);
    };
    return { sequential: await rate(1), concurrent32: await rate(32) };
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether strace is here (it counts the fsyncs of another process without changing it). */
export function hasStrace(): Promise<boolean> {
  return new Promise((resolve) => {
    const p = spawn('strace', ['-V'], { stdio: 'ignore' });
    p.once('error', () => resolve(false));
    p.once('exit', (code) => resolve(code === 0));
  });
}

const SYNC_CALLS = ['fsync', 'fdatasync', 'sync_file_range', 'syncfs', 'msync'];

/**
 * Counts the sync system calls of process `pid` (all its threads: LevelDB syncs on libuv's pool)
 * while `work` runs. Returns the total, or null when strace cannot attach.
 */
export async function countSyncCalls(pid: number, work: () => Promise<unknown>): Promise<number | null> {
  const st = spawn('strace', ['-f', '-c', '-e', `trace=${SYNC_CALLS.join(',')}`, '-p', String(pid)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  st.stderr!.on('data', (d) => { err += d; });
  const attached = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 5000);
    st.stderr!.on('data', () => {
      if (/attached/.test(err)) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    st.once('exit', () => resolve(false));
  });
  if (!attached) {
    st.kill('SIGKILL');
    return null;
  }
  // strace attaches to the threads one by one; give it a moment before the work starts
  await new Promise((r) => setTimeout(r, 300));
  await work();
  const exited = new Promise<void>((r) => st.once('exit', () => r()));
  st.kill('SIGINT');
  await exited;
  let calls = 0;
  for (const line of err.split('\n')) {
    const cols = line.trim().split(/\s+/);
    // "% time  seconds  usecs/call  calls  [errors]  syscall"
    if (cols.length >= 5 && SYNC_CALLS.includes(cols[cols.length - 1]!)) calls += Number(cols[3]);
  }
  return calls;
}

/** Apparent bytes of every file under dir (LevelDB's text LOG files included). */
export function dirBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += dirBytes(p);
    else if (e.isFile()) total += statSync(p).size;
  }
  return total;
}

/** Every LevelDB under dir (a directory holding CURRENT). */
function levelDbs(dir: string): string[] {
  const here = readdirSync(dir, { withFileTypes: true });
  const found = here.some((e) => e.isFile() && e.name === 'CURRENT') ? [dir] : [];
  for (const e of here) if (e.isDirectory()) found.push(...levelDbs(join(dir, e.name)));
  return found;
}

/** Compacts every LevelDB under dir over its whole key range (svcd must be stopped: LevelDB locks). */
async function compactAll(dir: string): Promise<void> {
  for (const path of levelDbs(dir)) {
    const db = new Level<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    // level's Level is classic-level's ClassicLevel on Node; its browser-shared type omits compactRange
    const classic = db as unknown as { compactRange(start: Buffer, end: Buffer): Promise<void> };
    await classic.compactRange(Buffer.alloc(0), Buffer.alloc(256, 0xff));
    await db.close();
  }
}

export interface ExpiredQuoteBytes {
  quotes: number;
  ttl_ms: number;
  sweep_interval_ms: number;
  /** data-dir bytes: baseline (a fresh svcd started and stopped), the same compacted, live after expiry, … */
  baseline: number;
  baseline_compacted: number;
  live_after_expiry: number;
  after_restart: number;
  after_compaction: number;
  per_quote_after_restart: number;
  per_quote_after_compaction: number;
}

/**
 * Bytes per expired free quote. A fresh svcd is started and stopped: the baseline, measured as it is
 * and after compaction. Then `n` quotes with the shortest TTL are issued, svcd runs past their expiry
 * and several sweeps, is stopped, started once more (LevelDB replays its log into a table on open)
 * and stopped. The data dir is measured there, and again after this process compacts every LevelDB.
 */
export async function expiredQuoteBytes(n: number, ttlMs: number): Promise<ExpiredQuoteBytes> {
  const sweep = 200;
  const s = new Svcd({ ...BENCH_ENV, SVC_SWEEP_INTERVAL_MS: String(sweep) });
  const restart = async () => {
    await s.start(['start']);
    await s.stop();
  };
  try {
    await restart();
    const baseline = dirBytes(s.dataDir);
    await compactAll(s.dataDir);
    const baselineCompacted = dirBytes(s.dataDir);
    await s.start(['start']);
    const body = { machine_id: 'expiry', bits: 256, quote_ttl_ms: ttlMs };
    const r = await loadRequests(s.ready.http!, '/api/v1/quotes/get-pulse', body, 32, { units: n });
    if (r.count !== n) {
      throw new Error(`expected ${n} quotes, got ${r.count} (${r.non2xx} non-2xx, ${r.errors} errors)`);
    }
    await new Promise((res) => setTimeout(res, ttlMs + 5 * sweep + 500));
    const live = dirBytes(s.dataDir);
    await s.stop();
    await restart();
    const afterRestart = dirBytes(s.dataDir);
    await compactAll(s.dataDir);
    const afterCompaction = dirBytes(s.dataDir);
    return {
      quotes: n,
      ttl_ms: ttlMs,
      sweep_interval_ms: sweep,
      baseline,
      baseline_compacted: baselineCompacted,
      live_after_expiry: live,
      after_restart: afterRestart,
      after_compaction: afterCompaction,
      per_quote_after_restart: (afterRestart - baseline) / n,
      per_quote_after_compaction: (afterCompaction - baselineCompacted) / n,
    };
  } finally {
    await s.stop();
    s.cleanup();
  }
}
