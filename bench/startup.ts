// Start-up benchmark (npm run bench:startup): svcd as `npm start` runs it in one process (SVC_GATEWAY_PROCESSES=0),
// timed from spawn to its ready file, on a fresh data dir and on one holding a ledger of many flows (written
// straight into the LevelDB store, each flow a reserve and a capture on one of 1,000 machines funded once).
// Rounds alternate fresh, big, fresh, big …; the median of each and their ratio are reported, never asserted.
// Each timed start on the big ledger follows one untimed start that wrote its checkpoint, as in service.
// Usage: npm run bench:startup -- --help (docs/bench.md)
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ledger } from '../src/core/ledger.ts';
import { LevelStore } from '../src/store/level-store.ts';
import type { Op } from '../src/store/store.ts';
import { benchArgs, machineInfo, progressFrom, writeRun } from './cli.ts';

const USAGE = `Usage: npm run bench:startup -- [options]

svcd started in one process, spawn to ready, on a fresh data dir and on one with a big ledger, alternated;
medians and the big/fresh ratio (targets: fresh < 1 s, big within 20% of fresh).

Options:
  --flows N          flows in the big ledger (default 1000000; --quick: 20000)
  --rounds N         timed starts of each (default 7; --quick: 2)`;

const args = benchArgs(USAGE, { flows: { type: 'string' }, rounds: { type: 'string' } });
const positive = (raw: string | undefined, def: number, name: string): number => {
  const v = raw === undefined ? def : Number(raw);
  if (!Number.isSafeInteger(v) || v < 1) {
    process.stderr.write(`--${name} must be a positive integer\n\n${USAGE}\n`);
    process.exit(2);
  }
  return v;
};
const flows = positive(args.flows, args.quick ? 20_000 : 1_000_000, 'flows');
const rounds = positive(args.rounds, args.quick ? 2 : 7, 'rounds');
const SVCD = fileURLToPath(new URL('../src/bin/svcd.mjs', import.meta.url));
const MACHINES = 1000;
const progress = progressFrom(performance.now());

/** A ledger of `n` flows on MACHINES machines, written as the core writes them (journal and accounts). */
async function bigLedger(dir: string, n: number): Promise<void> {
  const store = await LevelStore.open(dir);
  const ledger = new Ledger(store);
  const at = new Date();
  const accounts = new Map<string, Awaited<ReturnType<Ledger['account']>>>();
  let ops: Op[] = [];
  const flush = async () => { if (ops.length) await store.write(ops, { sync: false }); ops = []; };
  for (let i = 0; i < MACHINES; i++) {
    const m = `bench-m-${i}`;
    const c = ledger.change(m, await ledger.account(m), 'credit', BigInt(n), 0n, { rail: 'bench' }, at);
    accounts.set(m, c.next);
    ops.push(...c.ops);
  }
  for (let f = 0; f < n; f++) {
    const m = `bench-m-${f % MACHINES}`;
    const q = `q-${f}`;
    const r = ledger.change(m, accounts.get(m)!, 'reserve', -1n, 1n, { quote_id: q }, at);
    const c = ledger.change(m, r.next, 'capture', 0n, -1n, { quote_id: q, receipt_id: `r-${f}` }, at);
    accounts.set(m, c.next);
    ops.push(...r.ops, ...c.ops);
    if (ops.length >= 20_000) await flush();
  }
  await flush();
  await store.close();
}

/** Milliseconds from spawn to svcd's ready file; svcd is then stopped (SIGTERM) before the next start. */
async function startOnce(dataDir: string): Promise<number> {
  const ready = join(dataDir, 'ready.json');
  rmSync(ready, { force: true });
  const t0 = performance.now();
  const p = spawn(process.execPath, [SVCD, 'start'], {
    env: {
      ...process.env, SVC_DATA_DIR: dataDir, SVC_READY_FILE: ready, SVC_EDGE_PORT: '0', SVC_BACKEND_PORT: '0',
      SVC_HTTP_PORT: '0', SVC_GATEWAY_PROCESSES: '0', SVC_LOG_LEVEL: 'warn', SVC_PAYMENTS: 'local',
    },
    stdio: 'ignore',
  });
  const exited = new Promise<number | null>((r) => p.on('exit', r));
  while (!existsSync(ready)) {
    if (p.exitCode !== null) throw new Error(`svcd exited ${p.exitCode} before it was ready (${dataDir})`);
    await new Promise((r) => setTimeout(r, 2));
  }
  const ms = performance.now() - t0;
  p.kill('SIGTERM');
  await exited;
  return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const root = mkdtempSync(join(tmpdir(), 'bench-startup-'));
try {
  const big = join(root, 'big');
  progress(`writing a ledger of ${flows} flows`);
  await bigLedger(big, flows);
  progress('first start on it (full check, writes the checkpoint)');
  const firstBig = await startOnce(big);
  const fresh: number[] = [], bigs: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const dir = join(root, `fresh-${i}`);
    fresh.push(await startOnce(dir));
    rmSync(dir, { recursive: true, force: true });
    bigs.push(await startOnce(big));
    const last = (xs: number[]) => xs.at(-1)!.toFixed(0);
    progress(`round ${i + 1}/${rounds}: fresh ${last(fresh)} ms, ${flows} flows ${last(bigs)} ms`);
  }
  const freshMs = Math.round(median(fresh)), bigMs = Math.round(median(bigs));
  const run = {
    when: new Date().toISOString(), machine: machineInfo(), flows, rounds,
    first_start_big_ms: Math.round(firstBig),
    fresh_ms: { median: freshMs, all: fresh.map(Math.round) },
    big_ms: { median: bigMs, all: bigs.map(Math.round) },
    big_over_fresh: Number((bigMs / freshMs).toFixed(3)),
  };
  const table = [
    `svcd start to ready, one process (${rounds} rounds, alternated; medians)`,
    `  fresh data dir          ${run.fresh_ms.median} ms   (target < 1000 ms)`,
    `  ${String(flows).padEnd(8)} flows ledger   ${run.big_ms.median} ms   ${run.big_over_fresh}x fresh`
      + ' (target ≤ 1.2x)',
    `  first start on it       ${run.first_start_big_ms} ms   (no checkpoint yet: every journal entry checked)`,
  ].join('\n');
  process.stderr.write(`${table}\n`);
  writeRun('startup', run, args.out, args.json === true);
} finally {
  rmSync(root, { recursive: true, force: true });
}
