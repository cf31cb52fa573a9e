// `npm run bench:service -- --x402 --quick` (docs/performance.md "x402 beside the prepaid flow"): anvil with the
// USDC port, svcd with x402 on, the prepaid and the x402 GET_PULSE flows interleaved at c = 1 and 4, then the
// money and the audit. Checks that it completes, prints both rows, their ratio's anchor and the money and audit
// lines, and writes the JSON. Never checks a number: speed is the bench's output, not a test.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROW_KEYS, type Run } from '../../bench/service/report.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const results = mkdtempSync(join(tmpdir(), 'svc-bench-x402-'));
test.after.always(() => rmSync(results, { recursive: true, force: true }));

test('`npm run bench:service -- --x402 --quick`: prepaid and x402 rows, the money and the audit', async (t) => {
  t.timeout(300_000);
  const doc = readFileSync(join(ROOT, 'docs/performance.md'), 'utf8');
  t.true(doc.includes('npm run bench:service -- --x402 --quick'), 'docs/performance.md gives this command');
  const r = await new Promise<{ code: number; out: string; err: string }>((resolve) => {
    const opts = { cwd: ROOT, env: { ...process.env, BENCH_RESULTS_DIR: results }, maxBuffer: 16 << 20 };
    execFile('npm', ['run', 'bench:service', '--', '--x402', '--quick'], opts, (e, out, err) => {
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out, err });
    });
  });
  // exit 0: the money and the audit were right (the bench exits 1 otherwise)
  t.is(r.code, 0, `${r.out}\n${r.err}`);
  for (const c of [1, 4]) {
    t.regex(r.out, new RegExp(`x402 node on anvil\\s+prepaid \\(token\\)\\s+${c}\\s`), `prepaid row, c = ${c}`);
    // the ratio column ("0.20x") and the row it is taken against
    const x402Row = new RegExp(`anvil\\s+x402 \\(PAYMENT-SIGNATURE\\)\\s+${c}\\s.*\\dx\\s+prepaid \\(token\\)`);
    t.regex(r.out, x402Row, `x402 row with its ratio to the prepaid one, c = ${c}`);
    t.regex(r.out, new RegExp(`^c=${c} x402 flow, mean ms: .*paid_execute .*settlement`, 'm'));
  }
  t.regex(r.out, /^money: ok: payTo gained \d+ token base units; the \d+ x402 flows answered 200 paid \d+$/m);
  t.regex(r.out, /^audit: clean \(svc-admin --json audit\); x402 payments: \[\{"state":"executed"/m);
  const saved = /^written: (.+)$/m.exec(r.out)?.[1] ?? '';
  t.true(saved.startsWith(results), r.out);
  const run = JSON.parse(readFileSync(saved, 'utf8')) as Run;
  t.is(run.settings.x402, true);
  t.deepEqual(run.rows.map((row) => [row.server, row.c, row.anchor]), [
    ['prepaid (token)', 1, null],
    ['x402 (PAYMENT-SIGNATURE)', 1, 'prepaid (token)'],
    ['prepaid (token)', 4, null],
    ['x402 (PAYMENT-SIGNATURE)', 4, 'prepaid (token)'],
  ]);
  for (const row of run.rows) t.deepEqual(Object.keys(row).sort(), [...ROW_KEYS].sort());
  // every flow's final answer was checked: a flow that did not end in a 200 would be counted here
  t.deepEqual(run.rows.map((row) => row.errors + row.non2xx), [0, 0, 0, 0]);
  const check = (run.details.x402 as { check: Record<string, unknown> }).check;
  t.like(check, { money_ok: true, audit_clean: true });
  t.is(check.pay_to_gain, check.x402_paid);
  // the saved run prints again, the money and audit lines with it
  const again = await new Promise<string>((resolve) => {
    execFile('npm', ['run', 'bench:service', '--', '--input', saved], { cwd: ROOT }, (_e, out) => resolve(out));
  });
  t.regex(again, /^money: ok: /m);
});
