// The CPU bench runs (npm run bench:cpu, docs/performance.md): its quick form against a git ref
// completes, prints its table, writes the JSON with a row per case and server, compares with a saved
// run, and removes the ref's worktree; bad options are usage errors. Never checks a number.
import test from 'ava';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CpuRow, Wall } from '../../bench/cpu.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const doc = readFileSync(join(ROOT, 'docs/performance.md'), 'utf8');
const results = mkdtempSync(join(tmpdir(), 'svc-cpu-bench-'));
test.after.always(() => rmSync(results, { recursive: true, force: true }));

function bench(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const opts = { cwd: ROOT, env: { ...process.env, BENCH_RESULTS_DIR: results }, maxBuffer: 16 << 20 };
    execFile('npm', ['run', 'bench:cpu', '--', ...args], opts, (e, out, err) => {
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out, err });
    });
  });
}

const worktrees = () => execFileSync('git', ['worktree', 'list'], { cwd: ROOT, encoding: 'utf8' });

test.serial('`npm run bench:cpu -- --quick --against HEAD` measures both trees and cleans up', async (t) => {
  t.timeout(300_000);
  t.true(doc.includes('npm run bench:cpu -- --quick --against HEAD'), 'docs/performance.md gives this command');
  const r = await bench(['--quick', '--against', 'HEAD']);
  t.is(r.code, 0, r.err);
  t.regex(r.out, /case\s+server\s+unit\s+median\s+main thr\s+load gen\s+vs anchor\s+vs ref\s+samples/);
  const file = /^written: (.+)$/m.exec(r.out)?.[1] ?? '';
  t.true(file.startsWith(results), file);
  const run = JSON.parse(readFileSync(file, 'utf8')) as { kind: string; rows: CpuRow[] };
  t.is(run.kind, 'svc-cpu-bench');
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  t.deepEqual(run.rows.map((row) => `${row.case} / ${row.server}`), [
    'free quote / koa+router+ajv', 'free quote / svcd', `free quote / svcd@${head}`,
    'paid GET_PULSE flow / koa 3-route', 'paid GET_PULSE flow / svcd', `paid GET_PULSE flow / svcd@${head}`,
  ]);
  for (const row of run.rows) {
    t.true(row.samples.length >= 1 && row.samples.every((x) => Number.isFinite(x) && x >= 0), row.server);
    t.is(row.vs_anchor === null, row.server.startsWith('koa'), row.server);
    t.is(row.vs_ref !== null, row.server === 'svcd', row.server);
    // one process: its main thread is part of its CPU, and does most of the work
    t.true(row.main_us > 0 && row.main_us <= row.us, `${row.server}: ${row.main_us} of ${row.us} µs`);
    t.true(row.load_us > 0, `${row.server}: the load generator's ${row.load_us} µs`);
  }
  t.false(worktrees().includes('svc-bench-ref-'), 'the ref\'s worktree is removed');
  const again = await bench(['--quick', '--compare', file]);
  t.is(again.code, 0, again.err);
  t.regex(again.out, /vs saved/);
});

test('bench:cpu: a ref naming nothing, a size list, a bad -c, --gateways or --flows: exit 2', async (t) => {
  t.timeout(120_000);
  const none = await bench(['--quick', '--against', 'no-such-ref-anywhere']);
  t.is(none.code, 2);
  t.regex(none.err, /--against: "no-such-ref-anywhere" names no commit/);
  t.is((await bench(['--sizes', '64'])).code, 2);
  t.is((await bench(['-c', '0'])).code, 2);
  t.is((await bench(['--gateways', '-1'])).code, 2);
  t.is((await bench(['--flows', '0'])).code, 2);
  t.false(worktrees().includes('svc-bench-ref-'));
});

test.serial('`bench:cpu --quick --gateways 1` counts the core and its gateway worker', async (t) => {
  t.timeout(300_000);
  t.true(doc.includes('npm run bench:cpu -- --gateways 2 --against'), 'docs/performance.md gives the form');
  const r = await bench(['--quick', '--gateways', '1']);
  t.is(r.code, 0, r.err);
  t.regex(r.out, /1 svcd per tree, each with 1 gateway workers/);
  const file = /^written: (.+)$/m.exec(r.out)?.[1] ?? '';
  const run = JSON.parse(readFileSync(file, 'utf8')) as { settings: { gateways: number }; rows: CpuRow[] };
  t.is(run.settings.gateways, 1);
  // the worker's CPU is in the count: a free quote is made in the worker, the core does nothing for it
  const free = run.rows.find((row) => row.case === 'free quote' && row.server === 'svcd')!;
  t.true(free.us > 10, `${free.us} µs per free quote`);
  t.true(free.main_us < free.us / 2, `the core's main thread: ${free.main_us} of ${free.us} µs per free quote`);
  // this tree's svcd: where a paid flow's wall time goes, from its /metrics around the measured rounds
  t.regex(r.out, /paid GET_PULSE flow, where the wall time goes: svcd, \d+ flows at \d+ flows\/s, c = 32/);
  const wall = (JSON.parse(readFileSync(file, 'utf8')) as { wall: Wall[] }).wall;
  t.deepEqual(wall.map((w) => w.server), ['svcd']);
  const step = (name: string) => wall[0]!.steps.find((s) => s.step === name);
  // counts per flow are the flow's shape (a quote, an ACCEPT, an execution, two synced batches), not timings;
  // each of the 32 connections may leave one flow unfinished when a round ends, which adds its steps
  // (--quick: one svcd, one round, so at most 32 over its flows; a scrape missing the warm-up's would be 2x)
  const tail = 1 + 32 / wall[0]!.flows;
  for (const [name, per] of [
    ['HTTP POST /api/v1/quotes/:quote_id/accept', 1], ['HTTP POST /api/v1/executions/get-pulse', 1],
    ['core ACCEPT_QUOTE (backend)', 1], ['core GET_PULSE (backend)', 1], ['core QUOTE (gateway)', 1],
    ['ledger batch, queued and written (sync true)', 2],
  ] as const) {
    const s = step(name);
    t.truthy(s, `${name} in ${wall[0]!.steps.map((x) => x.step).join(', ')}`);
    t.true(s!.per_flow >= per * 0.99 && s!.per_flow <= per * tail, `${name}: ${s!.per_flow} per flow`);
    t.true(Number.isFinite(s!.mean_ms) && s!.mean_ms > 0, `${name}: ${s!.mean_ms} ms`);
  }
  t.true(step('ledger flush (sync true)')!.per_flow <= 2, 'group commit: at most a synced flush per batch');
});
