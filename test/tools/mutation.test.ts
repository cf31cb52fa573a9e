// The mutation driver (src/tools/mutation.mjs, `npm run mutation`) without running Stryker (minutes per
// module): every module that guards money, identity or proofs is in a group whose test files exist,
// the ledger's two groups split its lines between them exactly, --files and --changed pick the groups
// of those modules only, and docs/testing.md's score table has a row for every module.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function driver(...args: string[]): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, ['src/tools/mutation.mjs', ...args], { cwd: ROOT, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

interface Group { name: string; mutate: string[]; tests: string[] }

/** `--list` / `--dry-run` output: a name line, then "  mutate: …" and "  tests:  …". */
function groups(out: string): Group[] {
  const found: Group[] = [];
  for (const line of out.split('\n')) {
    if (/^\S/.test(line)) found.push({ name: line, mutate: [], tests: [] });
    else if (line.startsWith('  mutate: ')) found.at(-1)!.mutate = line.slice(10).split(' ');
    else if (line.startsWith('  tests:  ')) found.at(-1)!.tests = line.slice(10).split(' ');
  }
  return found;
}

const MODULES = [
  'src/core/ledger.ts', 'src/core/quotes.ts', 'src/core/invoices.ts', 'src/core/machines.ts', 'src/core/receipts.ts',
  'src/core/quote-token.ts', 'src/core/executors/verify-result.ts', 'src/core/executors/bct.ts',
  'src/client/verify.ts', 'src/kit/verify.ts', 'src/kit/verify-log.ts', 'src/kit/verdict.ts',
  'src/protocol/rate-limit.ts', 'src/protocol/line-codec.ts', 'src/protocol/validate.ts',
  'src/protocol/canonical.ts', 'src/protocol/jcs.ts', 'src/store/key-codec.ts',
  'src/core/deposit-match.ts', 'src/core/payment-reference.ts', 'src/core/transfers.ts', 'src/core/invoice-clients.ts',
];
const moduleOf = (m: string) => m.replace(/:\d+-\d+$/, '');

test('mutation driver: every guarded module is in a group, and every group\'s test files exist', (t) => {
  const r = driver('--list');
  t.is(r.status, 0, r.out);
  const all = groups(r.out);
  t.deepEqual([...new Set(all.flatMap((g) => g.mutate.map(moduleOf)))].sort(), [...MODULES].sort());
  for (const g of all) {
    for (const f of g.tests.filter((x) => x.endsWith('.ts'))) t.true(existsSync(join(ROOT, f)), `${g.name}: ${f}`);
    for (const m of g.mutate) t.true(existsSync(join(ROOT, moduleOf(m))), `${g.name}: ${m}`);
  }
});

test('mutation driver: the ledger\'s one-process and shared-store groups split its lines exactly', (t) => {
  const all = groups(driver('--list').out);
  const lines = (name: string) => all.find((g) => g.name === name)!.mutate.flatMap((m) => {
    const [, a, b] = /:(\d+)-(\d+)$/.exec(m)!;
    return Array.from({ length: Number(b) - Number(a) + 1 }, (_, i) => Number(a) + i);
  });
  const [local, shared] = [lines('ledger'), lines('ledger-shared')];
  const source = readFileSync(join(ROOT, 'src/core/ledger.ts'), 'utf8').split('\n');
  t.deepEqual([...local, ...shared].sort((x, y) => x - y), source.map((_, i) => i + 1), 'each line once');
  const sharedText = shared.map((n) => source[n - 1]).join('\n');
  for (const text of ['async withMachine<T>(', '#follows(machineId', 'CONFLICT_RUNS) throw']) {
    t.true(sharedText.includes(text), text);
  }
  t.false(sharedText.includes('async #verifyAt('));
});

test('mutation driver: --files and --changed pick only the groups of those modules', (t) => {
  const r = driver('--files', 'src/protocol/line-codec.ts,src/core/machines.ts', '--dry-run');
  t.is(r.status, 0, r.out);
  t.deepEqual(groups(r.out).map((g) => [g.name, g.mutate]),
    [['line-codec', ['src/protocol/line-codec.ts']], ['machines', ['src/core/machines.ts']]]);
  const unknown = driver('--files', 'src/core/core.ts', '--dry-run');
  t.is(unknown.status, 2);
  t.regex(unknown.out, /not a module of any group: src\/core\/core\.ts/);
  const none = driver('--changed', 'HEAD', '--dry-run');
  t.is(none.status, 0, none.out);
  t.true(groups(none.out).every((g) => g.mutate.every((m) => MODULES.includes(moduleOf(m)))), none.out);
});

test('mutation driver: docs/testing.md has a score row for every module', (t) => {
  const doc = readFileSync(join(ROOT, 'docs/testing.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Mutation testing'));
  for (const m of MODULES) t.true(section.includes(`\n| \`${m}\` `), m);
});

interface Mutant { id: string; status: string; location: { start: { line: number; column: number };
  end: { line: number; column: number } } }
interface Report { files: Record<string, { source: string; mutants: Mutant[] }> }
interface Driver {
  lineMoves(before: string, after: string): { map: Map<number, number>; fresh: [number, number][] };
  survivorsOnly(g: { name: string; mutate: string[] }, report: Report): { mutate: string[]; previous: Report };
  merged(previous: Report, ranges: string[], fresh: Report): Report;
}
const loadDriver = async () => await import(new URL('../../src/tools/mutation.mjs', import.meta.url).href) as Driver;

const mutant = (id: string, status: string, from: number, to = from): Mutant =>
  ({ id, status, location: { start: { line: from, column: 4 }, end: { line: to, column: 9 } } });

test('mutation driver: lines moved by an edit map to their new place; changed and new lines are fresh', async (t) => {
  const { lineMoves } = await loadDriver();
  const before = ['a', 'b', 'c', 'd', 'e', 'f'].join('\n');
  const after = ['a', 'c', 'D', 'x', 'y', 'e', 'f'].join('\n'); // b removed, d changed, x and y added
  const { map, fresh } = lineMoves(before, after);
  t.deepEqual([...map], [[1, 1], [3, 2], [5, 6], [6, 7]]);
  t.deepEqual(fresh, [[3, 5]]);
  t.deepEqual(lineMoves(before, before), { map: new Map([1, 2, 3, 4, 5, 6].map((n) => [n, n])), fresh: [] });
});

test('mutation driver: --survivors re-runs the lines left alive and those changed; the rest is carried', async (t) => {
  const { survivorsOnly, merged } = await loadDriver();
  const file = 'src/core/machines.ts';
  const now = readFileSync(join(ROOT, file), 'utf8');
  // the report's source: the module now without its line 3, with an extra line 9 (of the source then)
  const lines = now.split('\n');
  const then = [...lines.slice(0, 2), ...lines.slice(3, 9), '// gone since', ...lines.slice(9)].join('\n');
  const report: Report = { files: { [file]: { source: then, mutants: [
    mutant('1', 'Killed', 2), mutant('2', 'Survived', 5), mutant('3', 'Survived', 9), mutant('4', 'Killed', 20),
    mutant('5', 'NoCoverage', 30, 32), mutant('6', 'Killed', 30, 32),
  ] } } };
  const g = survivorsOnly({ name: 'machines', mutate: [file] }, report);
  // then's line 5 is line 6 now, 30–32 are 30–32 (one line added above, one removed); line 3 is new now
  t.deepEqual(g.mutate.sort(), [`${file}:3-3`, `${file}:30-32`, `${file}:6-6`].sort());
  const carried = g.previous.files[file]!.mutants.map((m) => [m.id, m.location.start.line]);
  t.deepEqual(carried, [['1', 2], ['2', 6], ['4', 20], ['5', 30], ['6', 30]], 'the mutant of the gone line is dropped');
  t.is(g.previous.files[file]!.source, now);

  const run: Report = { files: { [file]: { source: now, mutants: [
    mutant('a', 'Killed', 6), mutant('b', 'Killed', 30, 32), mutant('c', 'Survived', 30, 32),
  ] } } };
  const after = merged(g.previous, g.mutate, run).files[file]!.mutants.map((m) => `${m.id} ${m.status}`);
  t.deepEqual(after.sort(), ['1 Killed', '4 Killed', 'a Killed', 'b Killed', 'c Survived'].sort());
});
