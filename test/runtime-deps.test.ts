// What src/ imports at run time must be installed by a production install (`npm ci --omit=dev`): every
// package a source file imports — statically or with import() — is a Node builtin, this package itself,
// or in package.json's `dependencies`. A devDependency there (tsx for the launchers, esbuild for the
// /verify bundle) works in a development checkout and fails on a production one. src/tools/ is not
// scanned: the developer's scripts (kernel build, mutation testing, local cluster) run from a checkout
// with its dev dependencies.
import { readFileSync, readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { importedPackages } from '../src/tools/imports.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string; dependencies: Record<string, string>; devDependencies: Record<string, string>;
};

function* sources(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (p !== join(ROOT, 'src', 'tools')) yield* sources(p);
    }
    else if (/\.(ts|mts|mjs|js)$/.test(e.name)) yield p;
  }
}

test('the import scanner finds static, dynamic and side-effect imports, scoped or not', (t) => {
  const text = "import a from 'koa';\nimport '@scope/pkg/sub';\nconst e = await import('esbuild');\n"
    + "export { x } from \"pino\";\n// import y from 'commented-out';\nimport z from './local.ts';";
  t.deepEqual(importedPackages(text), ['koa', '@scope/pkg', 'esbuild', 'pino']);
});

test('every package src/ imports is a dependency (a production install has it), not a devDependency', (t) => {
  const builtins = new Set(builtinModules);
  const missing: string[] = [];
  let files = 0;
  for (const file of sources(join(ROOT, 'src'))) {
    files++;
    for (const name of importedPackages(readFileSync(file, 'utf8'))) {
      if (builtins.has(name) || name === pkg.name || pkg.dependencies[name]) continue;
      const where = pkg.devDependencies[name] ? 'a devDependency' : 'not in package.json';
      missing.push(`${relative(ROOT, file)} imports ${name}: ${where}`);
    }
  }
  t.true(files > 50, `scanned ${files} files`);
  t.deepEqual([...new Set(missing)], []);
});
