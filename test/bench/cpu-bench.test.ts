// The CPU bench runs (npm run bench:cpu, docs/performance.md): its quick form against a git ref
// completes, prints its table, writes the JSON with a row per case and server, compares with a saved
// run, and removes the ref's worktree; its ladder's quick form measures every step, each answering a free
// quote; bad options are usage errors. Never checks a number.
import test from 'ava';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CpuRow, Wall } from '../../bench/cpu.ts';
import type { LadderRun } from '../../bench/service/ladder-bench.ts';
import { ANCHOR_STEP, APP_STEPS, SVCD_STEP } from '../../bench/service/ladder-steps.ts';

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

test('bench:cpu: a ref naming nothing, a size list, a bad -c, --gateways, --flows or --rounds: exit 2', async (t) => {
  t.timeout(120_000);
  const none = await bench(['--quick', '--against', 'no-such-ref-anywhere']);
  t.is(none.code, 2);
  t.regex(none.err, /--against: "no-such-ref-anywhere" names no commit/);
  t.is((await bench(['--sizes', '64'])).code, 2);
  t.is((await bench(['-c', '0'])).code, 2);
  t.is((await bench(['--gateways', '-1'])).code, 2);
  t.is((await bench(['--flows', '0'])).code, 2);
  const ladder = await bench(['--ladder', '--against', 'HEAD']);
  t.is(ladder.code, 2);
  t.regex(ladder.err, /--ladder measures this tree's free quotes: not with --against or --flows/);
  t.is((await bench(['--ladder', '--rounds', '0'])).code, 2);
  t.is((await bench(['--rounds', '3'])).code, 2, '--rounds is the ladder\'s');
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

test.serial('`npm run bench:cpu -- --ladder --quick` measures every step, each checked first', async (t) => {
  t.timeout(300_000);
  t.true(doc.includes('npm run bench:cpu -- --ladder --quick'), 'docs/performance.md gives this command');
  const r = await bench(['--ladder', '--quick']);
  t.is(r.code, 0, r.err);
  t.regex(r.out, /#\s+step\s+µs\/req\s+±\s+main\s+Δ prev\s+Δ ±\s+Δ is/);
  t.regex(r.out, /1 round\(s\), one round: no noise figure/);
  const file = /^written: (.+)$/m.exec(r.out)?.[1] ?? '';
  t.true(file.startsWith(join(results, 'cpu-ladder-')), file);
  const run = JSON.parse(readFileSync(file, 'utf8')) as LadderRun;
  t.is(run.kind, 'svc-cpu-ladder');
  t.like(run.settings, { c: 32, gateways: 0, min_rounds: 1, max_rounds: 1, retries: 0 });
  // a sample a step: the anchor, the app's steps and svcd
  const samples = 2 + APP_STEPS.length;
  const other = 'other work on the machine: 0 sample\\(s\\) taken again, 0 round\\(s\\) discarded';
  t.regex(r.out, new RegExp(`${other}, \\d+ of ${samples} `));
  t.is(run.rounds, 1);
  t.is(run.discarded, 0, '--quick keeps its one round whatever else runs');
  t.is(run.orders.length, 1);
  t.is(run.loadavg.length, 1);
  const keys = [ANCHOR_STEP, ...APP_STEPS, SVCD_STEP].map((s) => s.key);
  t.deepEqual(run.rows.map((row) => row.key), keys);
  t.deepEqual([...run.orders[0]!].sort((a, b) => a - b), keys.map((_, i) => i), 'each step measured once a round');
  for (const [i, row] of run.rows.entries()) {
    t.is(row.step, i);
    t.true(row.name.length > 0 && row.adds.length > 0, row.key);
    t.is(row.samples.length, 1, row.key);
    t.is(row.foreign.length, 1, `${row.key}: other work on the machine, per sample`);
    t.is(row.retried, 0, `${row.key}: --quick takes no sample again`);
    t.true(Number.isFinite(row.us) && row.us > 0 && row.main_us > 0 && row.main_us <= row.us, row.key);
    t.is(row.noise, null, `${row.key}: one round has no noise figure`);
    t.is(row.delta === null, i === 0, row.key);
    t.is(row.settled, null, row.key);
    // every step answers the free quote as the anchor does (the bench checks the values; here, the shape)
    t.is(row.check.status, 200, row.key);
    for (const f of run.rows[0]!.check.fields) t.true(row.check.fields.includes(f), `${row.key}: ${f}`);
  }
  // the layers show in the answers' headers from their step on: the request id, the rate limit, CORS
  const has = (key: string, header: string) => run.rows.find((row) => row.key === key)!.check.headers.includes(header);
  t.false(has('http-server', 'x-request-id'));
  t.true(has('request-id', 'x-request-id'));
  t.false(has('request-id', 'ratelimit'));
  t.true(has('rate-limit', 'ratelimit'));
  t.false(has('rate-limit', 'access-control-allow-origin'));
  t.true(has('drain-cors', 'access-control-allow-origin'));
  t.true(has('svcd', 'access-control-allow-origin') && has('svcd', 'ratelimit') && has('svcd', 'x-request-id'));
});
