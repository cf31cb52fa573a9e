// What src/ imports at run time must be installed by a production install (`npm ci --omit=dev`): every
// package a source file imports — statically or with import() — is a Node builtin, this package itself,
// or in package.json's `dependencies`. A devDependency there (tsx for the launchers, esbuild for the
// /verify bundle) works in a development checkout and fails on a production one. src/tools/ is not
// scanned: the developer's scripts (kernel build, mutation testing, local cluster) run from a checkout
// with its dev dependencies.
import { readFileSync, readdirSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
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

// npm warns EBADENGINE for every installed package whose engines.node range the running Node misses: the
// lockfile's ranges against the floor package.json states and the LTS lines, as npm checks them (semver,
// the range parser npm itself uses; it is in the tree through several dependencies). A production install
// takes any 22 or 24; the development tree (ava) wants 22.20 or 24.12 on those lines (README).
test('every package in the lockfile accepts the stated Node floor and the LTS lines: no EBADENGINE', (t) => {
  const semver = createRequire(import.meta.url)('semver') as {
    minVersion(range: string): { version: string }; satisfies(v: string, range: string): boolean;
  };
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { engines?: { node?: string } | string[]; dev?: boolean }>;
  };
  const { engines } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  const floor = semver.minVersion(engines.node).version;
  t.is(floor, '20.19.0');
  const refusing: string[] = [];
  for (const [where, p] of Object.entries(lock.packages)) {
    const range = !Array.isArray(p.engines) ? p.engines?.node : undefined;
    if (!where || !range) continue;
    for (const v of p.dev ? [floor, '22.20.0', '24.12.0'] : [floor, '22.0.0', '24.0.0']) {
      if (!semver.satisfies(v, range)) refusing.push(`${where} needs node ${range} (not ${v})`);
    }
  }
  t.deepEqual(refusing, []);
});
