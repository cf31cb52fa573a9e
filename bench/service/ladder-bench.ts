// `npm run bench:cpu -- --ladder`: the server CPU per free quote of every step of the ladder
// (ladder-steps.ts), from the bare anchor through svcd's gateway layers one at a time to svcd itself, so
// that each step's Δ is what its layer costs. A round starts every step's server afresh (two processes of
// one build differ by a few µs, which a difference between two steps would carry for good), then, in a
// shuffled order, warms each up and measures it at once, and stops them. Rounds go on until every step's
// Δ over the step before (the median of the per-round differences) is outside its noise or known to
// within ±resolution, or the round cap is reached. Prints the table; the caller writes the run
// (cpu-ladder-<time>.json).
import { QUOTE_BODY, QUOTE_PATH, loadRequests } from './load.ts';
import { ANCHOR_STEP, APP_STEPS, SVCD_STEP, svcdWorkersStep, type LadderStep } from './ladder-steps.ts';
import { TICK_MS, cpuMs, machineBusyMs, mainThreadMs } from './proc-cpu.ts';
import { loadavgNow } from '../cli.ts';
import { median } from './report.ts';
import { startAnchor, startLadderStep, startSvcd, type Server } from './servers.ts';
import { childPids } from '../../test/support/proc.ts';

export interface LadderSettings {
  c: number;
  /** svcd with this many gateway workers as the last step (0: none) */
  gateways: number;
  quotes_per_round: number;
  warmup_per_round: number;
  min_rounds: number;
  max_rounds: number;
  /** a Δ whose noise interval lies within ±this (µs) is settled even when it does not exclude 0 */
  resolution_us: number;
  /**
   * a sample during which other work on the machine used more than this many cores is taken again (a busy
   * neighbour makes the server's every request dearer: caches, a shared core), up to `retries` times
   */
  max_foreign_cores: number;
  retries: number;
}

/** What a step's server answered to one free quote before it was measured. */
export interface LadderCheck { status: number; bytes: number; fields: string[]; headers: string[] }

export interface LadderRow {
  step: number;
  key: string;
  name: string;
  adds: string;
  /** µs of server CPU per request, one per round, in round order */
  samples: number[];
  /** their median */
  us: number;
  /** the median absolute deviation of the samples: one round's spread */
  mad: number;
  /** ± of the median (1.858 × MAD / √rounds, its standard error for normal samples); null with one round */
  noise: number | null;
  /** of `us`, the main thread's (the primary's, with workers): its median */
  main_us: number;
  /**
   * per sample, the cores other work used meanwhile (the machine's busy time less the server's and the
   * bench's own, over the wall time); one above max_foreign_cores is a sample no retry got clean
   */
  foreign: number[];
  /** samples taken again because of other work, over all rounds */
  retried: number;
  /** the median over rounds of this step's sample minus the previous step's in the same round */
  delta: number | null;
  delta_noise: number | null;
  delta_samples: number[];
  /**
   * outside: Δ ± 2 noise excludes 0; small: it lies within ±resolution; open: neither (the cap ended the
   * run first); null: the first step, or one round
   */
  settled: 'outside' | 'small' | 'open' | null;
  check: LadderCheck;
}

export interface LadderRun {
  kind: 'svc-cpu-ladder';
  when: string;
  machine: Record<string, unknown>;
  settings: LadderSettings;
  rounds: number;
  /**
   * rounds run and left out: some step of theirs was measured beside other work (above max_foreign_cores)
   * however often it was taken again; at most max_rounds of them, then such rounds are kept (and with no
   * retries, as --quick, none)
   */
  discarded: number;
  /** why the rounds stopped */
  stop: string;
  /** each round's step order (step numbers) */
  orders: number[][];
  /** the machine's load averages (1, 5, 15 min) at the end of each round: other work on the box shows here */
  loadavg: string[];
  rows: LadderRow[];
}

interface Step extends LadderStep { start(): Promise<Server> }
interface Up { s: Server; pids: number[] }

/** The ladder's steps, in order: the anchor, ladder.ts at each of its steps, svcd, svcd with workers. */
function ladderSteps(gateways: number): Step[] {
  return [
    { ...ANCHOR_STEP, start: () => startAnchor(ANCHOR_STEP.name, 'bare') },
    ...APP_STEPS.map((st) => ({ ...st, start: () => startLadderStep(st.name, st.key) })),
    { ...SVCD_STEP, start: () => startSvcd(SVCD_STEP.name, 0) },
    ...(gateways > 0 ? [svcdWorkersStep(gateways)] : [])
      .map((st) => ({ ...st, start: () => startSvcd(st.name, gateways) })),
  ];
}

/** Fields of a free quote that differ between any two answers (ids and times). */
const VOLATILE = new Set(['request_id', 'quote_id', 'created_at', 'expires_at']);

/**
 * One free quote from the server, held against the first step's answer: 200, and every field of that
 * answer there with the same value (ids and times: a string). A step that answers otherwise is a bug of
 * the bench, not a measurement.
 */
async function check(name: string, url: string, ref: Record<string, unknown> | null): Promise<{
  check: LadderCheck; body: Record<string, unknown>;
}> {
  const r = await fetch(`${url}${QUOTE_PATH}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(QUOTE_BODY),
  });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`ladder step ${name}: a free quote answered ${r.status}: ${text}`);
  const body = JSON.parse(text) as Record<string, unknown>;
  const wrong = body.ok !== true || body.source !== 'svc' ? ['ok', 'source'] : [];
  for (const [k, v] of Object.entries(ref ?? {})) {
    const same = VOLATILE.has(k) ? typeof body[k] === 'string' : JSON.stringify(body[k]) === JSON.stringify(v);
    if (!same) wrong.push(k);
  }
  if (wrong.length) {
    throw new Error(`ladder step ${name}: its free quote differs from the anchor's in ${wrong.join(', ')}: ${text}`);
  }
  const headers: string[] = [];
  r.headers.forEach((_v, k) => { headers.push(k); });
  return { body, check: { status: r.status, bytes: Buffer.byteLength(text), fields: Object.keys(body), headers } };
}

const mad = (xs: number[]) => { const m = median(xs); return median(xs.map((x) => Math.abs(x - m))); };
/**
 * ± of a median of n samples: its standard error for normal samples, from their MAD (1.4826 × 1.2533).
 * The MAD counts as at least half a quantum: a sample is CPU ticks over requests (`quantum` µs a tick),
 * so a few rounds may agree to the tick and have no spread to speak of.
 */
const noiseOf = (xs: number[], quantum: number) =>
  (xs.length < 2 ? null : (1.858 * Math.max(mad(xs), quantum / 2)) / Math.sqrt(xs.length));

function shuffled<T>(xs: T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

interface Measured { samples: number[][]; mains: number[][]; foreign: number[][]; retried: number[] }

function rowsOf(steps: Step[], m: Measured, checks: LadderCheck[], s: LadderSettings): LadderRow[] {
  const { samples, mains } = m;
  const quantum = (TICK_MS * 1000) / s.quotes_per_round;
  const res = s.resolution_us;
  return steps.map((st, i) => {
    const xs = samples[i]!;
    const ds = i === 0 ? [] : xs.map((x, r) => x - samples[i - 1]![r]!);
    const delta = i === 0 ? null : median(ds);
    const dn = i === 0 ? null : noiseOf(ds, quantum);
    let settled: LadderRow['settled'] = null;
    if (delta !== null && dn !== null) {
      if (Math.abs(delta) > 2 * dn) settled = 'outside';
      else if (Math.abs(delta) + 2 * dn <= res) settled = 'small';
      else settled = 'open';
    }
    return {
      step: i, key: st.key, name: st.name, adds: st.adds, samples: xs, us: median(xs), mad: mad(xs),
      noise: noiseOf(xs, quantum), main_us: median(mains[i]!), foreign: m.foreign[i]!, retried: m.retried[i]!,
      delta, delta_noise: dn, delta_samples: ds, settled,
      check: checks[i]!,
    };
  });
}

/** Runs the ladder; `progress` says what it does (stderr). */
export async function runLadder(settings: LadderSettings, progress: (s: string) => void): Promise<
  Omit<LadderRun, 'kind' | 'when' | 'machine' | 'settings'>
> {
  const steps = ladderSteps(settings.gateways);
  const samples: number[][] = steps.map(() => []);
  const mains: number[][] = steps.map(() => []);
  const foreign: number[][] = steps.map(() => []);
  const retried: number[] = steps.map(() => 0);
  const checks: LadderCheck[] = [];
  const orders: number[][] = [];
  const loads: string[] = [];
  let rows: LadderRow[] = [];
  let stop = '';
  let discarded = 0;
  const c = settings.c;
  for (let round = 1; round <= settings.max_rounds;) {
    // every step afresh: started together, checked, warmed up, then measured one at a time
    const ups: (Up | null)[] = steps.map(() => null);
    /** this round's sample of each step: kept only if every one of them was taken clean */
    const took: { us: number; main: number; foreign: number }[] = [];
    let order: number[] = [];
    // Ctrl-C or a kill stops this round's servers too (each is a process of its own)
    const interrupted = (signal: NodeJS.Signals) => {
      void Promise.all(ups.map((u) => u?.s.stop().catch(() => {}))).finally(() => process.kill(process.pid, signal));
    };
    process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
    try {
      await Promise.all(steps.map(async (st, i) => {
        const s = await st.start();
        ups[i] = { s, pids: [s.pid] };
      }));
      let ref: Record<string, unknown> | null = null;
      for (const [i, st] of steps.entries()) {
        const up = ups[i]!;
        up.pids = [up.s.pid, ...childPids(up.s.pid)]; // svcd's gateway workers, if any
        const got = await check(st.name, up.s.urls[0]!, ref);
        ref ??= got.body;
        checks[i] = got.check;
      }
      order = shuffled(steps.map((_, i) => i));
      const load = async (i: number, units: number) => {
        const r = await loadRequests(ups[i]!.s.urls[0]!, QUOTE_PATH, QUOTE_BODY, c, { units });
        if (r.non2xx || r.errors) {
          throw new Error(`ladder step ${steps[i]!.name}: ${r.non2xx} answers not 2xx, ${r.errors} errors under load`);
        }
        return r;
      };
      for (const i of order) {
        // warmed up just before it is measured: a server that has only just started, or sat idle while the
        // others ran, is still growing its heap into its steady state (with svcd's gateway, 20,000 to
        // 60,000 requests, a few mark-compacts, each step its own), and each request costs more meanwhile
        await load(i, settings.warmup_per_round);
        const { pids } = ups[i]!;
        let best: { us: number; main: number; foreign: number } | null = null;
        for (let attempt = 0; attempt <= settings.retries; attempt++) {
          if (attempt > 0) {
            retried[i]!++;
            await new Promise((r) => setTimeout(r, 2000)); // let the neighbour's burst pass
          }
          const t0 = performance.now();
          const busy = machineBusyMs();
          const self = process.cpuUsage();
          const before = cpuMs(pids);
          const mainBefore = mainThreadMs(pids[0]!);
          const done = await load(i, settings.quotes_per_round);
          const serverMs = cpuMs(pids) - before;
          const own = process.cpuUsage(self);
          const foreignMs = machineBusyMs() - busy - serverMs - (own.user + own.system) / 1000;
          const per = (ms: number) => (ms * 1000) / Math.max(1, done.count);
          const got = {
            us: per(serverMs), main: per(mainThreadMs(pids[0]!) - mainBefore),
            foreign: Math.max(0, foreignMs) / (performance.now() - t0),
          };
          if (!best || got.foreign < best.foreign) best = got;
          if (got.foreign <= settings.max_foreign_cores || attempt === settings.retries) break;
          progress(`ladder step ${steps[i]!.name}: other work used ${got.foreign.toFixed(2)} cores; measuring again`);
        }
        took[i] = best!;
      }
    } finally {
      process.off('SIGINT', interrupted).off('SIGTERM', interrupted);
      await Promise.all(ups.map((u) => u?.s.stop().catch(() => {})));
    }
    const disturbed = took.filter((t) => t.foreign > settings.max_foreign_cores).length;
    if (disturbed > 0 && settings.retries > 0 && discarded < settings.max_rounds) {
      // a step measured beside other work would weigh on the Δ of both its neighbours: the round goes
      discarded++;
      progress(`ladder round ${round}: ${disturbed} step(s) measured beside other work whatever the retries; `
        + 'the round is discarded and run again');
      continue;
    }
    took.forEach((t, i) => {
      samples[i]!.push(t.us);
      mains[i]!.push(t.main);
      foreign[i]!.push(t.foreign);
    });
    orders.push(order);
    loads.push(loadavgNow());
    rows = rowsOf(steps, { samples, mains, foreign, retried }, checks, settings);
    const open = rows.filter((r) => r.settled === 'open');
    const last = rows.map((r) => r.samples.at(-1)!.toFixed(1)).join(' ');
    const still = round >= settings.min_rounds && round > 1
      ? `; Δ open: ${open.map((r) => r.step).join(', ') || 'none'}`
      : '';
    progress(`ladder round ${round} (load ${loads.at(-1)!}): ${last} µs${still}`);
    if (round >= settings.min_rounds && (round === 1 || open.length === 0)) {
      stop = round === 1
        ? 'one round: no noise figure'
        : `after ${round} rounds every Δ is outside its noise or within ±${settings.resolution_us} µs`;
      break;
    }
    if (round === settings.max_rounds) {
      stop = `round cap (${round}) reached; Δ within the noise and not within ±${settings.resolution_us} µs: `
        + open.map((r) => `step ${r.step}`).join(', ');
    }
    round++;
  }
  return { rounds: orders.length, discarded, stop, orders, loadavg: loads, rows };
}

const f1 = (x: number | null) => (x === null ? '' : x.toFixed(1));
const signed = (x: number | null) => (x === null ? '' : `${x >= 0 ? '+' : ''}${x.toFixed(1)}`);
const SETTLED = { outside: 'outside noise', small: 'small', open: 'within noise' } as const;

/** The ladder's table, one line a step; `saved`: a saved run's µs by step key, for a `vs saved` column. */
export function ladderTable(run: LadderRun, saved?: Map<string, number>): string[] {
  const s = run.settings;
  const lines = [
    `CPU ladder, free quote at c = ${s.c}: ${s.quotes_per_round} requests a step a round after `
      + `${s.warmup_per_round} of warm-up, every server started afresh each round; ${run.rounds} round(s), ${run.stop}`,
    ['#'.padStart(2), 'step'.padEnd(38), 'µs/req'.padStart(7), '±'.padStart(5), 'main'.padStart(6),
      'Δ prev'.padStart(7), 'Δ ±'.padStart(5), '  Δ is'.padEnd(15), saved ? 'vs saved'.padStart(8) : '',
    ].join(' ').trimEnd(),
  ];
  for (const r of run.rows) {
    const old = saved?.get(r.key);
    lines.push([String(r.step).padStart(2), r.name.padEnd(38), f1(r.us).padStart(7), f1(r.noise).padStart(5),
      f1(r.main_us).padStart(6), signed(r.delta).padStart(7), f1(r.delta_noise).padStart(5),
      `  ${r.settled ? SETTLED[r.settled] : ''}`.padEnd(15),
      saved ? (old ? `${(r.us / old).toFixed(2)}x` : '').padStart(8) : ''].join(' ').trimEnd());
  }
  const retried = run.rows.reduce((n, r) => n + r.retried, 0);
  const unclean = run.rows.reduce((n, r) => n + r.foreign.filter((x) => x > s.max_foreign_cores).length, 0);
  const all = run.rows.reduce((n, r) => n + r.samples.length, 0);
  lines.push(`other work on the machine: ${retried} sample(s) taken again, ${run.discarded} round(s) discarded, `
    + `${unclean} of ${all} samples kept with more than ${s.max_foreign_cores} cores of it`);
  lines.push('µs/req: median server CPU per request over the rounds; ±: its noise (1.858 × MAD / √rounds); main: '
    + 'of it, the main thread; Δ prev: median of the per-round differences with the step before, ± its noise; '
    + `outside noise: |Δ| > 2 ±; small: |Δ| + 2 ± ≤ ${s.resolution_us} µs`);
  return lines;
}
