// Service benchmark (npm run bench:service): the real svcd measured from outside with autocannon,
// side by side with anchors started in the same run, each server in its own node process. Rounds are
// interleaved (anchor, svcd, anchor, svcd … per case and concurrency) and the median is kept; the
// disk's synced-put limit, synced writes per request and bytes per expired quote are measured too.
// Prints a table, writes bench/results/service-<time>.json. Targets are reported, never asserted.
// Usage: npm run bench:service -- --help (docs/bench.md)
import { benchArgs, loadavgNow, machineInfo, parseSizes, progressFrom, readSaved, writeRun } from './cli.ts';
import { countSyncCalls, expiredQuoteBytes, hasStrace, syncedPutLimit } from './service/disk.ts';
import {
  QUOTE_BODY, QUOTE_PATH, loadFlows, loadRequests, type Amount, type LoadResult, type Machine,
} from './service/load.ts';
import { profileSvcd } from './service/profile.ts';
import { formatRun, machineLine, median, type Measure, type Row, type Run } from './service/report.ts';
import {
  anchorMachines, fundMachines, startAnchor, startAnchorCluster, startSvcd, type Server, type SvcdServer,
} from './service/servers.ts';
import { startStores } from './service/stores.ts';
import {
  POLL_MS, checkLines, checkMoney, loadPrepaid, loadX402, splitLines, splitSteps, startX402, type Steps, type StepSplit,
  type X402Check,
} from './service/x402.ts';

const USAGE = `Usage: npm run bench:service -- [options]

The real svcd measured from outside (autocannon) beside anchors started in the same run: a bare
koa+router+ajv server, the same with a synced LevelDB put, and a 3-route paid-flow stand-in. Rows
are interleaved per round and the median is kept; also synced writes per request (strace), the
disk's synced-put limit and bytes per expired quote.

Options:
  -c LIST            client connections per row (default 1,8,32; --quick: 8)
  --gateways LIST    extra svcd rows with K gateway processes (default 1,2; --quick: 2)
  --input RUN.json   print a saved run (with --compare: against another) without measuring
  --profile DIR      CPU-profile svcd under free quotes, then paid flows, into DIR instead of measuring
                     (with --gateways K: svcd with K gateway workers, every process profiled)
  --store pg         instead of the rows above, the paid flow on the ledger's stores, same run: svcd on
                     LevelDB, one node on PostgreSQL, two nodes on one PostgreSQL database behind two
                     gateways (SVC_CORE_NODES); ratios against LevelDB (needs PostgreSQL's server binaries)
  --x402             instead of the rows above, the paid GET_PULSE flow paid per request with x402 beside
                     the prepaid flow, on one svcd with x402 on against a local anvil chain (default -c 1,4);
                     then checks the money (payTo's token gain = the x402 amounts) and svc-admin audit
--sizes sets the pulse output of the paid flow in bytes (≤ 8KiB; default 32, i.e. 256 bits): one
paid row per size. Environment: BENCH_MS, BENCH_ROUNDS, BENCH_EXPIRY_QUOTES, BENCH_RESULTS_DIR.`;

const args = benchArgs(USAGE, {
  c: { type: 'string', short: 'c' },
  gateways: { type: 'string' },
  input: { type: 'string' },
  profile: { type: 'string' },
  store: { type: 'string' },
  x402: { type: 'boolean' },
});
// the x402 rows are one svcd in one process and the default pulse: a flag that would change either is refused
if (args.x402 && [args.store, args.profile, args.gateways, args.sizes].some((v) => v !== undefined)) {
  const why = '--x402 measures its own rows: not with --store, --profile, --gateways or --sizes';
  process.stderr.write(`${why}\n\n${USAGE}\n`);
  process.exit(2);
}
if (args.store !== undefined && args.store !== 'pg') {
  process.stderr.write(`--store: only pg is known (got ${JSON.stringify(args.store)})\n\n${USAGE}\n`);
  process.exit(2);
}
let pulseSizes: number[];
try {
  pulseSizes = args.sizes ? parseSizes(args.sizes, 8192) : [32];
} catch (e) {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(2);
}

const envInt = (name: string, def: number) => {
  const raw = process.env[name];
  const v = raw === undefined || raw === '' ? def : Number(raw);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer (got ${raw})`);
  return v;
};

const quick = args.quick;
const MS = envInt('BENCH_MS', quick ? 300 : 5000);
const settings = {
  ms: MS,
  rounds: envInt('BENCH_ROUNDS', quick ? 1 : 3),
  // x402: c = 1 shows a payment's latency, c = 4 whether settlements overlap (the relayer sends one at a time)
  concurrency: args.c ? args.c.split(',').map(Number) : args.x402 ? [1, 4] : quick ? [8] : [1, 8, 32],
  warmup_ms: Math.max(300, Math.min(2000, MS / 3)),
  /** SVC_GATEWAY_PROCESSES of the extra svcd rows (K gateway workers in front of the core) */
  gateways: args.gateways ? args.gateways.split(',').map(Number) : quick ? [2] : [1, 2],
  /** pulse output bytes of the paid flow rows (32 = 256 bits, the default row) */
  pulse_sizes: pulseSizes,
  disk_ms: quick ? 300 : 2000,
  sync_count_units: quick ? 100 : 500,
  expiry_quotes: envInt('BENCH_EXPIRY_QUOTES', quick ? 2000 : 20_000),
  expiry_ttl_ms: 1000,
};
const progress = progressFrom(performance.now());

interface Entry {
  server: Server;
  /** the server this one's ratio is taken against (its name), if any */
  anchor: string | null;
  /** the target at c = 32, as text, and its check */
  target?: Target;
}
type Target = { text: string; met: (r: Row) => boolean };

const entry = (server: Server, anchor?: Server, target?: Target): Entry =>
  ({ server, anchor: anchor?.name ?? null, ...(target ? { target } : {}) });

interface Case {
  name: string;
  unit: string;
  latency: Row['latency'];
  entries: Entry[];
  load(e: Entry, c: number, a: Amount): Promise<LoadResult>;
}

interface Started {
  free: Case;
  paid: Case;
  /** one paid case per --sizes entry (the first is `paid`) */
  paidCases: Case[];
  /** the entries the synced-write counts name: svcd and the anchor with a store, per case */
  quotes: { svcd: Entry; put: Entry };
  flows: { svcd: Entry; anchor: Entry };
  stop(): Promise<void>;
}

async function startAll(): Promise<Started> {
  const started = await Promise.allSettled([
    startAnchor('koa+router+ajv', 'bare'),
    startAnchor('koa+router+ajv+put', 'put'),
    startSvcd('svcd', 0),
    startAnchor('koa 3-route', 'paid'),
    startSvcd('svcd', 0),
    ...settings.gateways.map((k) => startSvcd(`svcd K=${k}`, k)),
    ...settings.gateways.map((k) => startAnchorCluster(`koa+router+ajv ×${k}`, k)),
  ]);
  const up = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stop = async () => {
    for (const s of up) await s.stop();
  };
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await stop();
    throw (failed as PromiseRejectedResult).reason;
  }
  const [bare, put, svcdFree, paidAnchor, svcdPaid, ...more] = up as [
    Server, Server, SvcdServer, Server, SvcdServer, ...Server[],
  ];
  const svcdK = more.slice(0, settings.gateways.length) as SvcdServer[];
  const bareK = more.slice(settings.gateways.length);
  const n = Math.max(...settings.concurrency);
  const machines = new Map<Server, Machine[]>([
    [paidAnchor, anchorMachines(n)],
    [svcdPaid, await fundMachines(svcdPaid.core, n)],
  ]);
  for (const k of svcdK) machines.set(k, await fundMachines(k.core, n));
  const ratioAtLeast = (min: number, p99: number) => (r: Row) => r.ratio !== null && r.ratio >= min && r.p99_ms < p99;
  const freeTarget: Target = { text: '≥0.8x, p99<20', met: ratioAtLeast(0.8, 20) };
  const quotes = {
    put: entry(put, bare),
    svcd: entry(svcdFree, bare, freeTarget),
  };
  const flows = {
    anchor: entry(paidAnchor),
    svcd: entry(svcdPaid, paidAnchor, { text: '≥1.0x, p99<50', met: ratioAtLeast(1.0, 50) }),
  };
  const k2: Target = { text: '≥1200/s, p99<50', met: (r: Row) => r.rate >= 1200 && r.p99_ms < 50 };
  const free: Case = {
    name: 'free quote',
    unit: 'req/s',
    latency: 'request',
    // the target on the one process against the anchor in one, and on svcd K against the anchor in K workers
    entries: [
      entry(bare), quotes.put, quotes.svcd,
      ...svcdK.flatMap((k, i) => [entry(bareK[i]!), entry(k, bareK[i], freeTarget)]),
    ],
    load: (e, c, a) => loadRequests(e.server.urls[0]!, QUOTE_PATH, QUOTE_BODY, c, a),
  };
  // the default pulse size keeps the row's name, so saved runs compare; other sizes get a row each
  const paidCases = settings.pulse_sizes.map((bytes): Case => ({
    name: bytes === 32 ? 'paid GET_PULSE flow' : `paid GET_PULSE flow, ${bytes} B pulse`,
    unit: 'flows/s',
    latency: 'flow',
    entries: [
      flows.anchor, flows.svcd,
      ...svcdK.map((k) => entry(k, paidAnchor, k.name === 'svcd K=2' ? k2 : undefined)),
    ],
    load: (e, c, a) => loadFlows(e.server.urls, machines.get(e.server)!, c, a, bytes * 8),
  }));
  return { free, paid: paidCases[0]!, paidCases, quotes, flows, stop };
}

async function measureRows(cases: Case[]): Promise<Row[]> {
  for (const cs of cases) {
    for (const e of cs.entries) await cs.load(e, 8, { ms: settings.warmup_ms });
  }
  const samples = new Map<Entry, Map<number, LoadResult[]>>();
  for (let round = 0; round < settings.rounds; round++) {
    for (const c of settings.concurrency) {
      for (const cs of cases) {
        // odd rounds run the servers in reverse (anchor, svcd … svcd, anchor): what one run leaves
        // behind (a LevelDB compaction, a warm cache) falls on each side equally often
        const order = round % 2 ? [...cs.entries].reverse() : cs.entries;
        for (const e of order) {
          const r = await cs.load(e, c, { ms: settings.ms });
          const byC = samples.get(e) ?? new Map<number, LoadResult[]>();
          byC.set(c, [...(byC.get(c) ?? []), r]);
          samples.set(e, byC);
          progress(`round ${round + 1} c=${c} ${cs.name} / ${e.server.name}: ${r.rate.toFixed(0)} ${cs.unit}`);
        }
      }
    }
  }
  const rows: Row[] = [];
  for (const cs of cases) {
    for (const c of settings.concurrency) {
      for (const e of cs.entries) {
        const rs = samples.get(e)!.get(c)!;
        rows.push({
          case: cs.name,
          server: e.server.name,
          c,
          unit: cs.unit,
          rate: median(rs.map((r) => r.rate)),
          p50_ms: median(rs.map((r) => r.p50)),
          p99_ms: median(rs.map((r) => r.p99)),
          latency: cs.latency,
          req_per_s: median(rs.map((r) => r.reqPerSec)),
          errors: rs.reduce((s, r) => s + r.errors, 0),
          non2xx: rs.reduce((s, r) => s + r.non2xx, 0),
          anchor: e.anchor,
          ratio: null,
          target: null,
          met: null,
          rounds: rs.map((r) => r.rate),
        });
      }
    }
  }
  for (const r of rows) {
    const a = rows.find((x) => x.case === r.case && x.c === r.c && x.server === r.anchor);
    // per round, then the median: the anchor run just before shared that round's conditions
    const ratios = a ? r.rounds.flatMap((v, i) => (a.rounds[i] ? [v / a.rounds[i]!] : [])) : [];
    r.ratio = ratios.length ? median(ratios) : null;
    const e = cases.find((cs) => cs.name === r.case)!.entries.find((x) => x.server.name === r.server)!;
    if (e.target && r.c === 32) {
      r.target = e.target.text;
      r.met = e.target.met(r);
    }
  }
  return rows;
}

/** Synced writes per free quote and per paid flow, counted with strace at c = 1 (null without strace). */
async function syncMeasures({ free, paid, quotes, flows }: Started): Promise<Measure[]> {
  const units = settings.sync_count_units;
  const strace = await hasStrace();
  const count = async (cs: Case, e: Entry) => {
    if (!strace) return null;
    const calls = await countSyncCalls(e.server.pid, () => cs.load(e, 1, { units }));
    return calls === null ? null : calls / units;
  };
  const note = strace ? `strace -f -c on the server process, ${units} at c = 1` : 'strace not found: not measured';
  const perQuote = await count(free, quotes.svcd);
  const info = (name: string, value: number | null): Measure => ({
    name,
    value,
    unit: 'fsyncs',
    target: null,
    met: null,
  });
  return [
    {
      name: `synced writes per free quote (${quotes.svcd.server.name})`,
      value: perQuote,
      unit: 'fsyncs',
      target: '= 0',
      met: perQuote === null ? null : perQuote === 0,
      note,
    },
    info(`synced writes per request (${quotes.put.server.name})`, await count(free, quotes.put)),
    info(`synced writes per paid flow (${flows.svcd.server.name})`, await count(paid, flows.svcd)),
    info(`synced writes per paid flow (${flows.anchor.server.name})`, await count(paid, flows.anchor)),
  ];
}

async function measure(): Promise<Run> {
  const machine = machineInfo();
  const started = await startAll();
  progress('servers up, machines funded');
  let rows: Row[];
  let syncs: Measure[];
  try {
    rows = await measureRows([started.free, ...started.paidCases]);
    progress('rounds done');
    syncs = await syncMeasures(started);
    progress('synced writes counted');
  } finally {
    await started.stop();
  }
  const disk = await syncedPutLimit(settings.disk_ms);
  progress('disk synced-put limit measured');
  const expiry = await expiredQuoteBytes(settings.expiry_quotes, settings.expiry_ttl_ms);
  progress('bytes per expired quote measured');
  const bytesTarget = (v: number) => ({ target: '≤ 10', met: v <= 10 });
  const measures: Measure[] = [
    {
      name: 'disk synced puts/s, 1 in flight',
      value: disk.sequential,
      unit: 'puts/s',
      target: null,
      met: null,
      note: `200 B LevelDB puts with sync: true in the temp dir, ${settings.disk_ms} ms each`,
    },
    { name: 'disk synced puts/s, 32 in flight', value: disk.concurrent32, unit: 'puts/s', target: null, met: null },
    ...syncs,
    {
      name: 'bytes per expired free quote, after restart',
      value: expiry.per_quote_after_restart,
      unit: 'B',
      ...bytesTarget(expiry.per_quote_after_restart),
      note: `${expiry.quotes} quotes, ttl ${expiry.ttl_ms} ms, sweep ${expiry.sweep_interval_ms} ms; data dir bytes`
        + ' after stop + start + stop, then after compacting every LevelDB in it',
    },
    {
      name: 'bytes per expired free quote, after compaction',
      value: expiry.per_quote_after_compaction,
      unit: 'B',
      ...bytesTarget(expiry.per_quote_after_compaction),
    },
  ];
  return {
    kind: 'svc-service-bench',
    version: 1,
    when: new Date().toISOString(),
    machine: { ...machine, loadavg_end: loadavgNow() },
    settings,
    rows,
    measures,
    details: { disk, expiry },
  };
}

/**
 * --store pg: the paid flow on LevelDB, on one PostgreSQL node and on two PostgreSQL nodes behind two
 * gateways, and on the Koa + pg anchor, interleaved as every case is; the PostgreSQL rows as ratios of the
 * anchor.
 */
async function measureStores(): Promise<Run> {
  const machine = machineInfo();
  const n = Math.max(...settings.concurrency);
  const stores = await startStores(n);
  progress('servers up, machines funded');
  let rows: Row[];
  try {
    const [leveldb, ...pg] = stores.servers;
    const floor: Target = { text: '≥ 0.8x', met: (r) => (r.ratio ?? 0) >= 0.8 };
    const paid: Case = {
      name: 'paid GET_PULSE flow, by store',
      unit: 'flows/s',
      latency: 'flow',
      // LevelDB alone; PostgreSQL beside the least a Koa + pg app does for the same three requests
      entries: [entry(leveldb!), entry(stores.anchor), ...pg.map((s) => entry(s, stores.anchor, floor))],
      load: (e, c, a) => loadFlows(e.server.urls, stores.machines.get(e.server)!, c, a, 256),
    };
    rows = await measureRows([paid]);
    progress('rounds done');
  } finally {
    await stores.stop();
  }
  return {
    kind: 'svc-service-bench',
    version: 1,
    when: new Date().toISOString(),
    machine: { ...machine, loadavg_end: loadavgNow() },
    settings: { ...settings, store: 'pg' },
    rows,
    measures: [],
    details: { stores: stores.describe },
  };
}

/**
 * --x402: the paid GET_PULSE flow paid per request with x402 (quote → 402 → PAYMENT-SIGNATURE → 200) beside the
 * prepaid flow (quote → accept → execute with the token) on the same svcd, anvil behind it, interleaved as every
 * case is; the x402 row as a ratio of the prepaid one. Then the money: payTo's token gain against the x402
 * amounts, and the store's audit.
 */
async function measureX402(): Promise<Run> {
  const machine = machineInfo();
  // warm-up runs at c = 8 (measureRows): a funded machine and a payer for each of its workers too
  const n = Math.max(...settings.concurrency, 8);
  const x = await startX402(n, n);
  progress('anvil, token, payers and svcd with x402 up, machines funded');
  const before = await x.anvil.balanceOf(x.payTo);
  // each load's steps by row and c, in order: the last `rounds` of each are the measured ones (warm-up first)
  const steps = new Map<string, Steps[]>();
  // what the flows that did not end as they should got back (the first few of each load): printed, never dropped
  const problems: string[] = [];
  const keep = <R extends { steps: Steps; problems: string[] }>(who: string, c: number, r: R): R => {
    const k = `${who}|${c}`;
    steps.set(k, [...(steps.get(k) ?? []), r.steps]);
    for (const p of r.problems) {
      progress(`${who} c=${c}: ${p}`);
      if (problems.length < 20) problems.push(`${who} c=${c}: ${p}`);
    }
    return r;
  };
  let rows: Row[];
  let check: X402Check;
  try {
    const prepaid = entry(x.prepaid);
    const paid = entry(x.x402, x.prepaid);
    const cs: Case = {
      name: 'paid GET_PULSE flow, x402 node on anvil',
      unit: 'flows/s',
      latency: 'flow',
      entries: [prepaid, paid],
      load: async (e, c, a) => (e === prepaid
        ? keep('prepaid', c, await loadPrepaid(x, c, a))
        : keep('x402', c, await loadX402(x, c, a))),
    };
    rows = await measureRows([cs]);
    progress('rounds done');
    check = await checkMoney(x, before);
    progress('money and audit checked');
  } finally {
    await x.stop();
  }
  const last = (k: string) => (steps.get(k) ?? []).slice(-settings.rounds);
  const splits: StepSplit[] = settings.concurrency.map((c) => splitSteps(c, last(`prepaid|${c}`), last(`x402|${c}`)));
  const measures: Measure[] = [
    ...splits.map((sp): Measure => ({
      name: `x402 settlement in a flow, c = ${sp.c}`, value: sp.settlement_ms, unit: 'ms', target: null, met: null,
      note: 'the paid request\'s mean less the prepaid flow\'s accept and execute: '
        + `${(sp.settlement_share * 100).toFixed(0)}% of the x402 flow`,
    })),
    {
      name: 'x402 money: payTo\'s gain less the x402 amounts', value: Number(BigInt(check.pay_to_gain)
        - BigInt(check.x402_paid)), unit: 'base units', target: '= 0', met: check.money_ok,
    },
    {
      // an audit that did not run or did not say clean counts as one even without a listed discrepancy
      name: 'svc-admin audit discrepancies',
      value: check.audit_clean ? 0 : Math.max(1, check.audit_discrepancies.length),
      unit: '',
      target: '= 0',
      met: check.audit_clean,
    },
  ];
  return {
    kind: 'svc-service-bench',
    version: 1,
    when: new Date().toISOString(),
    machine: { ...machine, loadavg_end: loadavgNow() },
    settings: { ...settings, x402: true, x402_poll_ms: POLL_MS },
    rows,
    measures,
    details: {
      x402: {
        chain: 'anvil (automine, chain id 8453) with the USDC port (EIP-3009), loopback',
        flows: 'one node:http keep-alive client for both rows, a connection per worker; latency per flow = its '
          + 'wall time, quote to final answer, the client\'s signing included',
        steps: splits,
        problems,
        check,
      },
    },
  };
}

const readRun = (file: string) => readSaved<Run>(file, 'svc-service-bench');

if (args.profile) {
  await profileSvcd(args.profile, MS, settings.warmup_ms, args.gateways ? settings.gateways[0] : 0);
} else {
  const run = args.input ? readRun(args.input)
    : args.x402 ? await measureX402() : args.store ? await measureStores() : await measure();
  const saved = args.compare ? readRun(args.compare) : undefined;
  // with --json the run goes to stdout and the tables to stderr
  const print = (text: string) => (args.json ? process.stderr : process.stdout).write(`${text}\n`);
  print(`\n${machineLine(run)}`);
  const x402 = run.details.x402 as { steps: StepSplit[]; problems?: string[]; check: X402Check } | undefined;
  print(x402
    ? 'rate: median over rounds; p50/p99: per flow, its wall time from the quote to the final answer (signing included)'
    : 'rate: median over rounds; p50/p99: per request (free quote) or per flow = sum of its 3 requests (paid)');
  if (saved) print(`Δ: against ${args.compare} (${saved.when}, commit ${String(saved.machine.commit)})`);
  print(`\n${formatRun(run, saved)}`);
  if (x402) {
    print(`\n${splitLines(x402.steps).join('\n')}\n\n${checkLines(x402.check).join('\n')}`);
    for (const p of x402.problems ?? []) print(`flow not ended as it should: ${p}`);
    // a run whose money or audit is wrong is a failed run, whatever its speed
    if (!x402.check.money_ok || !x402.check.audit_clean) process.exitCode = 1;
  }
  if (!args.input || args.out) print(`\nwritten: ${writeRun('service', run, args.out, args.json === true)}`);
  else if (args.json) process.stdout.write(JSON.stringify(run) + '\n');
}
