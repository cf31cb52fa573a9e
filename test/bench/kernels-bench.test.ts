// Bench usability (docs/bench.md): both benches answer --help (exit 0) and refuse an unknown
// flag (exit 2 with the usage); the kernel bench runs as docs/bench.md writes it (its --out file in a
// temp dir), with --json on stdout, --out, --sizes and --compare. Never checks a number: speed is the bench's output.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const doc = readFileSync(join(ROOT, 'docs/bench.md'), 'utf8');
const results = mkdtempSync(join(tmpdir(), 'svc-kbench-'));
test.after.always(() => rmSync(results, { recursive: true, force: true }));

/** `npm run -s <script> -- …args` from the repository root (-s: stdout is the bench's alone). */
function npmRun(script: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const opts = { cwd: ROOT, env: { ...process.env, BENCH_RESULTS_DIR: results }, maxBuffer: 16 << 20 };
    execFile('npm', ['run', '-s', script, '--', ...args], opts, (e, out, err) => {
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out, err });
    });
  });
}

for (const script of ['bench:kernels', 'bench:service']) {
  test(`${script} -- --help exits 0 with the usage; an unknown flag exits 2 with it`, async (t) => {
    t.true(doc.includes(`npm run ${script} -- --help`), 'docs/bench.md gives the command');
    const help = await npmRun(script, ['--help']);
    t.is(help.code, 0, help.err);
    t.regex(help.out, new RegExp(`^Usage: npm run ${script} -- \\[options\\]`));
    for (const flag of ['--quick', '--json', '--out FILE', '--sizes LIST', '--compare OLD.json']) {
      t.true(help.out.includes(flag), flag);
    }
    const bad = await npmRun(script, ['--bogus']);
    t.is(bad.code, 2);
    t.regex(bad.err, /Unknown option '--bogus'/);
    t.regex(bad.err, /Usage: /);
    const sizes = await npmRun(script, ['--sizes', 'lots']);
    t.is(sizes.code, 2);
    t.regex(sizes.err, /--sizes: "lots" is not a size/);
  });
}

test('bench:kernels: --json on stdout, --out, --sizes, then --compare against the saved run', async (t) => {
  t.timeout(300_000);
  // as docs/bench.md writes them, /tmp/k.json in a temp dir
  const cmd = 'npm run -s bench:kernels -- --quick --sizes 64,8KiB --json --out /tmp/k.json';
  t.true(doc.includes(cmd), 'docs/bench.md gives the command');
  const out = join(results, 'k.json');
  const a = await npmRun('bench:kernels', ['--quick', '--sizes', '64,8KiB', '--json', '--out', out]);
  t.is(a.code, 0, a.err);
  const run = JSON.parse(a.out) as { kind: string; rows: { group: string; case: string; anchor?: string }[] };
  t.deepEqual(JSON.parse(readFileSync(out, 'utf8')), run, '--out holds what --json printed');
  t.is(run.kind, 'svc-kernel-bench');
  const sha = run.rows.filter((r) => r.group === 'sha256').map((r) => r.case);
  t.deepEqual([...new Set(sha)], ['64 B', '8 KiB'], '--sizes picks the rows');
  t.true(run.rows.some((r) => r.anchor === 'anchor'), 'anchors run beside our rows');
  t.regex(a.err, /implementation\s+median/, 'the table went to stderr');
  t.regex(a.err, /SHA-256 1 MiB vs hash-wasm \(target ≥ 1\.0x\): n\/a \(row not run\)/);

  t.true(doc.includes('npm run bench:kernels -- --quick --sizes 64 --compare /tmp/k.json'), 'docs/bench.md');
  const b = await npmRun('bench:kernels', ['--quick', '--sizes', '64', '--compare', out]);
  t.is(b.code, 0, b.err);
  t.regex(b.out, /per-process \(1\)\s+vs saved/);
  t.regex(b.out, /^sha256\s+64 B\s+svc \(ours\).*\d\.\d\dx$/m, 'a ratio per row found in the saved run');
  const bad = await npmRun('bench:kernels', ['--compare', join(ROOT, 'package.json')]);
  t.is(bad.code, 2);
  t.regex(bad.err, /is not a svc-kernel-bench run/);
});
