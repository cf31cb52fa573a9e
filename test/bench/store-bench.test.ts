// `npm run bench:service -- --quick --store pg` (docs/scale-out.md "Performance"): the paid flow on the
// ledger's stores in one run — svcd on LevelDB, one node on PostgreSQL, two nodes behind two gateways, and
// the Koa + pg anchor app — completes, prints its table and writes the JSON with one row per store and the
// ratios' anchor (the PostgreSQL rows against the Koa + pg app). Never
// checks a number (speed is the bench's output), nor that the quick window finished a flow.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROW_KEYS, type Run } from '../../bench/service/report.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES } from '../support/postgres.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const results = mkdtempSync(join(tmpdir(), 'svc-bench-results-'));
test.after.always(() => rmSync(results, { recursive: true, force: true }));

testNeeding(test, '`npm run bench:service -- --quick --store pg`: a row per store, PostgreSQL against Koa + pg',
  POSTGRES,
  async (t) => {
    t.timeout(300_000);
    const doc = readFileSync(join(ROOT, 'docs/scale-out.md'), 'utf8');
    t.true(doc.includes('npm run bench:service -- --quick --store pg'), 'docs/scale-out.md gives this command');
    const r = await new Promise<{ code: number; out: string; err: string }>((resolve) => {
      const opts = { cwd: ROOT, env: { ...process.env, BENCH_RESULTS_DIR: results }, maxBuffer: 16 << 20 };
      execFile('npm', ['run', 'bench:service', '--', '--quick', '--store', 'pg'], opts, (e, out, err) => {
        resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out, err });
      });
    });
    t.is(r.code, 0, r.err);
    const saved = /^written: (.+)$/m.exec(r.out)?.[1] ?? '';
    t.true(saved.startsWith(results), r.out);
    const run = JSON.parse(readFileSync(saved, 'utf8')) as Run;
    t.is(run.settings.store, 'pg');
    t.deepEqual(run.rows.map((row) => [row.server, row.anchor]), [
      ['svcd LevelDB', null],
      ['koa 3-route on PostgreSQL', null],
      ['svcd PostgreSQL 1 node', 'koa 3-route on PostgreSQL'],
      ['svcd PostgreSQL 2 nodes', 'koa 3-route on PostgreSQL'],
    ]);
    for (const row of run.rows) {
      t.deepEqual(Object.keys(row).sort(), [...ROW_KEYS].sort());
      t.is(row.case, 'paid GET_PULSE flow, by store');
      t.deepEqual([row.errors, row.non2xx], [0, 0], `${row.server}: no failed request or flow`);
    }
  });
