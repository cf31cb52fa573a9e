// Every ```sh block of README.md and docs/*.md is run by a test (every command a user is told
// to paste is run by a test). The table below names, for each block, the test that runs it: either the
// whole block, extracted from the doc by the test itself (so it runs whatever the doc says), or each of
// its commands, by a test that carries the command's text (and checks the doc still gives it). A block
// without a row fails, so does a row whose block is gone, a command the row does not list, and a test
// that no longer contains the text the row says it runs. Something that cannot run in the suite (a
// full benchmark, a real chain) belongs in a ```text block or prose, saying why; a shell block under
// another name, or a bare fence that opens with a command, fails (it would escape the table). docs/testing.md
// carries the same table ("Docs that run"); this test fails when the two differ.
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { allShBlocks, docFiles, fencesOf, ROOT, type ShBlock } from './blocks.ts';

/** A test file (path from the repository root) and the text it must contain. */
interface Runner { test: string; contains: string | string[] }

interface Row {
  file: string;
  /** the block: a prefix of its first line, or its heading (`## …`) */
  block: string;
  /** a test that extracts the block from the doc and runs all of it */
  whole?: Runner;
  /** else each command of the block (as blocks.ts splits it) → the tests that run it */
  lines?: Record<string, Runner[]>;
  /** how it is run, for docs/testing.md */
  how: string;
}

const TOUR = 'test/docs/readme-tour.test.ts';
const OPS = 'test/docs/operations-blocks.test.ts';
const KBENCH = 'test/bench/kernels-bench.test.ts';
const SBENCH = 'test/bench/service-bench.test.ts';
const CBENCH = 'test/bench/cpu-bench.test.ts';
const KIT = 'test/kit/package.test.ts';
const UNMATCHED = 'test/watchers/unmatched.test.ts';
const WATCHER_TOUR = 'test/docs/watcher-tour.test.ts';
const CLUSTER = 'test/cluster/cluster-script.test.ts';
const CERTS = 'docBlock(\'docs/scale-out.md\', \'node src/bin/svcd.mjs cluster-cert\')';

const by = (test: string, ...contains: string[]): Runner => ({ test, contains });
const INPUT_COMPARE = 'npm run bench:service -- --input bench/baselines/service-2026-11-27-f6eae1e.json'
  + ' --compare bench/baselines/service-2026-11-27-3cbcedf.json';
// the service bench test carries that command in two string literals (lines ≤ 120)
const inputCompare = by(SBENCH, 'npm run bench:service -- --input bench/baselines/service-2026-11-27-f6eae1e.json\'',
  '\' --compare bench/baselines/service-2026-11-27-3cbcedf.json\'');
const helps = by(KBENCH, '[\'bench:kernels\', \'bench:service\']', 'npm run ${script} -- --help');
const K_JSON = 'npm run -s bench:kernels -- --quick --sizes 64,8KiB --json --out /tmp/k.json';
const K_COMPARE = 'npm run bench:kernels -- --quick --sizes 64 --compare /tmp/k.json';
const ROTATE = 'node src/bin/svc-admin.mjs --data-dir /srv/svc/data rotate-node-key';
const DRILL = 'SHA=$(node src/bin/svc-admin.mjs --data-dir /srv/svc/data backup /srv/backups/svc-2026-05-01';
const SETTLE = 'node src/bin/svc-admin.mjs settle-invoice "$INVOICE" --reference "$TX"';

export const ROWS: Row[] = [
  {
    file: 'README.md', block: '## Quick start',
    lines: {
      'npm install && SVC_PAYMENTS=local npm start': [by(TOUR, 'scripts.start', 'quickEnv'), by('.ci/run', 'npm ci')],
      'npm test': [by('.ci/run', 'npm test')],
    },
    how: 'svcd started by package.json\'s start script on a copy of the tree; the install (as `npm ci`) and '
      + '`npm test` by CI (`.ci/run`)',
  },
  {
    file: 'README.md', block: '## Try it over HTTP', whole: by(TOUR, 'shBlocks(README, \'## Try it over HTTP\')'),
    how: 'the whole block in bash, `localhost:8080` rewritten to the test\'s svcd',
  },
  {
    file: 'README.md', block: 'svc() { node src/bin/svc.mjs',
    whole: by(TOUR, 'shBlocks(README, \'## Try it with the CLI\')'),
    how: 'with the next block, in bash on a pseudo-terminal (`script`) after the HTTP tour, `127.0.0.1:9443` '
      + 'rewritten; the test answers login\'s question once it has shown svcd\'s pin',
  },
  {
    file: 'README.md', block: 'admin() { node src/bin/svc-admin.mjs',
    whole: by(TOUR, 'shBlocks(README, \'## Try it with the CLI\')'),
    how: 'after the block before it, in the same bash',
  },
  {
    file: 'README.md', block: 'export SVC_WATCH_USDC_BASE_RPC=', whole: by(WATCHER_TOUR, 'shBlocks(README, HEADING)'),
    how: 'the first shell\'s block in bash against anvil: its RPC URL, token and address for the placeholders',
  },
  {
    file: 'README.md', block: 'BASE_RPC=', whole: by(WATCHER_TOUR, 'shBlocks(README, HEADING)'),
    how: 'the whole block in bash, the reader\'s own values (RPC URL, token, payer key) from anvil; no svc-admin',
  },
  {
    file: 'docs/bench.md', block: 'npm run bench:kernels -- --help',
    lines: {
      'npm run bench:kernels -- --help': [helps],
      'npm run bench:service -- --help': [helps],
      [K_JSON]: [by(KBENCH, K_JSON)],
      [K_COMPARE]: [by(KBENCH, K_COMPARE)],
    },
    how: 'each command with its arguments as written, `/tmp/k.json` in a temp dir',
  },
  {
    file: 'docs/embedding.md', block: 'npm run pack:kit ',
    lines: {
      'npm run pack:kit': [by(KIT, '[\'run\', \'--silent\', \'pack:kit\', \'--\', \'--out\', dir]')],
      'npm install ./svc-kit-1.0.5.tgz': [by(KIT, 'npm install ./${tgz}')],
    },
    how: '`npm run pack:kit` into a temp dir, the tarball installed into an empty project; the doc\'s tarball '
      + 'name checked',
  },
  {
    file: 'docs/operations.md', block: ROTATE, whole: by(OPS, `'${ROTATE}'`),
    how: 'the whole block in bash, `/srv/…` in a temp dir',
  },
  {
    file: 'docs/operations.md', block: DRILL, whole: by(OPS, `'${DRILL}'`),
    how: 'backup and restore in bash; the foreground `svcd start` in the background on ephemeral ports',
  },
  {
    file: 'docs/operations.md', block: 'export SVC_EDGE_PIN=', whole: by(OPS, '\'export SVC_EDGE_PIN=\''),
    how: 'the whole block in bash against the restored node (`SVC_EDGE` names its port)',
  },
  {
    file: 'docs/operations.md', block: SETTLE, whole: by(OPS, `'${SETTLE}'`),
    how: 'the whole block in bash; the variables from real invoices (one expired unpaid) and a real machine',
  },
  {
    file: 'docs/performance.md', block: 'npm run bench:service -- --quick',
    lines: {
      'npm run bench:service -- --quick': [by(SBENCH, '\'npm run bench:service -- --quick\'')],
      [INPUT_COMPARE]: [inputCompare],
    },
    how: 'each command as written (results into a temp dir)',
  },
  {
    file: 'docs/performance.md', block: 'npm run bench:cpu -- --quick --against HEAD',
    lines: {
      'npm run bench:cpu -- --quick --against HEAD': [by(CBENCH, '\'npm run bench:cpu -- --quick --against HEAD\'')],
    },
    how: 'as written (results into a temp dir); the ref\'s worktree is gone afterwards',
  },
  {
    file: 'docs/performance.md', block: 'npm run bench:cpu -- --ladder --quick',
    lines: {
      'npm run bench:cpu -- --ladder --quick': [
        by(CBENCH, '\'npm run bench:cpu -- --ladder --quick\'', 'bench([\'--ladder\', \'--quick\'])'),
      ],
    },
    how: 'as written (results into a temp dir); every step\'s answer checked, the run\'s JSON read',
  },
  {
    file: 'docs/scale-out.md', block: 'npm run cluster -- --hosts',
    lines: {
      'npm run cluster -- --hosts': [by(CLUSTER, 'runScript(t, \'npm run cluster -- --hosts\')')],
    },
    how: 'as written, in bash; a paid flow through the HAProxy it prints, then Ctrl-C; the namespaces are gone',
  },
  {
    file: 'docs/scale-out.md', block: 'npm run cluster',
    lines: { 'npm run cluster': [by(CLUSTER, 'runScript(t, \'npm run cluster\', LIMITS)')] },
    how: 'as written, in bash; its printed addresses used for a paid flow across both gateways, then Ctrl-C '
      + '(SIGINT to its process group)',
  },
  {
    file: 'docs/scale-out.md', block: 'node src/bin/svcd.mjs cluster-cert',
    whole: by('test/cluster/backend-tls.test.ts', CERTS),
    how: 'the whole block in bash, the CA dir rewritten to a temp dir; `openssl verify` checks every member',
  },
  {
    file: 'docs/settlement.md', block: 'svc-admin unmatched',
    lines: {
      'svc-admin unmatched': [by(UNMATCHED, '[\'--json\', \'unmatched\']', '[\'unmatched\', \'--reason\'')],
      'svc-admin unmatched --rail USDC_BASE --reason invoice_expired': [
        by(UNMATCHED, '\'unmatched\', \'--rail\', \'USDC_BASE\', \'--reason\', \'invoice_expired\''),
      ],
      'svc-admin unmatched --state dismissed': [by(UNMATCHED, '\'unmatched\', \'--state\', \'dismissed\'')],
      'svc-admin claim "$DEPOSIT" "$INVOICE"': [by(UNMATCHED, '\'claim\', dep.deposit_id, under.invoice_id')],
      'svc-admin dismiss "$DEPOSIT" --outcome refunded --note "not ours: sent back" --refund-reference "$REFUND_TX"': [
        by(UNMATCHED, '\'dismiss\', lost.deposit_id, \'--outcome\', \'refunded\''),
      ],
    },
    how: 'svc-admin (with `--json`) on deposits a local anvil chain made: DEPOSIT and INVOICE are real ids',
  },
];

/** A row names a block by its heading or a prefix of its first line; of several prefixes, the longest names it. */
const prefixOf = (r: Row, b: ShBlock) => r.file === b.file && b.first.startsWith(r.block);
const matches = (r: Row, b: ShBlock) => r.file === b.file && (b.heading === r.block
  || (prefixOf(r, b) && !ROWS.some((o) => o.block.length > r.block.length && prefixOf(o, b))));
const source = (f: string) => readFileSync(join(ROOT, f), 'utf8');

test('every ```sh block in README.md and docs/ has a row naming the test that runs it', (t) => {
  const blocks = allShBlocks();
  t.true(blocks.length >= 12, `${blocks.length} sh blocks found`);
  for (const b of blocks) {
    const rows = ROWS.filter((r) => matches(r, b));
    t.is(rows.length, 1, `${b.file}:${b.line} (${b.first.slice(0, 60)}) has ${rows.length} rows: add one to ROWS`);
  }
  for (const r of ROWS) {
    const n = blocks.filter((b) => matches(r, b)).length;
    t.is(n, 1, `the row ${r.file} "${r.block}" names ${n} blocks`);
  }
});

test('each row\'s tests exist and carry the block or each command they run', (t) => {
  const blocks = allShBlocks();
  const check = (where: string, run: Runner) => {
    t.true(existsSync(join(ROOT, run.test)), `${where}: ${run.test} exists`);
    const text = source(run.test);
    for (const c of [run.contains].flat()) {
      t.true(text.includes(c), `${where}: ${run.test} contains ${JSON.stringify(c)}`);
    }
  };
  for (const r of ROWS) {
    const b = blocks.find((x) => matches(r, x));
    if (!b) continue; // the first test names it
    t.true(!!r.whole !== !!r.lines, `${r.file} "${r.block}": whole or lines, one of them`);
    if (r.whole) check(`${r.file} "${r.block}"`, r.whole);
    if (r.lines) {
      t.deepEqual(Object.keys(r.lines), b.commands, `${r.file}:${b.line}: the row lists each command of the block`);
      for (const [cmd, runs] of Object.entries(r.lines)) {
        t.true(runs.length > 0, cmd);
        for (const run of runs) check(cmd, run);
      }
    }
  }
});

test('no command block slips past as another language or none: sh (with a row) or text', (t) => {
  // a shell block under another name, or a bare fence that opens with a command, would escape the table
  const shell = /^(bash|shell|console|zsh|shell-session)$/;
  const command = /^\$? ?(npm|npx|node|svc|svc-admin|svcd|curl|deno|bun|export|openssl|git)\b/;
  for (const f of docFiles().flatMap(fencesOf)) {
    const hidden = shell.test(f.lang) || (f.lang === '' && command.test(f.first));
    t.false(hidden, `${f.file}:${f.line} (${f.lang || 'no language'}: ${f.first.slice(0, 50)}): use sh or text`);
  }
});

/** The table docs/testing.md carries. */
export function docTable(): string {
  const blocks = allShBlocks();
  const rows = ROWS.map((r) => {
    const b = blocks.find((x) => matches(r, x));
    const tests = [...new Set([r.whole ?? [], ...Object.values(r.lines ?? {})].flat().map((x) => x.test))];
    const code = (c: string) => `\`${c.replaceAll('|', '\\|')}\``;
    const cmds = b?.commands ?? [];
    const what = r.whole ? `all ${cmds.length}, from ${code(cmds[0] ?? '')}` : cmds.map(code).join('<br>');
    const where = `\`${r.file}\` ${b?.heading.replace(/^#+ /, '§') ?? '?'}`;
    return `| ${where} | ${what} | ${tests.map((x) => `\`${x}\``).join(', ')} | ${r.how} |`;
  });
  return ['| block | commands | run by | how |', '|---|---|---|---|', ...rows].join('\n');
}

test('docs/testing.md carries this table', (t) => {
  const table = docTable();
  t.true(source('docs/testing.md').includes(table), `docs/testing.md "Docs that run" should read:\n${table}`);
});
