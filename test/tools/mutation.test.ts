// The mutation driver (src/tools/mutation.mjs, `npm run mutation`) without running Stryker (minutes per
// module): every module issue 14 names is in a group whose test files exist, the ledger's two groups split
// its lines between them exactly, --files and --changed pick the groups of those modules only, and
// docs/testing.md's score table has a row for every module.
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
  'src/client/verify.ts', 'src/kit/verify.ts',
  'src/protocol/rate-limit.ts', 'src/protocol/line-codec.ts', 'src/protocol/validate.ts',
  'src/protocol/canonical.ts', 'src/store/key-codec.ts',
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
  for (const text of ['#withMachineShared<T>(', '#follows(machineId', 'if (store.shared)', 'CONFLICT_RUNS) throw']) {
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
