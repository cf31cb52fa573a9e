// Kernel benchmark (npm run bench:kernels): each row side by side with its anchor in the same run.
// The parent process runs the whole suite in several child processes (V8 sometimes leaves a
// process on baseline WASM code, DESIGN.md §11: one slow start must not hide or fake a result),
// takes the median per row, prints a table and writes bench/results/kernels-<time>.json.
// Usage: npm run bench:kernels [-- --procs N --ms MS --quick]
import { execFileSync, spawn } from 'node:child_process';
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { digest as asDigest } from '@chainsafe/as-sha256';
import { createSHA256 } from 'hash-wasm';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { xchacha20poly1305 as nobleX } from '@noble/ciphers/chacha.js';
import { KernelPool, Kernels } from '../src/kernels/index.ts';
import { assemble } from '../src/kernels/bvm-assembler.ts';
import { loadKernels } from '../src/kit/kernels.ts';
import { runReference } from '../test/reference/bvm-ref.ts';

interface Row { group: string; case: string; impl: string; value: number; unit: string; anchor?: string }

const { values: args } = parseArgs({
  options: { child: { type: 'boolean' }, procs: { type: 'string', default: '3' }, ms: { type: 'string', default: '400' }, quick: { type: 'boolean' } },
});
const MS = Number(args.quick ? 150 : args.ms);

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
  const deadline = performance.now() + MS / 4;
  await Promise.all(Array.from({ length: concurrency }, async () => { while (performance.now() < deadline) await fn(); }));
  let n = 0;
  const t0 = performance.now();
  const end = t0 + MS;
  await Promise.all(Array.from({ length: concurrency }, async () => { while (performance.now() < end) { await fn(); n++; } }));
  return (n * 1000) / (performance.now() - t0);
}

async function suite(): Promise<Row[]> {
  const rows: Row[] = [];
  const k = Kernels.create();
  const add = (group: string, c: string, impl: string, value: number, unit: string, anchor?: string) => rows.push({ group, case: c, impl, value, unit, anchor });
  const mbps = (bytes: number, ops: number) => (bytes * ops) / 1e6;

  // ---- SHA-256 ----
  const hw = await createSHA256();
  for (const [label, size] of [['64 B', 64], ['1 KiB', 1024], ['8 KiB', 8192], ['1 MiB', 1 << 20]] as const) {
    const data = new Uint8Array(randomBytes(size));
    add('sha256', label, 'svc (ours)', mbps(size, opsPerSec(() => k.sha256(data))), 'MB/s');
    add('sha256', label, 'hash-wasm', mbps(size, opsPerSec(() => { hw.init(); hw.update(data); return hw.digest('binary'); })), 'MB/s', 'anchor');
    add('sha256', label, '@chainsafe/as-sha256', mbps(size, opsPerSec(() => asDigest(data))), 'MB/s', 'anchor');
    add('sha256', label, '@noble/hashes', mbps(size, opsPerSec(() => nobleSha256(data))), 'MB/s', 'anchor');
    add('sha256', label, 'node:crypto', mbps(size, opsPerSec(() => createHash('sha256').update(data).digest())), 'MB/s', 'limit');
  }

  // ---- XChaCha20-Poly1305 ----
  const key = new Uint8Array(randomBytes(32)), nonce = new Uint8Array(randomBytes(24)), nonce12 = nonce.subarray(0, 12), aad = new Uint8Array(16);
  for (const [label, size] of [['1 KiB', 1024], ['8 KiB', 8192], ['1 MiB', 1 << 20]] as const) {
    const pt = new Uint8Array(randomBytes(size));
    const sealed = k.xchachaSeal(key, nonce, pt, aad);
    add('xchacha20poly1305 seal', label, 'svc (ours)', mbps(size, opsPerSec(() => k.xchachaSeal(key, nonce, pt, aad))), 'MB/s');
    add('xchacha20poly1305 seal', label, '@noble/ciphers', mbps(size, opsPerSec(() => nobleX(key, nonce, aad).encrypt(pt))), 'MB/s', 'anchor');
    add('xchacha20poly1305 seal', label, 'node:crypto chacha20-poly1305', mbps(size, opsPerSec(() => {
      const c = createCipheriv('chacha20-poly1305', key, nonce12, { authTagLength: 16 }); c.setAAD(aad, { plaintextLength: pt.length });
      return [c.update(pt), c.final(), c.getAuthTag()];
    })), 'MB/s', 'limit');
    const nobleSealed = nobleX(key, nonce, aad).encrypt(pt);
    const nodeC = createCipheriv('chacha20-poly1305', key, nonce12, { authTagLength: 16 }); nodeC.setAAD(aad, { plaintextLength: pt.length });
    const nodeCt = Buffer.concat([nodeC.update(pt), nodeC.final()]), nodeTag = nodeC.getAuthTag();
    add('xchacha20poly1305 open', label, 'svc (ours)', mbps(size, opsPerSec(() => k.xchachaOpen(key, nonce, sealed, aad))), 'MB/s');
    add('xchacha20poly1305 open', label, '@noble/ciphers', mbps(size, opsPerSec(() => nobleX(key, nonce, aad).decrypt(nobleSealed))), 'MB/s', 'anchor');
    add('xchacha20poly1305 open', label, 'node:crypto chacha20-poly1305', mbps(size, opsPerSec(() => {
      const d = createDecipheriv('chacha20-poly1305', key, nonce12, { authTagLength: 16 }); d.setAAD(aad, { plaintextLength: pt.length }); d.setAuthTag(nodeTag);
      return [d.update(nodeCt), d.final()];
    })), 'MB/s', 'limit');
  }

  // ---- pulse ----
  const seed = new Uint8Array(randomBytes(32)), ctx = new Uint8Array(randomBytes(48));
  add('pulse 65536-bit', 'single thread', 'svc (ours)', opsPerSec(() => k.pulseExpand(seed, ctx, 65536)), 'pulses/s');
  const pool = new KernelPool();
  await pool.run('sha256', [new Uint8Array(1)], { route: 'worker' });
  for (const c of [2, 4]) {
    add('pulse 65536-bit', `pool, ${c} callers`, 'svc (ours)', await opsPerSecAsync(() => pool.run('pulseExpand', [seed, ctx, 65536], { route: 'worker' }), c), 'pulses/s');
  }
  add('pulse 256-bit', 'single thread', 'svc (ours)', opsPerSec(() => k.pulseExpand(seed, ctx, 256)), 'pulses/s');

  // ---- BVM ----
  const arith = assemble('push 0\npush 1\nloop: dup\njz done\nswap\nover\nadd\nswap\npush8 1\nadd\njmp loop\ndone: halt').image;
  const memLoop = assemble('.memory 65536\npush 0\nloop: dup\ndup\nload32\npush8 1\nadd\nstore32\npush8 4\nadd\npush 0xfffc\nand\njmp loop').image;
  for (const [label, img] of [['arithmetic loop', arith], ['memory loop', memLoop]] as const) {
    const empty = new Uint8Array(0);
    const fuelW = 50_000_000, fuelR = 10_000_000;
    const w = opsPerSec(() => { const r = k.bvmRun(img, empty, { fuel: fuelW, maxOutput: 0 }); if (r.steps !== fuelW) throw new Error(r.status); }) * fuelW;
    const r = opsPerSec(() => { const x = runReference(img, empty, fuelR, 0); if (x.steps !== fuelR) throw new Error(x.status); }) * fuelR;
    add('bvm', label, 'svc (ours, WASM)', w / 1e6, 'M steps/s');
    add('bvm', label, 'TypeScript reference', r / 1e6, 'M steps/s', 'anchor');
  }

  // ---- the embedding package (svc/kernels) against the raw exports it wraps: target ≥ 0.9x ----
  const kit = await loadKernels();
  const raw = kit.raw;
  for (const [label, size] of [['64 B', 64], ['8 KiB', 8192]] as const) {
    const data = new Uint8Array(randomBytes(size));
    const inp = raw.alloc(size), out = raw.alloc(32);
    const viaPackage = mbps(size, opsPerSec(() => kit.sha256(data)));
    add('package vs raw', `sha256 ${label}`, 'svc/kernels (package)', viaPackage, 'MB/s');
    // one view, renewed only when memory grows — as the package keeps its own — so only the wrapping differs
    let mem = new Uint8Array(raw.memory.buffer);
    add('package vs raw', `sha256 ${label}`, 'raw exports', mbps(size, opsPerSec(() => {
      if (mem.buffer !== raw.memory.buffer) mem = new Uint8Array(raw.memory.buffer);
      mem.set(data, inp);
      raw.sha256_digest(inp, size, out);
      if (mem.buffer !== raw.memory.buffer) mem = new Uint8Array(raw.memory.buffer);
      return mem.slice(out, out + 32);
    })), 'MB/s', 'baseline');
    raw.free(inp); raw.free(out);
  }

  // ---- pool overhead ----
  const tiny = new Uint8Array(64);
  const inlineUs = 1e6 / opsPerSec(() => k.sha256(tiny));
  add('pool round trip (sha256 64 B)', 'inline call', 'svc (ours)', inlineUs, 'µs/job');
  for (const c of [1, 2, 4]) {
    const ops = await opsPerSecAsync(() => pool.run('sha256', [tiny], { route: 'worker' }), c);
    add('pool round trip (sha256 64 B)', `${c} caller${c > 1 ? 's' : ''}`, 'svc pool', (1e6 / ops) * c, 'µs/job latency');
    add('pool round trip (sha256 64 B)', `${c} caller${c > 1 ? 's' : ''}`, 'svc pool', ops, 'jobs/s');
  }
  // routing check: where does a worker start to pay for SHA-256?
  for (const size of [4096, 16384, 65536, 262144]) {
    const d = new Uint8Array(size);
    const inl = 1e6 / opsPerSec(() => k.sha256(d));
    const wrk = 1e6 / (await opsPerSecAsync(() => pool.run('sha256', [d], { route: 'worker' }), 1));
    add('routing (sha256, 1 caller)', `${size / 1024} KiB`, 'inline', inl, 'µs/job');
    add('routing (sha256, 1 caller)', `${size / 1024} KiB`, `worker (routed ${pool.routesInline('sha256', [d]) ? 'inline' : 'to worker'})`, wrk, 'µs/job');
  }
  await pool.close();
  return rows;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

async function parent(): Promise<void> {
  const procs = Number(args.quick ? 1 : args.procs);
  const runs: Row[][] = [];
  for (let i = 0; i < procs; i++) {
    process.stderr.write(`bench: process ${i + 1}/${procs}…\n`);
    const out = await new Promise<string>((ok, fail) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--no-liftoff', fileURLToPath(import.meta.url), '--child', '--ms', String(MS)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let buf = '';
      child.stdout.on('data', (d) => { buf += d; });
      child.on('exit', (code) => (code === 0 ? ok(buf) : fail(new Error(`bench child exited ${code}`))));
    });
    runs.push(JSON.parse(out) as Row[]);
  }
  const rows = runs[0]!.map((r, i) => ({ ...r, value: median(runs.map((run) => run[i]!.value)), spread: runs.map((run) => Number(run[i]!.value.toFixed(2))) }));
  const fmt = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
  const ratio = (group: string, c: string, a: string, b: string) => {
    const x = rows.find((r) => r.group === group && r.case === c && r.impl === a), y = rows.find((r) => r.group === group && r.case === c && r.impl === b);
    return x && y ? x.value / y.value : NaN;
  };
  const lines = [['group', 'case', 'implementation', 'median', 'unit', `per-process (${procs})`]];
  for (const r of rows) lines.push([r.group, r.case, r.impl + (r.anchor ? ` [${r.anchor}]` : ''), fmt(r.value), r.unit, r.spread.map(fmt).join(' / ')]);
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  const table = lines.map((l) => l.map((c, i) => (i === 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ')).join('\n');
  const targets = [
    ['SHA-256 8 KiB vs hash-wasm (target ≥ 1.0x)', ratio('sha256', '8 KiB', 'svc (ours)', 'hash-wasm')],
    ['SHA-256 1 MiB vs hash-wasm (target ≥ 1.0x)', ratio('sha256', '1 MiB', 'svc (ours)', 'hash-wasm')],
    ['SHA-256 8 KiB vs as-sha256', ratio('sha256', '8 KiB', 'svc (ours)', '@chainsafe/as-sha256')],
    ['XChaCha seal 8 KiB vs noble (target ≥ 2x)', ratio('xchacha20poly1305 seal', '8 KiB', 'svc (ours)', '@noble/ciphers')],
    ['XChaCha seal 1 MiB vs noble (target ≥ 2x)', ratio('xchacha20poly1305 seal', '1 MiB', 'svc (ours)', '@noble/ciphers')],
    ['XChaCha open 8 KiB vs noble (target ≥ 2x)', ratio('xchacha20poly1305 open', '8 KiB', 'svc (ours)', '@noble/ciphers')],
    ['XChaCha open 1 MiB vs noble (target ≥ 2x)', ratio('xchacha20poly1305 open', '1 MiB', 'svc (ours)', '@noble/ciphers')],
    ['BVM arithmetic vs TS reference (target ≥ 1.0x)', ratio('bvm', 'arithmetic loop', 'svc (ours, WASM)', 'TypeScript reference')],
    ['BVM memory vs TS reference', ratio('bvm', 'memory loop', 'svc (ours, WASM)', 'TypeScript reference')],
    ['package vs raw exports, SHA-256 64 B (target ≥ 0.9x)',
      ratio('package vs raw', 'sha256 64 B', 'svc/kernels (package)', 'raw exports')],
    ['package vs raw exports, SHA-256 8 KiB (target ≥ 0.9x)',
      ratio('package vs raw', 'sha256 8 KiB', 'svc/kernels (package)', 'raw exports')],
  ] as const;
  const bvmAbs = rows.find((r) => r.group === 'bvm' && r.case === 'arithmetic loop' && r.impl.startsWith('svc'))!.value;
  const summary = [...targets.map(([n, v]) => `${n}: ${v.toFixed(2)}x`), `BVM arithmetic loop: ${bvmAbs.toFixed(0)} M steps/s (target ≥ 400)`].join('\n');
  let cpu = cpus()[0]?.model ?? 'unknown';
  try { cpu = execFileSync('sh', ['-c', "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], { encoding: 'utf8' }).trim() || cpu; } catch { /* not linux */ }
  const machine = { node: process.version, cpu, cores: cpus().length, memory_gib: Math.round(totalmem() / 2 ** 30), platform: `${process.platform} ${process.arch}` };
  console.log(`\nsvc kernel benchmark — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}; median of ${procs} processes, ${MS} ms per row\n`);
  console.log(table);
  console.log(`\n${summary}\n`);
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const json = { when: new Date().toISOString(), machine, ms_per_row: MS, processes: procs, rows, ratios: Object.fromEntries(targets) };
  const file = `${dir}kernels-${json.when.replace(/[:.]/g, '-')}.json`;
  writeFileSync(file, JSON.stringify(json, null, 2));
  writeFileSync(`${dir}kernels-latest.json`, JSON.stringify(json, null, 2));
  console.log(`written: ${file}`);
}

if (args.child) process.stdout.write(JSON.stringify(await suite()));
else await parent();
