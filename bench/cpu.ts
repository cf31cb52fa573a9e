// CPU bench (npm run bench:cpu): the server's own CPU time per request, read from /proc/<pid>/stat
// around a fixed number of requests, for svcd beside the bare anchors and, with --against REF, beside
// svcd as it was at a git ref. Throughput on a shared 2-core machine moves ±10% between runs; the
// server's CPU per request moves a few µs (docs/performance.md, "The gateway's layers"), so this is the
// A/B measure for one change. Every svcd runs in one process (SVC_GATEWAY_PROCESSES=0: the CPU read is
// that process's, all its threads), or with --gateways K as the core and K gateway workers (the CPU of
// the primary and of every process it started); each tree runs twice, interleaved, because two svcd of
// one build differ by a few µs too. Prints a table, writes bench/results/cpu-<time>.json. Linux only.
// With --ladder, the free quote's ablation ladder instead (service/ladder-bench.ts): cpu-ladder-<time>.json.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs, loadavgNow, machineInfo, progressFrom, ratioCell, readSaved, writeRun } from './cli.ts';
import { QUOTE_BODY, QUOTE_PATH, loadFlows, loadRequests, type Machine } from './service/load.ts';
import { median } from './service/report.ts';
import * as here from './service/servers.ts';
import { ladderTable, runLadder, type LadderRun, type LadderSettings } from './service/ladder-bench.ts';
import { cpuMs, mainThreadMs } from './service/proc-cpu.ts';
import { childPids } from '../test/support/proc.ts';

const USAGE = `Usage: npm run bench:cpu -- [options]

Server CPU time per request (µs, all threads of the server process, from /proc/<pid>/stat) over a
fixed number of free quotes and of paid GET_PULSE flows at c = 32: the bare koa+router+ajv anchor,
the 3-route paid anchor, svcd from this tree and, with --against, svcd from a git ref. Each svcd
runs in one process (no gateway workers), two svcd per tree; rounds are interleaved and the median
of every svcd's rounds is kept. "main thr" is the part spent on the main thread of the server (of the
core, with workers): the event loop that limits the rate when it nears the wall time.

Options:
  --against REF      also measure svcd at REF (a commit, branch or tag; checked out with git worktree
                     in a temp dir, sharing this tree's node_modules): the Δ column is this tree / REF
  -c N               client connections (default 32)
  --gateways K       svcd with K gateway worker processes (default 0: one process); the CPU counted
                     is the core's and every worker's
  --flows N          paid flows per round (default 2000; --quick: 100): tens of thousands show the
                     steady state of a ledger that has grown (LevelDB's compactions), not a new one
  --ladder           the ablation ladder instead: free quotes only, from the bare anchor through svcd's
                     gateway layers, one more a step, to svcd (with --gateways K, then svcd with K workers);
                     every server afresh each round, rounds until each step's Δ is outside its noise or
                     within ±1 µs (--quick: one round of 500 requests a step); writes cpu-ladder-<time>.json
  --rounds N         --ladder: at most N rounds (default 15; at least 5 unless N is less)`;

const args = benchArgs(USAGE, {
  against: { type: 'string' }, c: { type: 'string', short: 'c' }, gateways: { type: 'string' },
  flows: { type: 'string' }, ladder: { type: 'boolean' }, rounds: { type: 'string' },
});
if (args.sizes !== undefined) {
  process.stderr.write(`--sizes: bench:cpu has one size per case\n\n${USAGE}\n`);
  process.exit(2);
}
const c = args.c === undefined ? 32 : Number(args.c);
if (!Number.isInteger(c) || c < 1 || c > 256) {
  process.stderr.write(`-c: a whole number from 1 to 256 (got ${JSON.stringify(args.c)})\n`);
  process.exit(2);
}
const gateways = args.gateways === undefined ? 0 : Number(args.gateways);
if (!Number.isInteger(gateways) || gateways < 0 || gateways > 16) {
  process.stderr.write(`--gateways: a whole number from 0 to 16 (got ${JSON.stringify(args.gateways)})\n`);
  process.exit(2);
}
const flows = args.flows === undefined ? null : Number(args.flows);
if (flows !== null && (!Number.isInteger(flows) || flows < 1 || flows > 1_000_000)) {
  process.stderr.write(`--flows: a whole number from 1 to 1,000,000 (got ${JSON.stringify(args.flows)})\n`);
  process.exit(2);
}
const maxRounds = args.rounds === undefined ? 15 : Number(args.rounds);
if (!Number.isInteger(maxRounds) || maxRounds < 1 || maxRounds > 1000) {
  process.stderr.write(`--rounds: a whole number from 1 to 1000 (got ${JSON.stringify(args.rounds)})\n`);
  process.exit(2);
}
if (args.ladder && (args.against !== undefined || flows !== null)) {
  process.stderr.write(`--ladder measures this tree's free quotes: not with --against or --flows\n\n${USAGE}\n`);
  process.exit(2);
}
if (!args.ladder && args.rounds !== undefined) {
  process.stderr.write(`--rounds: only with --ladder\n\n${USAGE}\n`);
  process.exit(2);
}
if (!existsSync('/proc/self/stat')) {
  process.stderr.write('bench:cpu reads /proc/<pid>/stat: Linux only\n');
  process.exit(2);
}
const quick = args.quick === true;
const settings = {
  c,
  gateways,
  rounds: quick ? 1 : 3,
  processes_per_tree: quick ? 1 : 2,
  quotes_per_round: quick ? 1000 : 20_000,
  flows_per_round: flows ?? (quick ? 100 : 2000),
  against: args.against ?? null,
};
const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** git for the worktree steps: a failure there stops the run (cli.ts's git answers 'unknown') */
const gitOrThrow = (a: string[]) => execFileSync('git', a, { cwd: ROOT, encoding: 'utf8' }).trim();
const progress = progressFrom(performance.now());

/** One step of a paid flow, from svcd's histograms: its mean over the measured rounds, and how often a flow took it. */
export interface WallStep { step: string; mean_ms: number; per_flow: number }
export interface Wall { server: string; flows: number; rate: number; flow_ms: number; steps: WallStep[] }

/** The svcd histograms a paid flow's wall time is read from, before and after each measured round. */
const WALL_SERIES = new RegExp('^(svc_http_request_duration_seconds|svc_command_duration_seconds|'
  + 'svc_ledger_batch_seconds|svc_ledger_flush_seconds|svc_ledger_group_commit_batches)_(sum|count)'
  + '(\\{[^}]*\\})? (\\S+)$');

/** The _sum and _count of WALL_SERIES from svcd's GET /metrics, by series name and labels. */
async function scrape(addr: string): Promise<Map<string, number>> {
  const text = await (await fetch(`http://${addr}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = WALL_SERIES.exec(line);
    if (m) out.set(`${m[1]!}${m[3] ?? ''} ${m[2]!}`, Number(m[4]));
  }
  return out;
}

/** What a label set names, for the table: `{route="/x",method="POST"}` → `POST /x`. */
function stepName(series: string, labels: string): string {
  const l = Object.fromEntries([...labels.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
  if (series === 'svc_http_request_duration_seconds') return `HTTP ${l.method ?? ''} ${l.route ?? ''}`;
  if (series === 'svc_command_duration_seconds') return `core ${l.command ?? ''} (${l.listener ?? ''})`;
  if (series === 'svc_ledger_batch_seconds') return `ledger batch, queued and written (sync ${l.sync ?? ''})`;
  if (series === 'svc_ledger_flush_seconds') return `ledger flush (sync ${l.sync ?? ''})`;
  return 'ledger batches per synced flush';
}

/**
 * The steps of `flows` paid flows from the difference of two scrapes: each histogram's mean (ms; for the
 * group commit, batches per flush) and how many of it a flow took. Steps no flow took are left out.
 */
function wallSteps(before: Map<string, number>, after: Map<string, number>, flows: number): WallStep[] {
  const steps: WallStep[] = [];
  for (const [k, count] of after) {
    if (!k.endsWith(' count')) continue;
    const series = k.slice(0, -' count'.length);
    const n = count - (before.get(k) ?? 0);
    if (n <= 0) continue;
    const sum = (after.get(`${series} sum`) ?? 0) - (before.get(`${series} sum`) ?? 0);
    const brace = series.indexOf('{');
    const name = brace < 0 ? series : series.slice(0, brace);
    const group = name === 'svc_ledger_group_commit_batches';
    steps.push({
      step: stepName(name, brace < 0 ? '' : series.slice(brace)),
      mean_ms: group ? sum / n : (sum * 1000) / n,
      per_flow: n / Math.max(1, flows),
    });
  }
  return steps;
}

type Servers = typeof here;
interface Target {
  server: string; tree: string; s: here.Server; machines: Machine[]; pids: number[];
  /** svcd's metrics listener (this tree's svcd only): where a paid flow's wall time is read from */
  metrics: string | null;
}
export interface CpuRow {
  case: string; server: string; unit: string;
  /** µs per unit, one per process and round */
  samples: number[];
  us: number;
  /** of `us`, the µs on the (primary) process's main thread: its median over the same samples */
  main_us: number;
  main_samples: number[];
  /** µs per unit of this process, the load generator's (autocannon): its median over the same rounds */
  load_us: number;
  /** us / the anchor's us in this run */
  vs_anchor: number | null;
  /** us / the --against svcd's us in this run */
  vs_ref: number | null;
}

/** REF checked out in a temp dir beside this tree's node_modules; removed by the returned function. */
function checkout(ref: string): { dir: string; commit: string; remove(): void } {
  let commit: string;
  try {
    commit = gitOrThrow(['rev-parse', '--verify', '--quiet', '--short', `${ref}^{commit}`]);
  } catch {
    process.stderr.write(`--against: ${JSON.stringify(ref)} names no commit in this repository\n`);
    process.exit(2);
  }
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-ref-'));
  rmSync(dir, { recursive: true });
  gitOrThrow(['worktree', 'add', '--detach', dir, commit]);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return { dir, commit, remove: () => gitOrThrow(['worktree', 'remove', '--force', dir]) };
}

/** `--ladder`: the ablation ladder (service/ladder-bench.ts), its table and its run. */
async function ladder(): Promise<number> {
  const saved = args.compare ? readSaved<LadderRun>(args.compare, 'svc-cpu-ladder') : undefined;
  const machine = machineInfo();
  const ls: LadderSettings = {
    c, gateways,
    quotes_per_round: quick ? 500 : 20_000,
    warmup_per_round: quick ? 500 : 60_000,
    min_rounds: quick ? 1 : Math.min(5, maxRounds),
    max_rounds: quick ? 1 : maxRounds,
    resolution_us: 1,
    max_foreign_cores: 0.15,
    retries: quick ? 0 : 3,
  };
  const done = await runLadder(ls, progress);
  const run: LadderRun = {
    kind: 'svc-cpu-ladder', when: new Date().toISOString(), machine: { ...machine, loadavg_end: loadavgNow() },
    settings: ls, ...done,
  };
  const print = (s: string) => (args.json ? process.stderr : process.stdout).write(`${s}\n`);
  const m = machine;
  print(`svc CPU bench — ${String(m.cpu_model)}, ${String(m.cpus)} cores, Node ${String(m.node)}, `
    + `commit ${String(m.commit)}`);
  for (const line of ladderTable(run, saved && new Map(saved.rows.map((r) => [r.key, r.us])))) print(line);
  print(`written: ${writeRun('cpu-ladder', run, args.out, args.json === true)}`);
  return 0;
}

async function main(): Promise<number> {
  const saved = args.compare ? readSaved<{ rows: CpuRow[] }>(args.compare, 'svc-cpu-bench') : undefined;
  const machine = machineInfo(); // before the servers start: its load average is the box's
  const ref = args.against ? checkout(args.against) : null;
  const stops: (() => Promise<void>)[] = [];
  try {
    const trees: { name: string; mod: Servers }[] = [{ name: 'svcd', mod: here }];
    if (ref) {
      const mod = await import(join(ref.dir, 'bench/service/servers.ts')) as Servers;
      trees.push({ name: `svcd@${ref.commit}`, mod });
    }
    const rows: CpuRow[] = [];
    /** per svcd tree with metrics: the scrapes around its paid rounds, and what those rounds did */
    const walls = new Map<string, { before: Map<string, number>[]; after: Map<string, number>[];
      flows: number; seconds: number; }>();
    for (const kase of ['free quote', 'paid GET_PULSE flow'] as const) {
      const paid = kase !== 'free quote';
      const anchor = await here.startAnchor(paid ? 'koa 3-route' : 'koa+router+ajv', paid ? 'paid' : 'bare');
      stops.push(() => anchor.stop());
      const targets: Target[] = [
        {
          server: anchor.name, tree: anchor.name, s: anchor, machines: here.anchorMachines(c), pids: [anchor.pid],
          metrics: null,
        },
      ];
      for (const t of trees) {
        for (let p = 0; p < settings.processes_per_tree; p++) {
          // this tree's svcd serves /metrics (recorded either way: the listener only shows them)
          const env: Record<string, string> = t.mod === here ? { SVC_METRICS_PORT: '0' } : {};
          const s = await t.mod.startSvcd(`${t.name}#${p + 1}`, gateways, env);
          stops.push(() => s.stop());
          const machines = paid ? await t.mod.fundMachines(s.core, c) : [];
          const metrics = t.mod === here ? s.core.ready.metrics ?? null : null;
          targets.push({ server: s.name, tree: t.name, s, machines, pids: [s.pid, ...childPids(s.pid)], metrics });
        }
      }
      progress(`${kase}: ${targets.length} servers up`);
      const n = paid ? settings.flows_per_round : settings.quotes_per_round;
      const load = (t: Target, units: number) => paid
        ? loadFlows(t.s.urls, t.machines, c, { units })
        : loadRequests(t.s.urls[0]!, QUOTE_PATH, QUOTE_BODY, c, { units });
      // warm-up: a round's worth (the JIT, the caches, LevelDB's files)
      for (const t of targets) await load(t, n);
      const samples = new Map<string, number[]>();
      const mains = new Map<string, number[]>();
      const loads = new Map<string, number[]>();
      const push = (m: Map<string, number[]>, tree: string, x: number) => m.set(tree, [...(m.get(tree) ?? []), x]);
      for (let r = 0; r < settings.rounds; r++) {
        for (const t of r % 2 ? [...targets].reverse() : targets) {
          const scraped = paid && t.metrics ? await scrape(t.metrics) : null;
          const before = cpuMs(t.pids);
          const mainBefore = mainThreadMs(t.pids[0]!);
          const loadBefore = process.cpuUsage();
          const done = await load(t, n);
          const loadCpu = process.cpuUsage(loadBefore);
          const per = (ms: number) => (ms * 1000) / Math.max(1, done.count);
          const us = per(cpuMs(t.pids) - before);
          push(samples, t.tree, us);
          push(mains, t.tree, per(mainThreadMs(t.pids[0]!) - mainBefore));
          push(loads, t.tree, per((loadCpu.user + loadCpu.system) / 1000));
          if (scraped) {
            const w = walls.get(t.tree) ?? { before: [], after: [], flows: 0, seconds: 0 };
            w.before.push(scraped);
            w.after.push(await scrape(t.metrics!));
            w.flows += done.count;
            w.seconds += done.seconds;
            walls.set(t.tree, w);
          }
          progress(`round ${r + 1} ${kase} / ${t.server}: ${us.toFixed(1)} µs per ${paid ? 'flow' : 'request'}`);
        }
      }
      const anchorUs = median(samples.get(anchor.name)!);
      const refUs = ref ? median(samples.get(`svcd@${ref.commit}`)!) : null;
      for (const [tree, xs] of samples) {
        const us = median(xs);
        const mainXs = mains.get(tree)!;
        rows.push({
          case: kase, server: tree, unit: paid ? 'µs/flow' : 'µs/request', samples: xs, us,
          main_us: median(mainXs), main_samples: mainXs, load_us: median(loads.get(tree)!),
          vs_anchor: tree === anchor.name ? null : us / anchorUs,
          vs_ref: refUs === null || tree === anchor.name || tree === `svcd@${ref!.commit}` ? null : us / refUs,
        });
      }
      while (stops.length) await stops.pop()!();
    }
    const wall: Wall[] = [...walls].map(([server, w]) => {
      // every round's difference, summed: a step's mean is over all of them
      const sum = (ms: Map<string, number>[]) => ms.reduce((acc, m) => {
        for (const [k, v] of m) acc.set(k, (acc.get(k) ?? 0) + v);
        return acc;
      }, new Map<string, number>());
      const rate = w.flows / Math.max(1e-9, w.seconds);
      const steps = wallSteps(sum(w.before), sum(w.after), w.flows);
      return { server, flows: w.flows, rate, flow_ms: (c * 1000) / rate, steps };
    });
    const run = {
      kind: 'svc-cpu-bench',
      when: new Date().toISOString(),
      machine: { ...machine, loadavg_end: loadavgNow() },
      settings,
      rows,
      wall,
    };
    const print = (s: string) => (args.json ? process.stderr : process.stdout).write(`${s}\n`);
    const m = machine;
    print(`svc CPU bench — ${String(m.cpu_model)}, ${String(m.cpus)} cores, Node ${String(m.node)}, `
      + `commit ${String(m.commit)}; c = ${c}, ${settings.rounds} rounds × ${settings.processes_per_tree} `
      + `svcd per tree${gateways ? `, each with ${gateways} gateway workers` : ''}`);
    print(['case'.padEnd(20), 'server'.padEnd(18), 'unit'.padEnd(11), 'median'.padStart(7),
      'main thr'.padStart(8), 'load gen'.padStart(8), 'vs anchor'.padStart(9), 'vs ref'.padStart(7),
      saved ? 'vs saved'.padStart(8) : '', '  samples',
    ].join(' ').trimEnd());
    for (const r of rows) {
      const old = saved?.rows.find((o) => o.case === r.case && o.server === r.server)?.us;
      print([r.case.padEnd(20), r.server.padEnd(18), r.unit.padEnd(11), r.us.toFixed(1).padStart(7),
        (r.main_us ?? 0).toFixed(1).padStart(8), (r.load_us ?? 0).toFixed(1).padStart(8),
        (r.vs_anchor === null ? '' : `${r.vs_anchor.toFixed(2)}x`).padStart(9),
        (r.vs_ref === null ? '' : `${r.vs_ref.toFixed(3)}x`).padStart(7),
        saved ? ratioCell(r.us, old).padStart(8) : '', ` ${r.samples.map((x) => x.toFixed(1)).join(' ')}`,
      ].join(' '));
    }
    for (const w of wall) {
      print(`\npaid GET_PULSE flow, where the wall time goes: ${w.server}, ${w.flows} flows at `
        + `${w.rate.toFixed(0)} flows/s, c = ${c}: ${w.flow_ms.toFixed(2)} ms a flow (svcd's histograms)`);
      print(`${'step'.padEnd(56)} ${'mean ms'.padStart(8)} ${'per flow'.padStart(8)}`);
      for (const st of w.steps) {
        const mean = st.step.startsWith('ledger batches per') ? `${st.mean_ms.toFixed(1)} b` : st.mean_ms.toFixed(3);
        print(`${st.step.padEnd(56)} ${mean.padStart(8)} ${st.per_flow.toFixed(2).padStart(8)}`);
      }
    }
    print(`written: ${writeRun('cpu', run, args.out, args.json === true)}`);
    return 0;
  } finally {
    while (stops.length) await stops.pop()!().catch(() => {});
    ref?.remove();
  }
}

process.exitCode = args.ladder ? await ladder() : await main();
