// README "Configuration" is the one table of every environment variable the programs read:
// svcd, svc, svc-admin and the benches. Each name the sources read, as `process.env.X`, `env.X`,
// `env['X']` or a quoted 'SVC_…'/'BENCH_…' literal, has a row; a name built from a prefix
// (`SVC_WATCH_${rail}_RPC`) is covered by the rows that start with it.
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function* files(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (/\.(ts|mjs|js)$/.test(e.name)) yield p;
  }
}

test('README Configuration: every environment variable src/ and bench/ read has a row', (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Configuration\n');
  const table = readme.slice(start, readme.indexOf('\n## ', start + 4));
  const documented = [...table.matchAll(/`((?:SVC|BENCH)_[A-Z0-9_]+)`/g)].map((m) => m[1]!);
  const read = new Set<string>();
  const name = /(?:env\.|env\[['"`]|['"`])((?:SVC|BENCH)_[A-Z0-9_]*)/g;
  for (const dir of ['src', 'bench']) {
    for (const f of files(join(ROOT, dir))) {
      for (const m of readFileSync(f, 'utf8').matchAll(name)) read.add(m[1]!);
    }
  }
  t.true(read.has('SVC_DATA_DIR') && read.has('BENCH_MS'), 'the scan finds names');
  const missing = [...read].filter((n) => n.endsWith('_')
    ? !documented.some((d) => d.startsWith(n))
    : !documented.includes(n));
  t.deepEqual(missing, [], 'read but not in README "Configuration"');
});
