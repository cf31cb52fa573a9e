// Which test files make the quick tier (`npm run test:quick`): every test file that starts no svcd,
// no browser, no PostgreSQL, no chain and no child process — found from its imports (and its test
// helpers' imports), so a new test joins the right tier by what it uses, not by a list kept beside it.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** An import that makes a test slow: a process, a browser, a database, a chain, or svcd itself. */
const HEAVY = new RegExp("(?:from|import)\\s*\\(?\\s*'(?:node:child_process|playwright-core"
  + "|[^']*support/(?:svcd|start-svcd|postgres|browser|anvil|cluster|proc)(?:\\.ts)?)'");
const LOCAL_IMPORT = /(?:from|import)\s*\(?\s*'(\.[^']+)'/g;

const walk = (d) => readdirSync(d).flatMap((n) => {
  const p = join(d, n);
  return statSync(p).isDirectory() ? walk(p) : [p];
});

/** Whether `file`, or a test helper it imports (transitively), imports something HEAVY. */
function heavy(file, testDir, memo, seen = new Set()) {
  if (memo.has(file)) return memo.get(file);
  if (seen.has(file)) return false;
  seen.add(file);
  let src = '';
  try { src = readFileSync(file, 'utf8'); } catch { return false; }
  const helpers = [...src.matchAll(LOCAL_IMPORT)].map((m) => resolve(dirname(file), m[1]))
    .filter((f) => f.startsWith(testDir));
  const h = HEAVY.test(src) || helpers.some((f) => heavy(f, testDir, memo, seen));
  memo.set(file, h);
  return h;
}

/** The quick tier's test files, relative to `root`, in order. */
export function quickTier(root) {
  const testDir = join(root, 'test');
  const memo = new Map();
  return walk(testDir).filter((f) => f.endsWith('.test.ts') && !heavy(f, testDir, memo))
    .map((f) => relative(root, f)).sort();
}
