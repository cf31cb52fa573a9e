// npm run mutation: StrykerJS over the modules that guard money, identity and proofs. Stryker's
// command runner runs ONE command for every mutant, so the modules are grouped with the fast, in-process
// test files that pin them (no svcd per mutant), and Stryker runs once per group with that group's `mutate`
// and ava command. Reports: reports/mutation/<group>/ (HTML and JSON), reports/mutation/summary.md (the
// per-module table docs/testing.md carries) and the same table on stdout.
//   npm run mutation                           every group (long: see docs/testing.md "Mutation testing")
//   npm run mutation -- --group line-codec     one group (names: --list)
//   npm run mutation -- --files src/protocol/line-codec.ts,src/core/ledger.ts   only these modules
//   npm run mutation -- --changed [REF]        only the modules changed against REF (default: main, else HEAD)
//   npm run mutation -- --list                 the groups, their modules and test files
//   npm run mutation -- --summary              the table again, from the reports of earlier runs
//   --dry-run (with any of the above)          what would run, without running it
//   --survivors (with any of the above)        only the lines where the group's last run left mutants
//                                              alive; the report is that run's, with those lines re-run
// Options: --concurrency N (Stryker's test runners at once; default 1: the machine is shared).
// The exit code is 1 when a module scores under its threshold (90%), 2 on a usage or Stryker error.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const THRESHOLD = 90;
const G = 'test/guards';

/**
 * Each group: the modules mutated and the test files ava runs for every mutant. Only tests that run in
 * process (core-fixture, the units): a mutant costs one ava run of these files.
 */
export const GROUPS = [
  { name: 'line-codec', mutate: ['src/protocol/line-codec.ts'],
    tests: [`${G}/codecs.test.ts`, 'test/protocol/line-codec.test.ts'] },
  { name: 'rate-limit', mutate: ['src/protocol/rate-limit.ts'], tests: [`${G}/rate-limit.test.ts`] },
  { name: 'canonical', mutate: ['src/protocol/canonical.ts', 'src/protocol/jcs.ts'],
    tests: ['test/protocol/canonical.test.ts', 'test/oracles/canonical.test.ts'] },
  { name: 'key-codec', mutate: ['src/store/key-codec.ts'], tests: [`${G}/codecs.test.ts`] },
  { name: 'validate', mutate: ['src/protocol/validate.ts'], tests: ['test/protocol/validate.test.ts'] },
  { name: 'receipts', mutate: ['src/core/receipts.ts', 'src/core/executors/verify-result.ts'],
    tests: [`${G}/proofs.test.ts`, `${G}/codecs.test.ts`] },
  { name: 'client-verify', mutate: ['src/client/verify.ts'], tests: [`${G}/proofs.test.ts`] },
  // the ledger on one process's store: everything but its shared-store (PostgreSQL, several nodes) lines
  { name: 'ledger', mutate: () => ledgerLines(false), tests: [`${G}/ledger.test.ts`] },
  // those lines, against two real nodes on a real PostgreSQL (a server per ava run: only for these few mutants)
  { name: 'ledger-shared', mutate: () => ledgerLines(true),
    tests: ['test/store/postgres.test.ts', '--match', '"two nodes, one machine*"'] },
  // the money guards share one file: --match keeps each module's runs to the tests about it
  { name: 'machines', mutate: ['src/core/machines.ts'],
    tests: [`${G}/money.test.ts`, '--match', '"machine guard*"', '--match', '"*FUND_ACCOUNT*"'] },
  { name: 'quote-token', mutate: ['src/core/quote-token.ts'],
    tests: [`${G}/money.test.ts`, '--match', '"quote guard*"'] },
  { name: 'quotes', mutate: ['src/core/quotes.ts'],
    tests: [
      `${G}/money.test.ts`, `${G}/quotes.test.ts`, '--match', '"quote guard*"', '--match', '"execution guard*"',
    ] },
  { name: 'invoices', mutate: ['src/core/invoices.ts'],
    tests: [`${G}/money.test.ts`, `${G}/invoices.test.ts`, '--match', '"invoice guard*"'] },
  { name: 'settlement',
    mutate: ['src/core/deposit-match.ts', 'src/core/payment-reference.ts', 'src/core/transfers.ts',
      'src/core/invoice-clients.ts'],
    tests: ['test/watchers/settlement-paths.test.ts', 'test/core/payment-reference.test.ts',
      'test/core/deposit-match.test.ts', 'test/core/transfers.test.ts', '--match', '"!*(PostgreSQL)"'] },
  { name: 'kit-verify', mutate: ['src/kit/verify.ts', 'src/kit/verify-log.ts', 'src/kit/verdict.ts'],
    tests: [`${G}/proofs.test.ts`, `${G}/kit-verify.test.ts`, 'test/kit/verify.test.ts', 'test/kit/fuzz.test.ts'] },
  // the executors' own verify path (VERIFY_RESULT's is in the receipts group)
  { name: 'bct', mutate: ['src/core/executors/bct.ts'], tests: [`${G}/bct.test.ts`] },
];

/**
 * Line ranges of src/core/ledger.ts (Stryker's `file:from-to`): those only another writer of a shared
 * store can fail (the methods withMachine, which runs an operation again on a conflict, and #follows, the
 * check that an account has not moved), or all the others.
 */
function ledgerLines(shared) {
  const file = 'src/core/ledger.ts';
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const marked = new Set();
  lines.forEach((l, i) => {
    if (/^ {2}(async )?(withMachine|#follows)[<(]/.test(l)) {
      for (let j = i; j < lines.length; j++) {
        marked.add(j + 1);
        if (lines[j] === '  }') break;
      }
    }
  });
  const ranges = [];
  for (let n = 1; n <= lines.length; n++) {
    if (marked.has(n) !== shared) continue;
    const last = ranges[ranges.length - 1];
    if (last && last[1] === n - 1) last[1] = n;
    else ranges.push([n, n]);
  }
  return ranges.map(([a, b]) => `${file}:${a}-${b}`);
}

/** A group's modules (without line ranges). */
const modulesOf = (g) => [...new Set(mutateOf(g).map((m) => m.replace(/:\d+-\d+$/, '')))];
const mutateOf = (g) => (typeof g.mutate === 'function' ? g.mutate() : g.mutate);

const describeGroup = (g) => `${g.name}\n  mutate: ${mutateOf(g).join(' ')}\n  tests:  ${g.tests.join(' ')}`;

function usage(message) {
  console.error(`${message}\nusage: npm run mutation -- [--group NAME | --files A.ts,B.ts | --changed [REF]] `
    + '[--survivors] [--concurrency N] [--dry-run] [--list] [--summary]');
  process.exit(2);
}

function git(...args) {
  const r = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** Modules of the groups changed against ref (committed or not, and new files). */
function changedFiles(ref) {
  const base = ref ?? (git('rev-parse', '--verify', '-q', 'main') ? git('merge-base', 'HEAD', 'main') : 'HEAD');
  const diff = git('diff', '--name-only', base ?? 'HEAD');
  if (diff === null) usage(`cannot diff against ${ref ?? 'main'}`);
  const untracked = git('ls-files', '--others', '--exclude-standard') ?? '';
  return [...diff.split('\n'), ...untracked.split('\n')].filter(Boolean);
}

/** The groups to run, each with the modules of it to mutate. */
export function plan(argv) {
  const at = (flag) => argv.indexOf(flag);
  const narrow = (groups) => (!argv.includes('--survivors') ? groups
    : groups.map((g) => survivorsOnly(g)).filter((g) => g.mutate.length));
  if (at('--group') >= 0) {
    const names = (argv[at('--group') + 1] ?? '').split(',');
    const groups = GROUPS.filter((g) => names.includes(g.name));
    if (groups.length !== names.length) usage(`unknown group in ${names.join(',')} (see --list)`);
    return narrow(groups);
  }
  let files = null;
  if (at('--files') >= 0) {
    files = (argv[at('--files') + 1] ?? '').split(',').filter(Boolean);
    const known = new Set(GROUPS.flatMap(modulesOf));
    const unknown = files.filter((f) => !known.has(f));
    if (unknown.length || !files.length) usage(`not a module of any group: ${unknown.join(', ') || '(none)'}`);
  } else if (at('--changed') >= 0) {
    const ref = argv[at('--changed') + 1];
    files = changedFiles(ref && !ref.startsWith('--') ? ref : undefined);
  }
  const picked = !files ? GROUPS
    : GROUPS.map((g) => ({ ...g, mutate: mutateOf(g).filter((m) => files.includes(m.replace(/:\d+-\d+$/, ''))) }))
      .filter((g) => g.mutate.length);
  return narrow(picked);
}

const reportPath = (g) => join('reports', 'mutation', g.name, 'mutation.json');
const readReport = (g) => (existsSync(reportPath(g)) ? JSON.parse(readFileSync(reportPath(g), 'utf8')) : null);
const LIVE = (m) => m.status === 'Survived' || m.status === 'NoCoverage';

/**
 * How the lines of `before` moved in `after` (git diff --no-index, no context): `map` sends each line of
 * `before` that is unchanged to its line now; `fresh` lists the ranges of lines now that are new or changed.
 */
export function lineMoves(before, after) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-mutation-'));
  try {
    writeFileSync(join(dir, 'a'), before);
    writeFileSync(join(dir, 'b'), after);
    const r = spawnSync('git', ['diff', '--no-index', '-U0', 'a', 'b'], { cwd: dir, encoding: 'utf8' });
    const hunks = [...r.stdout.matchAll(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/gm)]
      .map((h) => ({ a: Number(h[1]), na: Number(h[2] ?? 1), b: Number(h[3]), nb: Number(h[4] ?? 1) }));
    const map = new Map();
    const fresh = [];
    let shift = 0;
    let next = 1; // the first line of `before` not yet mapped
    for (const h of hunks) {
      const removedFrom = h.na === 0 ? h.a + 1 : h.a; // with no line removed, -a names the line before
      for (; next < removedFrom; next++) map.set(next, next + shift);
      next = removedFrom + h.na;
      shift += h.nb - h.na;
      if (h.nb > 0) fresh.push([h.b, h.b + h.nb - 1]);
    }
    const total = before.split('\n').length;
    for (; next <= total; next++) map.set(next, next + shift);
    return { map, fresh };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `--survivors`: the group narrowed to the lines where its last report left mutants alive, plus every
 * line changed since that report (Stryker's `file:from-to` mutates what lies wholly within). The report
 * is carried over with its mutants moved to their lines now (those on changed lines dropped): the run's
 * mutants replace those its ranges cover. A module the report lacks is mutated whole.
 */
export function survivorsOnly(g, report = readReport(g)) {
  if (!report) return g;
  const mutate = [];
  const previous = { ...report, files: {} };
  for (const m of mutateOf(g)) {
    const file = m.replace(/:\d+-\d+$/, '');
    const entry = report.files[file];
    if (!entry) {
      mutate.push(m);
      continue;
    }
    const now = readFileSync(join(ROOT, file), 'utf8');
    const { map, fresh } = lineMoves(entry.source, now);
    const moved = entry.mutants.flatMap((x) => {
      const [a, b] = [map.get(x.location.start.line), map.get(x.location.end.line)];
      const whole = a !== undefined && b !== undefined && b - a === x.location.end.line - x.location.start.line;
      if (!whole) return [];
      return [{ ...x, location: { start: { ...x.location.start, line: a }, end: { ...x.location.end, line: b } } }];
    });
    previous.files[file] = { ...entry, source: now, mutants: moved };
    const within = /:(\d+)-(\d+)$/.exec(m);
    const inside = ([a, b]) => !within || (a >= Number(within[1]) && b <= Number(within[2]));
    const alive = moved.filter(LIVE).map((x) => [x.location.start.line, x.location.end.line]);
    const changed = fresh.map(([a, b]) => [Math.max(a, within ? Number(within[1]) : a),
      Math.min(b, within ? Number(within[2]) : b)]).filter(([a, b]) => a <= b);
    for (const [a, b] of [...new Set([...alive.filter(inside), ...changed].map(String))]
      .map((x) => x.split(',').map(Number))) {
      mutate.push(`${file}:${a}-${b}`);
    }
  }
  return { ...g, mutate, previous };
}

/** A --survivors run's mutants folded into the report it narrowed: those its ranges cover are replaced. */
export function merged(previous, ranges, fresh) {
  const files = structuredClone(previous.files);
  for (const [file, entry] of Object.entries(fresh.files)) {
    const mine = ranges.filter((r) => r.replace(/:\d+-\d+$/, '') === file);
    const whole = mine.some((r) => !/:\d+-\d+$/.test(r));
    const covered = (x) => mine.some((r) => {
      const [, a, b] = /:(\d+)-(\d+)$/.exec(r);
      return x.location.start.line >= Number(a) && x.location.end.line <= Number(b);
    });
    const kept = whole ? [] : (files[file]?.mutants ?? []).filter((x) => !covered(x));
    files[file] = { ...entry, mutants: [...kept, ...entry.mutants] };
  }
  return { ...fresh, files };
}

const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

/** Per module: killed, timed out, survived, no coverage, errors, and the score Stryker computes. */
export function scores(results) {
  const byFile = new Map();
  for (const r of results) {
    const s = byFile.get(r.fileName) ?? { killed: 0, timeout: 0, survived: 0, noCoverage: 0, errors: 0 };
    if (r.status === 'Killed') s.killed++;
    else if (r.status === 'Timeout') s.timeout++;
    else if (r.status === 'Survived') s.survived++;
    else if (r.status === 'NoCoverage') s.noCoverage++;
    else if (r.status !== 'Ignored') s.errors++; // CompileError, RuntimeError: not counted in the score
    byFile.set(r.fileName, s);
  }
  return [...byFile].map(([file, s]) => {
    const detected = s.killed + s.timeout;
    const valid = detected + s.survived + s.noCoverage;
    return { file, ...s, score: valid ? (100 * detected) / valid : 100 };
  }).sort((a, b) => a.file.localeCompare(b.file));
}

export function table(rows) {
  const lines = ['| module | mutants | killed | timeout | survived | errors | score |',
    '|---|---|---|---|---|---|---|'];
  for (const r of rows) {
    const n = r.killed + r.timeout + r.survived + r.noCoverage + r.errors;
    lines.push(`| \`${r.file}\` | ${n} | ${r.killed} | ${r.timeout} | ${r.survived + r.noCoverage} | ${r.errors} `
      + `| ${r.score.toFixed(1)}% |`);
  }
  return lines.join('\n');
}

function survivors(results) {
  return results.filter((r) => UNDETECTED.has(r.status))
    .map((r) => `${relative(ROOT, resolve(ROOT, r.fileName))}:${r.location.start.line}:`
      + `${r.location.start.column + 1} ${r.mutatorName}: `
      + JSON.stringify(r.replacement ?? ''))
    .sort();
}

async function runGroup(group, concurrency) {
  const { Stryker } = await import('@stryker-mutator/core');
  const dir = join('reports', 'mutation', group.name);
  // tsx (ava's nodeArguments) compiles the instrumented sources in the sandbox; --fail-fast: a kill needs one
  const command = `node node_modules/ava/entrypoints/cli.mjs --fail-fast ${group.tests.join(' ')}`;
  const stryker = new Stryker({
    mutate: mutateOf(group),
    testRunner: 'command',
    commandRunner: { command },
    coverageAnalysis: 'off', // the command runner cannot tell which test covers which mutant
    concurrency,
    // a mutant is a hang (Timeout: detected) after 1.5 times the unmutated run plus 10 s: the loops of the
    // line codec and the ledger's retries hang when mutated, and each hang costs this long
    timeoutMS: 10_000,
    timeoutFactor: 1.5,
    checkers: [],
    disableTypeChecks: false, // tsx strips types without checking them; nothing type-checks the sandbox
    ignorePatterns: ['reports', 'data', 'tmp', 'bench/results', 'build/kit', '*.log'],
    tempDirName: join(process.env.TMPDIR ?? '/tmp', `svc-stryker-${group.name}`),
    cleanTempDir: 'always',
    symlinkNodeModules: true,
    reporters: ['html', 'json', 'progress-append-only'],
    htmlReporter: { fileName: join(dir, 'index.html') },
    jsonReporter: { fileName: join(dir, 'mutation.json') },
    thresholds: { high: THRESHOLD, low: THRESHOLD - 10, break: null },
    logLevel: 'warn',
    fileLogLevel: 'off',
  });
  return stryker.runMutationTest();
}

/**
 * Per module, the mutants of every group's last report (reports/mutation/<group>/mutation.json); a module
 * two groups mutate (the ledger: its one-process and its shared-store lines) adds both.
 */
function latestScores() {
  const mutants = [];
  for (const g of GROUPS) {
    const file = join('reports', 'mutation', g.name, 'mutation.json');
    if (!existsSync(file)) continue;
    const report = JSON.parse(readFileSync(file, 'utf8'));
    for (const [path, f] of Object.entries(report.files)) {
      const fileName = relative(ROOT, resolve(ROOT, path));
      mutants.push(...f.mutants.map((m) => ({ ...m, fileName })));
    }
  }
  return scores(mutants);
}

async function main(argv) {
  process.chdir(ROOT);
  if (argv.includes('--summary')) {
    console.log(table(latestScores()));
    return 0;
  }
  if (argv.includes('--list')) {
    for (const g of GROUPS) console.log(describeGroup(g));
    return 0;
  }
  const c = argv.indexOf('--concurrency');
  const concurrency = c >= 0 ? Number(argv[c + 1]) : 1;
  if (!Number.isInteger(concurrency) || concurrency < 1) usage('--concurrency takes a whole number ≥ 1');
  const groups = plan(argv);
  if (!groups.length) {
    console.log('mutation: no module of any group changed; nothing to run');
    return 0;
  }
  if (argv.includes('--dry-run')) {
    for (const g of groups) console.log(describeGroup(g));
    return 0;
  }
  process.env.FORCE_COLOR = '0';
  // the oracle tests read the upstream vectors from this checkout, wherever the sandbox copy lies
  process.env.SVC_SHARED_VECTORS ??= `${join(ROOT, 'test', 'vectors', 'upstream')}/`;
  let failed = false;
  for (const g of groups) {
    console.log(`\nmutation: group ${g.name}: ${modulesOf(g).join(' ')} (tests: ${g.tests.join(' ')})`);
    let results;
    try {
      results = await runGroup(g, concurrency);
    } catch (e) { // e.g. the unmutated run failed: the other groups still run
      console.error(`mutation: group ${g.name} did not run: ${e instanceof Error ? e.message : String(e)}`);
      failed = true;
      continue;
    }
    if (g.previous) {
      const report = merged(g.previous, g.mutate, JSON.parse(readFileSync(reportPath(g), 'utf8')));
      writeFileSync(reportPath(g), JSON.stringify(report));
      results = Object.entries(report.files).flatMap(([f, e]) => e.mutants.map((m) => ({ ...m, fileName: f })));
    }
    const left = survivors(results);
    writeFileSync(join('reports', 'mutation', g.name, 'survivors.txt'), left.map((l) => `${l}\n`).join(''));
    if (left.length) console.log(`surviving mutants (${left.length}):\n${left.map((l) => `  ${l}`).join('\n')}`);
  }
  const rows = latestScores();
  const commit = git('rev-parse', '--short', 'HEAD');
  const dirty = git('status', '--porcelain', '--', 'src', 'test') ? ' (with uncommitted changes)' : '';
  const summary = `Mutation score per module, ${new Date().toISOString().slice(0, 10)}, commit ${commit}${dirty}; `
    + `threshold ${THRESHOLD}% (each module as of the last run that mutated it):\n\n${table(rows)}\n`;
  mkdirSync(join('reports', 'mutation'), { recursive: true }); // a first run whose groups all failed made none
  writeFileSync('reports/mutation/summary.md', summary);
  console.log(`\n${summary}\nreports: reports/mutation/<group>/index.html, reports/mutation/summary.md`);
  const ran = new Set(groups.flatMap(modulesOf));
  if (failed) return 2;
  return rows.some((r) => ran.has(r.file) && r.score < THRESHOLD) ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e) => {
    console.error(e);
    process.exitCode = 2;
  });
}
