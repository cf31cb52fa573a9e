// The start-up bench (npm run bench:startup, docs/bench.md): its quick form on a small ledger runs, prints
// its table and writes the JSON with both medians and their ratio; a bad option is a usage error. Never
// checks a number.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const results = mkdtempSync(join(tmpdir(), 'svc-startup-bench-'));
test.after.always(() => rmSync(results, { recursive: true, force: true }));

function bench(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const opts = { cwd: ROOT, env: { ...process.env, BENCH_RESULTS_DIR: results }, maxBuffer: 16 << 20 };
    execFile('npm', ['run', '-s', 'bench:startup', '--', ...args], opts, (e, out, err) => {
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out, err });
    });
  });
}

test('`npm run bench:startup -- --quick --flows 2000 --json`: both rows, medians and their ratio', async (t) => {
  t.timeout(300_000);
  const r = await bench(['--quick', '--flows', '2000', '--json']);
  t.is(r.code, 0, r.err);
  t.regex(r.err, /fresh data dir +\d+ ms/);
  t.regex(r.err, /2000 +flows ledger +\d+ ms +[\d.]+x fresh/);
  const run = JSON.parse(r.out) as { flows: number; fresh_ms: { median: number }; big_ms: { median: number };
    big_over_fresh: number; first_start_big_ms: number };
  t.is(run.flows, 2000);
  t.true(run.fresh_ms.median > 0 && run.big_ms.median > 0 && run.first_start_big_ms > 0);
  t.is(run.big_over_fresh, Number((run.big_ms.median / run.fresh_ms.median).toFixed(3)));
});

test('bench:startup: a bad --flows or an unknown flag exits 2 with the usage', async (t) => {
  for (const args of [['--flows', '0'], ['--nope']]) {
    const r = await bench(args);
    t.is(r.code, 2, args.join(' '));
    t.regex(r.err, /Usage: npm run bench:startup/);
  }
});
