// The service benchmark runs: the commands docs/performance.md gives, run as written (quick forms,
// results into a temp dir). Checks that it completes, prints its table headings and writes JSON
// with the documented row keys. Never checks a number: speed is the bench's output, not a test.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MEASURE_HEADINGS, ROW_KEYS, TABLE_HEADINGS, type Run } from '../../bench/service/report.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const doc = readFileSync(join(ROOT, 'docs/performance.md'), 'utf8');
const results = mkdtempSync(join(tmpdir(), 'svc-bench-results-'));
test.after.always(() => rmSync(results, { recursive: true, force: true }));

/** Runs `npm run bench:service -- …args` from the repository root. */
function bench(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const opts = { cwd: ROOT, env: { ...process.env, BENCH_RESULTS_DIR: results, ...env }, maxBuffer: 16 << 20 };
    execFile('npm', ['run', 'bench:service', '--', ...args], opts, (e, out, err) => {
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out, err });
    });
  });
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const headingsRe = (hs: readonly string[]) => new RegExp(hs.map(escape).join('\\s+'));

let saved = '';

test.serial('`npm run bench:service -- --quick` completes, prints the tables and writes the JSON', async (t) => {
  // six servers (one with two gateway workers), 2,000 expiring quotes: minutes on a loaded 2-core box
  t.timeout(480_000);
  t.true(doc.includes('npm run bench:service -- --quick'), 'docs/performance.md gives this command');
  const r = await bench(['--quick']);
  t.is(r.code, 0, r.err);
  t.regex(r.out, headingsRe(TABLE_HEADINGS));
  t.regex(r.out, headingsRe(MEASURE_HEADINGS));
  saved = /^written: (.+)$/m.exec(r.out)?.[1] ?? '';
  t.true(saved.startsWith(results), saved);
  const run = JSON.parse(readFileSync(saved, 'utf8')) as Run;
  t.is(run.kind, 'svc-service-bench');
  for (const k of ['cpus', 'cpu_model', 'node', 'commit']) t.not(run.machine[k], undefined, k);
  const servers = run.rows.map((row) => `${row.case} / ${row.server}`);
  t.deepEqual(servers, [
    'free quote / koa+router+ajv',
    'free quote / koa+router+ajv+put',
    'free quote / svcd',
    'free quote / koa+router+ajv ×2',
    'free quote / svcd K=2',
    'paid GET_PULSE flow / koa 3-route',
    'paid GET_PULSE flow / svcd',
    'paid GET_PULSE flow / svcd K=2',
  ]);
  for (const row of run.rows) t.deepEqual(Object.keys(row).sort(), [...ROW_KEYS].sort());
  const measures = run.measures.map((m) => m.name);
  for (const want of ['disk synced puts/s, 1 in flight', 'synced writes per free quote (svcd)',
    'bytes per expired free quote, after restart', 'bytes per expired free quote, after compaction']) {
    t.true(measures.includes(want), want);
  }
});

test.serial('`--input` with `--compare` prints a saved run against another, with the Δ columns', async (t) => {
  t.true(doc.includes('npm run bench:service -- --input '), 'docs/performance.md gives this command');
  t.truthy(saved, 'the quick run wrote a file');
  const r = await bench(['--input', saved, '--compare', saved]);
  t.is(r.code, 0, r.err);
  t.regex(r.out, headingsRe([...TABLE_HEADINGS, 'Δ rate', 'Δ p99']));
  t.regex(r.out, /\+0\.0%/);
  t.notRegex(r.out, /^written:/m);
  // --json: the run on stdout (the tables on stderr), as saved
  const j = await bench(['--input', saved, '--json']);
  t.is(j.code, 0, j.err);
  t.deepEqual(JSON.parse(j.out.slice(j.out.indexOf('{'))), JSON.parse(readFileSync(saved, 'utf8')));
  t.regex(j.err, headingsRe(TABLE_HEADINGS));
  // the oldest saved run docs/performance.md compares against still reads, row for row
  const baseline = 'bench/baselines/service-2026-11-23-a63223f.json';
  t.true(doc.includes(`npm run bench:service -- --compare ${baseline}`), 'docs/performance.md gives this command');
  const b = await bench(['--input', saved, '--compare', baseline]);
  t.is(b.code, 0, b.err);
  t.regex(b.out, new RegExp(`Δ: against ${escape(baseline)}`));
  const rows = b.out.slice(b.out.indexOf('case ')).split('\n\n')[0]!;
  // the free quote through K gateways, and its anchor in K workers, are newer than that run; every other row has
  // its counterpart
  const unmatched = rows.split('\n').filter((l) => /n\/a/.test(l)).map((l) => l.replace(/ {2,}/g, ' | '));
  t.deepEqual(unmatched.map((l) => l.split(' | ').slice(0, 2).join(' / ')),
    ['free quote / koa+router+ajv ×2', 'free quote / svcd K=2']);
});

test.serial('two saved runs as docs/performance.md prints them: the current against an earlier one', async (t) => {
  const cmd = 'npm run bench:service -- --input bench/baselines/service-2026-11-27-f6eae1e.json'
    + ' --compare bench/baselines/service-2026-11-27-3cbcedf.json';
  // the doc wraps the command with a `\` continuation, as a shell joins it
  t.true(doc.replace(/ *\\\n */g, ' ').includes(cmd), 'docs/performance.md gives this command');
  const r = await bench(cmd.split(' ').slice(4));
  t.is(r.code, 0, r.err);
  t.regex(r.out, headingsRe([...TABLE_HEADINGS, 'Δ rate', 'Δ p99']));
  t.regex(r.out, /Δ: against bench\/baselines\/service-2026-11-27-3cbcedf\.json/);
  t.notRegex(r.out, /^written:/m, 'printing saved runs measures nothing and writes nothing');
});

test.serial('`--profile DIR` writes a self-time summary of both paths', async (t) => {
  t.true(doc.includes('npm run bench:service -- --profile '), 'docs/performance.md gives this command');
  const dir = join(results, 'prof');
  const r = await bench(['--profile', dir], { BENCH_MS: '300' });
  t.is(r.code, 0, r.err);
  t.regex(r.out, /HTTP free quote, c = 32/);
  t.regex(r.out, /paid GET_PULSE flow, c = 32/);
  const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as Record<string, { top: unknown[] }>;
  t.true(summary.free!.top.length > 0);
  t.true(summary.paid!.top.length > 0);
});

test.serial('`--profile DIR --gateways K` profiles the primary and each gateway worker', async (t) => {
  t.true(doc.includes('--profile DIR --gateways 2'), 'docs/performance.md gives this command');
  const dir = join(results, 'prof-k');
  const r = await bench(['--profile', dir, '--gateways', '1'], { BENCH_MS: '300' });
  t.is(r.code, 0, r.err);
  t.regex(r.out, /HTTP free quote, c = 32, \d+ req\/s, main thread/);
  t.regex(r.out, /HTTP free quote, c = 32, \d+ req\/s, gateway worker \d+/);
  type Summary = Record<string, { top: unknown[]; processes: { who: string; top: unknown[] }[] }>;
  const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as Summary;
  for (const path of ['free', 'paid']) {
    t.deepEqual(summary[path]!.processes.map((p) => p.who.replace(/\d+$/, 'N')), ['main thread', 'gateway worker N']);
    // the worker answered the requests: its profile has samples
    t.true(summary[path]!.processes[1]!.top.length > 0);
  }
});
