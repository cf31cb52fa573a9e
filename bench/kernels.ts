// Kernel benchmark (npm run bench:kernels): each row side by side with its anchor in the same run.
// The parent process runs the whole suite in several child processes (V8 sometimes leaves a
// process on baseline WASM code, DESIGN.md §11: one slow start must not hide or fake a result),
// takes the median per row, prints a table and writes bench/results/kernels-<time>.json.
// Usage: npm run bench:kernels -- --help (docs/bench.md)
import { execFileSync, spawn } from 'node:child_process';
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { copyFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { digest as asDigest } from '@chainsafe/as-sha256';
import { createSHA256 } from 'hash-wasm';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { xchacha20poly1305 as nobleX } from '@noble/ciphers/chacha.js';
import { KernelPool, Kernels } from '../src/kernels/index.ts';
import { assemble } from '../src/kernels/bvm-assembler.ts';
import { loadKernels } from '../src/kit/kernels.ts';
import { runReference } from '../test/reference/bvm-ref.ts';
import { benchArgs, parseSizes, ratioCell, readSaved, sizeLabel, writeRun } from './cli.ts';

interface Row { group: string; case: string; impl: string; value: number; unit: string; anchor?: string }
interface KernelRun {
  kind: 'svc-kernel-bench';
  when: string;
  rows: (Row & { spread: number[] })[];
  ratios: Record<string, number | null>;
  [k: string]: unknown;
}

const USAGE = `Usage: npm run bench:kernels -- [options]

The proof kernels (SHA-256, XChaCha20-Poly1305, the pulse, the BVM, the embedding package, the
worker pool) measured beside their anchors (hash-wasm, @chainsafe/as-sha256, @noble/*, node:crypto,
the TypeScript BVM reference) in the same run; the median over child processes.

Options:
  --procs N          child processes, the median is kept (default 3; --quick: 1)
  --ms MS            measuring time per row (default 400; --quick: 150)
--sizes sets the SHA-256 and XChaCha20-Poly1305 rows (default: SHA-256 64,1KiB,8KiB,1MiB; XChaCha
1KiB,8KiB,1MiB). A target whose row was not run reads n/a.`;

const args = benchArgs(USAGE, {
  child: { type: 'boolean' },
  procs: { type: 'string' },
  ms: { type: 'string' },
});
const positive = (name: string, v: string | undefined, def: number) => {
  const n = v === undefined ? def : Number(v);
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(`--${name}: a positive integer, not ${JSON.stringify(v)}\n`);
    process.exit(2);
  }
  return n;
};
const MS = positive('ms', args.ms, args.quick ? 150 : 400);
const PROCS = positive('procs', args.procs, args.quick ? 1 : 3);
let SIZES: { sha: number[]; xchacha: number[] };
try {
  const given = args.sizes ? parseSizes(args.sizes) : null;
  SIZES = {
    sha: given ?? [64, 1024, 8192, 1 << 20],
    xchacha: given ?? [1024, 8192, 1 << 20],
  };
} catch (e) {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(2);
}

/** Calls fn repeatedly for ~MS ms after a warm-up; returns operations per second. */
function opsPerSec(fn: () => unknown): number {
  const warm = performance.now() + MS / 4;
  while (performance.now() < warm) fn();
  let n = 0, batch = 1;
  const t0 = performance.now();
  let t1 = t0;
  while (t1 - t0 < MS) {
    for (let i = 0; i < batch; i++) fn();
    n += batch;
    t1 = performance.now();
    if (t1 - t0 < MS / 10) batch *= 2;
  }
  return (n * 1000) / (t1 - t0);
}

async function opsPerSecAsync(fn: () => Promise<unknown>, concurrency: number): Promise<number> {
  const callers = (until: number, each = () => {}) => Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < until) {
      await fn();
      each();
    }
  }));
  await callers(performance.now() + MS / 4);
  let n = 0;
  const t0 = performance.now();
  await callers(t0 + MS, () => { n++; });
  return (n * 1000) / (performance.now() - t0);
}

async function suite(): Promise<Row[]> {
  const rows: Row[] = [];
  const k = Kernels.create();
  const add = (group: string, c: string, impl: string, value: number, unit: string, anchor?: string) => {
    rows.push({ group, case: c, impl, value, unit, anchor });
  };

  // ---- SHA-256 ----
  const hw = await createSHA256();
  for (const size of SIZES.sha) {
    const label = sizeLabel(size);
    const data = new Uint8Array(randomBytes(size));
    const mb = (fn: () => unknown) => (size * opsPerSec(fn)) / 1e6;
    const hashWasm = () => {
      hw.init();
      hw.update(data);
      return hw.digest('binary');
    };
    add('sha256', label, 'svc (ours)', mb(() => k.sha256(data)), 'MB/s');
    add('sha256', label, 'hash-wasm', mb(hashWasm), 'MB/s', 'anchor');
    add('sha256', label, '@chainsafe/as-sha256', mb(() => asDigest(data)), 'MB/s', 'anchor');
    add('sha256', label, '@noble/hashes', mb(() => nobleSha256(data)), 'MB/s', 'anchor');
    add('sha256', label, 'node:crypto', mb(() => createHash('sha256').update(data).digest()), 'MB/s', 'limit');
  }

  // ---- XChaCha20-Poly1305 ----
  const key = new Uint8Array(randomBytes(32)), nonce = new Uint8Array(randomBytes(24)), aad = new Uint8Array(16);
  const nonce12 = nonce.subarray(0, 12);
  const nodeCipher = (n: number) => {
    const c = createCipheriv('chacha20-poly1305', key, nonce12, { authTagLength: 16 });
    c.setAAD(aad, { plaintextLength: n });
    return c;
  };
  for (const size of SIZES.xchacha) {
    const label = sizeLabel(size);
    const mb = (fn: () => unknown) => (size * opsPerSec(fn)) / 1e6;
    const pt = new Uint8Array(randomBytes(size));
    const sealed = k.xchachaSeal(key, nonce, pt, aad);
    const seal = 'xchacha20poly1305 seal', open = 'xchacha20poly1305 open', node = 'node:crypto chacha20-poly1305';
    add(seal, label, 'svc (ours)', mb(() => k.xchachaSeal(key, nonce, pt, aad)), 'MB/s');
    add(seal, label, '@noble/ciphers', mb(() => nobleX(key, nonce, aad).encrypt(pt)), 'MB/s', 'anchor');
    add(seal, label, node, mb(() => {
      const c = nodeCipher(pt.length);
      return [c.update(pt), c.final(), c.getAuthTag()];
    }), 'MB/s', 'limit');
    const nobleSealed = nobleX(key, nonce, aad).encrypt(pt);
    const nodeC = nodeCipher(pt.length);
    const nodeCt = Buffer.concat([nodeC.update(pt), nodeC.final()]), nodeTag = nodeC.getAuthTag();
    add(open, label, 'svc (ours)', mb(() => k.xchachaOpen(key, nonce, sealed, aad)), 'MB/s');
    add(open, label, '@noble/ciphers', mb(() => nobleX(key, nonce, aad).decrypt(nobleSealed)), 'MB/s', 'anchor');
    add(open, label, node, mb(() => {
      const d = createDecipheriv('chacha20-poly1305', key, nonce12, { authTagLength: 16 });
      d.setAAD(aad, { plaintextLength: pt.length });
      d.setAuthTag(nodeTag);
      return [d.update(nodeCt), d.final()];
    }), 'MB/s', 'limit');
  }

  // ---- pulse ----
  const seed = new Uint8Array(randomBytes(32)), ctx = new Uint8Array(randomBytes(48));
  add('pulse 65536-bit', 'single thread', 'svc (ours)', opsPerSec(() => k.pulseExpand(seed, ctx, 65536)), 'pulses/s');
  const pool = new KernelPool();
  await pool.run('sha256', [new Uint8Array(1)], { route: 'worker' });
  for (const c of [2, 4]) {
    const rate = await opsPerSecAsync(() => pool.run('pulseExpand', [seed, ctx, 65536], { route: 'worker' }), c);
    add('pulse 65536-bit', `pool, ${c} callers`, 'svc (ours)', rate, 'pulses/s');
  }
  add('pulse 256-bit', 'single thread', 'svc (ours)', opsPerSec(() => k.pulseExpand(seed, ctx, 256)), 'pulses/s');

  // ---- BVM ----
  const arith = assemble('push 0\npush 1\nloop: dup\njz done\nswap\nover\nadd\nswap\npush8 1\nadd\njmp loop\n'
    + 'done: halt').image;
  const memLoop = assemble('.memory 65536\npush 0\nloop: dup\ndup\nload32\npush8 1\nadd\nstore32\npush8 4\nadd\n'
    + 'push 0xfffc\nand\njmp loop').image;
  for (const [label, img] of [['arithmetic loop', arith], ['memory loop', memLoop]] as const) {
    const empty = new Uint8Array(0);
    const fuelW = 50_000_000, fuelR = 10_000_000;
    const w = opsPerSec(() => {
      const r = k.bvmRun(img, empty, { fuel: fuelW, maxOutput: 0 });
      if (r.steps !== fuelW) throw new Error(r.status);
    }) * fuelW;
    const r = opsPerSec(() => {
      const x = runReference(img, empty, fuelR, 0);
      if (x.steps !== fuelR) throw new Error(x.status);
    }) * fuelR;
    add('bvm', label, 'svc (ours, WASM)', w / 1e6, 'M steps/s');
    add('bvm', label, 'TypeScript reference', r / 1e6, 'M steps/s', 'anchor');
  }

  // ---- the embedding package (svc/kernels) against the raw exports it wraps: target ≥ 0.9x ----
  const kit = await loadKernels();
  const raw = kit.raw;
  for (const [label, size] of [['64 B', 64], ['8 KiB', 8192]] as const) {
    const data = new Uint8Array(randomBytes(size));
    const inp = raw.alloc(size), out = raw.alloc(32);
    const mb = (fn: () => unknown) => (size * opsPerSec(fn)) / 1e6;
    const viaPackage = mb(() => kit.sha256(data));
    add('package vs raw', `sha256 ${label}`, 'svc/kernels (package)', viaPackage, 'MB/s');
    // one view, renewed only when memory grows (as the package keeps its own): only the wrapping differs
    let mem = new Uint8Array(raw.memory.buffer);
    add('package vs raw', `sha256 ${label}`, 'raw exports', mb(() => {
      if (mem.buffer !== raw.memory.buffer) mem = new Uint8Array(raw.memory.buffer);
      mem.set(data, inp);
      raw.sha256_digest(inp, size, out);
      if (mem.buffer !== raw.memory.buffer) mem = new Uint8Array(raw.memory.buffer);
      return mem.slice(out, out + 32);
    }), 'MB/s', 'baseline');
    raw.free(inp);
    raw.free(out);
  }

  // ---- pool overhead ----
  const tiny = new Uint8Array(64);
  const inlineUs = 1e6 / opsPerSec(() => k.sha256(tiny));
  add('pool round trip (sha256 64 B)', 'inline call', 'svc (ours)', inlineUs, 'µs/job');
  for (const c of [1, 2, 4]) {
    const ops = await opsPerSecAsync(() => pool.run('sha256', [tiny], { route: 'worker' }), c);
    const callers = `${c} caller${c > 1 ? 's' : ''}`;
    add('pool round trip (sha256 64 B)', callers, 'svc pool', (1e6 / ops) * c, 'µs/job latency');
    add('pool round trip (sha256 64 B)', callers, 'svc pool', ops, 'jobs/s');
  }
  // routing check: where does a worker start to pay for SHA-256?
  for (const size of [4096, 16384, 65536, 262144]) {
    const d = new Uint8Array(size);
    const inl = 1e6 / opsPerSec(() => k.sha256(d));
    const wrk = 1e6 / (await opsPerSecAsync(() => pool.run('sha256', [d], { route: 'worker' }), 1));
    add('routing (sha256, 1 caller)', `${size / 1024} KiB`, 'inline', inl, 'µs/job');
    const routed = pool.routesInline('sha256', [d]) ? 'inline' : 'to worker';
    add('routing (sha256, 1 caller)', `${size / 1024} KiB`, `worker (routed ${routed})`, wrk, 'µs/job');
  }
  await pool.close();
  return rows;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

const TARGETS: readonly (readonly [string, string, string, string, string])[] = [
  ['SHA-256 8 KiB vs hash-wasm (target ≥ 1.0x)', 'sha256', '8 KiB', 'svc (ours)', 'hash-wasm'],
  ['SHA-256 1 MiB vs hash-wasm (target ≥ 1.0x)', 'sha256', '1 MiB', 'svc (ours)', 'hash-wasm'],
  ['SHA-256 8 KiB vs as-sha256', 'sha256', '8 KiB', 'svc (ours)', '@chainsafe/as-sha256'],
  ['XChaCha seal 8 KiB vs noble (target ≥ 2x)', 'xchacha20poly1305 seal', '8 KiB', 'svc (ours)', '@noble/ciphers'],
  ['XChaCha seal 1 MiB vs noble (target ≥ 2x)', 'xchacha20poly1305 seal', '1 MiB', 'svc (ours)', '@noble/ciphers'],
  ['XChaCha open 8 KiB vs noble (target ≥ 2x)', 'xchacha20poly1305 open', '8 KiB', 'svc (ours)', '@noble/ciphers'],
  ['XChaCha open 1 MiB vs noble (target ≥ 2x)', 'xchacha20poly1305 open', '1 MiB', 'svc (ours)', '@noble/ciphers'],
  ['BVM arithmetic vs TS reference (target ≥ 1.0x)', 'bvm', 'arithmetic loop', 'svc (ours, WASM)',
    'TypeScript reference'],
  ['BVM memory vs TS reference', 'bvm', 'memory loop', 'svc (ours, WASM)', 'TypeScript reference'],
  ['package vs raw exports, SHA-256 64 B (target ≥ 0.9x)', 'package vs raw', 'sha256 64 B',
    'svc/kernels (package)', 'raw exports'],
  ['package vs raw exports, SHA-256 8 KiB (target ≥ 0.9x)', 'package vs raw', 'sha256 8 KiB',
    'svc/kernels (package)', 'raw exports'],
];

const rowKey = (r: Row) => `${r.group}|${r.case}|${r.impl}`;
const fmt = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));

function childRun(): Promise<Row[]> {
  const self = fileURLToPath(import.meta.url);
  const argv = ['--import', 'tsx', '--no-liftoff', self, '--child', '--ms', String(MS)];
  if (args.sizes) argv.push('--sizes', args.sizes);
  return new Promise<Row[]>((ok, fail) => {
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    child.stdout.on('data', (d) => { buf += d; });
    child.on('exit', (code) => {
      if (code === 0) ok(JSON.parse(buf) as Row[]);
      else fail(new Error(`bench child exited ${code}`));
    });
  });
}

function table(run: KernelRun, saved?: KernelRun): string {
  const old = new Map((saved?.rows ?? []).map((r) => [rowKey(r), r.value]));
  const head = ['group', 'case', 'implementation', 'median', 'unit', `per-process (${PROCS})`];
  const lines = [saved ? [...head, 'vs saved'] : head];
  for (const r of run.rows) {
    const cells = [r.group, r.case, r.impl + (r.anchor ? ` [${r.anchor}]` : ''), fmt(r.value), r.unit,
      r.spread.map(fmt).join(' / ')];
    lines.push(saved ? [...cells, ratioCell(r.value, old.get(rowKey(r)))] : cells);
  }
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  const right = new Set([3, 6]);
  return lines.map((l) => l.map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
    .join('  ').trimEnd()).join('\n');
}

async function parent(): Promise<void> {
  const saved = args.compare ? readSaved<KernelRun>(args.compare, 'svc-kernel-bench') : undefined;
  const runs: Row[][] = [];
  for (let i = 0; i < PROCS; i++) {
    process.stderr.write(`bench: process ${i + 1}/${PROCS}…\n`);
    runs.push(await childRun());
  }
  const rows = runs[0]!.map((r, i) => ({
    ...r,
    value: median(runs.map((run) => run[i]!.value)),
    spread: runs.map((run) => Number(run[i]!.value.toFixed(2))),
  }));
  const find = (g: string, c: string, impl: string) => {
    return rows.find((r) => r.group === g && r.case === c && r.impl === impl);
  };
  const ratios = Object.fromEntries(TARGETS.map(([name, g, c, a, b]) => {
    const x = find(g, c, a), y = find(g, c, b);
    return [name, x && y ? x.value / y.value : null];
  }));
  const bvm = find('bvm', 'arithmetic loop', 'svc (ours, WASM)')!.value;
  let cpu = cpus()[0]?.model ?? 'unknown';
  try {
    cpu = execFileSync('sh', ['-c', "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], { encoding: 'utf8' }).trim()
      || cpu;
  } catch { /* not linux */ }
  const machine = {
    node: process.version, cpu, cores: cpus().length, memory_gib: Math.round(totalmem() / 2 ** 30),
    platform: `${process.platform} ${process.arch}`,
  };
  const run: KernelRun = {
    kind: 'svc-kernel-bench', when: new Date().toISOString(), machine, ms_per_row: MS, processes: PROCS, rows, ratios,
  };
  // with --json the table is for a human watching: stderr
  const print = (s: string) => (args.json ? process.stderr : process.stdout).write(`${s}\n`);
  print(`\nsvc kernel benchmark — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}; `
    + `median of ${PROCS} processes, ${MS} ms per row`);
  if (saved) print(`vs saved: new / old against ${args.compare} (${saved.when})`);
  print(`\n${table(run, saved)}\n`);
  const ratioText = (v: number | null) => (v === null ? 'n/a (row not run)' : `${v.toFixed(2)}x`);
  const summary = Object.entries(ratios).map(([n, v]) => `${n}: ${ratioText(v)}`);
  print([...summary, `BVM arithmetic loop: ${bvm.toFixed(0)} M steps/s (target ≥ 400)`].join('\n'));
  const file = writeRun('kernels', run, args.out, args.json === true);
  // the default place also keeps the newest run as kernels-latest.json, for --compare
  if (!args.out) copyFileSync(file, join(dirname(file), 'kernels-latest.json'));
  print(`\nwritten: ${file}`);
}

if (args.child) process.stdout.write(JSON.stringify(await suite()));
else await parent();
