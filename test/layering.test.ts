// Imports flow one way (STYLE.md "Layout"): main → edge, gateway, cli → core, client, discovery
// → kit → protocol, store, kernels → metrics → errors. kit (the embedding package's code) sits between: the
// client verifies with it, and it builds on the kernels' portable part. Siblings on a floor do not
// import each other, and the CLIs (like the gateway) reach the core only through the client kit.
// This test reads every import in src/ and fails on a forbidden edge.
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const FLOOR: Record<string, number> = {
  bin: -1, 'main.ts': 0,
  edge: 1, gateway: 1, cli: 1,
  core: 2, client: 2, discovery: 2,
  kit: 2.5,
  protocol: 3, store: 3, kernels: 3,
  // the metric definitions every floor records into (docs/decisions.md "Metrics"): below them all
  metrics: 3.5,
  'errors.ts': 4,
  // where the package's files are, whichever layout runs (sources or build/js): below every floor
  'package-root.ts': 4,
  // messages between svcd's processes (the primary, its gateway workers), sent by every floor that has any
  'ipc.ts': 4,
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : /\.(ts|mjs)$/.test(n) ? [p] : [];
  });
}
const areaOf = (file: string) => relative(SRC, file).split('/')[0]!;

test('src/ imports respect the floors: no upward edges, no sibling edges, no cli/gateway → core', (t) => {
  const bad: string[] = [];
  let edges = 0;
  const imports = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/g;
  for (const file of files(SRC)) {
    const from = areaOf(file);
    if (from === 'tools') continue; // build and test scripts, not part of the service
    for (const m of readFileSync(file, 'utf8').matchAll(imports)) {
      const spec = m[1] ?? m[2]!;
      const to = areaOf(resolve(dirname(file), spec));
      if (to === from) continue;
      edges++;
      const ff = FLOOR[from], tf = FLOOR[to];
      if (ff === undefined || tf === undefined) {
        bad.push(`${relative(SRC, file)} → ${spec} (unknown area)`);
        continue;
      }
      if (tf <= ff) bad.push(`${relative(SRC, file)} → ${spec} (${from} may not import ${to})`);
      if ((from === 'cli' || from === 'gateway') && to === 'core') {
        bad.push(`${relative(SRC, file)} → ${spec} (talk to the core through src/client)`);
      }
    }
  }
  t.true(edges > 20, `${edges} cross-area imports read`);
  t.deepEqual(bad, []);
});

/**
 * What a module loads when it is imported: the closure of its static value imports (`import type` and
 * `import(...)` left out), as src/ files and package names.
 */
function staticClosure(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const statics = /(?:^|\n)\s*(?:import|export)\s+(?!type\s)[^'"]*?from\s+'([^']+)'|(?:^|\n)\s*import\s+'([^']+)'/g;
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(statics)) {
      const spec = m[1] ?? m[2]!;
      const packageName = spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
      else if (!spec.startsWith('node:')) packages.add(packageName);
    }
  };
  visit(join(SRC, entry));
  return { files: new Set([...files].map((f) => relative(SRC, f))), packages };
}

test('a gateway worker loads no core module: main.ts imports the core, the edge, stores and watchers lazily', (t) => {
  const { files, packages } = staticClosure('main.ts');
  t.true(files.has('gateway/app.ts') && files.has('core/quote-desk.ts'), 'the gateway and its quote desk are loaded');
  for (const f of ['core/core.ts', 'edge/servers.ts', 'store/store.ts', 'store/level-store.ts', 'core/backup.ts',
    'core/audit.ts', 'core/watchers/evm.ts', 'core/tls-material.ts']) {
    t.false(files.has(f), `${f} is loaded only by the primary, when it runs the core`);
  }
  for (const p of ['viem', '@solana/kit', 'pg', 'level', 'classic-level']) t.false(packages.has(p), p);
  // and the core does load them, so the closure above is read the right way
  const core = staticClosure('core/core.ts');
  t.true(core.files.has('store/store.ts') && core.packages.has('level'), [...core.packages].join(', '));
});
