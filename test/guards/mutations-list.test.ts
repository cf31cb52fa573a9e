// The hand mutation list (test/guards/mutations.ts) must stay aimed: when code moves, a mutation
// whose `from` text is gone (or now occurs twice) or whose test title no longer exists proves nothing,
// and the probe only notices when someone runs it. This test reads the list statically, without
// running any mutation: every `from` occurs exactly once in its file, every test file exists and
// declares a test with exactly that title, and docs/testing.md carries the table the list prints.
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { MUTATIONS } from './mutations.ts';
import { applyMutation, table } from '../support/probe-mutations.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** A title as ava sees it: a string literal, a plain template, or a `+` of those; else undefined. */
function literal(e: ts.Expression): string | undefined {
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return e.text;
  if (ts.isParenthesizedExpression(e)) return literal(e.expression);
  if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const l = literal(e.left), r = literal(e.right);
    return l === undefined || r === undefined ? undefined : l + r;
  }
  return undefined;
}

/**
 * Titles of `test(title, …)`, `test.serial(title, …)` and such, of wrappers called `(test, title, …)`, and of
 * onBothStores(title, …) (settlement-paths.test.ts): `title (LevelDB)` and `title (PostgreSQL)`.
 */
function titlesIn(file: string): Set<string> {
  const src = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true);
  const out = new Set<string>();
  const visit = (n: ts.Node) => {
    if (ts.isCallExpression(n)) {
      const callee = n.expression.getText(src);
      const first = n.arguments[0];
      const wrapped = first !== undefined && ts.isIdentifier(first) && first.text === 'test';
      const at = /^test(\.(serial|only|skip|failing))*$/.test(callee) ? 0 : wrapped ? 1 : -1;
      const arg = at >= 0 ? n.arguments[at] : undefined;
      const title = arg ? literal(arg) : undefined;
      if (title !== undefined) out.add(title);
      // onBothStores(title, …) registers the title once per store engine
      const both = callee === 'onBothStores' && first ? literal(first) : undefined;
      if (both !== undefined) for (const e of ['LevelDB', 'PostgreSQL']) out.add(`${both} (${e})`);
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return out;
}

test('mutation list: ids are unique and every `from` occurs exactly once in its file, and differs from `to`',
  (t) => {
  const ids = MUTATIONS.map((m) => m.id);
  t.deepEqual(ids.filter((id, i) => ids.indexOf(id) !== i), [], 'duplicate ids');
  const bad: string[] = [];
  for (const m of MUTATIONS) {
    if (!existsSync(join(ROOT, m.file))) { bad.push(`${m.id}: no file ${m.file}`); continue; }
    if (m.from === m.to) bad.push(`${m.id}: \`from\` and \`to\` are the same text`);
    try { applyMutation(m, read(m.file)); } catch (e) { bad.push((e as Error).message); }
  }
  t.deepEqual(bad, []);
});

test('mutation list: every named test file exists and declares a test with exactly the named title', (t) => {
  const bad: string[] = [];
  const cache = new Map<string, Set<string>>();
  for (const m of MUTATIONS) {
    if (!existsSync(join(ROOT, m.test))) { bad.push(`${m.id}: no test file ${m.test}`); continue; }
    if (!cache.has(m.test)) cache.set(m.test, titlesIn(m.test));
    if (!cache.get(m.test)!.has(m.title)) bad.push(`${m.id}: no test titled "${m.title}" in ${m.test}`);
  }
  t.deepEqual(bad, []);
});

test('mutation list: docs/testing.md carries the table probe-mutations.ts --table prints', (t) => {
  t.true(read('docs/testing.md').includes(`${table()}\n`),
    'regenerate it: node --import tsx test/support/probe-mutations.ts --table');
});

test('mutation list: the title reader sees split, plain and wrapped titles, never a prefix', (t) => {
  const titles = titlesIn('test/guards/proofs.test.ts');
  const ed = 'Ed25519 guard: verifyWithRawKey answers false (never throws) for a short key or a short signature';
  t.true(titles.has(ed));
  t.true([...titles].some((s) => s.startsWith('tlog guard: ') && s.includes('not its key hash), its origin')));
  t.false(titles.has('tlog guard: verifyTlogProof'), 'a prefix is not a title');
  const jcs = 'canonical JSON: RFC 8785 reference vectors (cyberphone/json-canonicalization), byte for byte';
  t.true(titlesIn('test/oracles/canonical.test.ts').has(jcs), 'sharedTest(test, title, …)');
});
