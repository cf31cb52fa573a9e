// npm run pack:kit [-- --out DIR]: the embedding kit as an npm tarball, svc-<version>.tgz, in DIR (default:
// the current directory); prints its file name. The repository's package.json describes the service (its
// launchers, its Koa, LevelDB, PostgreSQL and chain dependencies); the kit is a small part of it, so the
// tarball gets a manifest of its own, staged in build/kit-package/: the same name, version and entry points
// (`exports` copied from package.json), no bins or scripts, and as dependencies exactly the packages the
// built kit imports, at the ranges package.json gives them. An embedder's install then fetches those two or
// three packages, not the service's forty. docs/embedding.md is the package's README.
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importedPackages } from './imports.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const STAGE = join(ROOT, 'build', 'kit-package');

interface RootManifest {
  name: string;
  version: string;
  type: string;
  engines: Record<string, string>;
  exports: Record<string, unknown>;
  types: string;
  license?: string;
  dependencies: Record<string, string>;
}

function* jsFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* jsFiles(p);
    else if (e.name.endsWith('.js')) yield p;
  }
}

/** The packages the built kit under `kitDir` imports (its own name, a self-reference, left out), sorted. */
export function kitImports(kitDir: string, selfName: string): string[] {
  const names = new Set<string>();
  for (const f of jsFiles(kitDir)) {
    for (const n of importedPackages(readFileSync(f, 'utf8'))) if (n !== selfName) names.add(n);
  }
  return [...names].sort();
}

/** The kit's package.json, from the repository's and the list of packages the kit imports. */
export function kitManifest(root: RootManifest, imports: string[]): Record<string, unknown> {
  const missing = imports.filter((n) => root.dependencies[n] === undefined);
  if (missing.length) throw new Error(`the kit imports ${missing.join(', ')}, not in package.json dependencies`);
  return {
    name: root.name,
    version: root.version,
    description: 'svc embedding kit: the proof kernels (WASM) and the offline verifiers for receipts, '
      + 'pulses, timestamps, logs, attestations and sealed messages; Node, Deno, Bun and browsers',
    type: root.type,
    engines: root.engines,
    exports: root.exports,
    types: root.types,
    files: ['build/kit/', 'build/kernels.wasm'],
    ...(root.license ? { license: root.license } : {}),
    dependencies: Object.fromEntries(imports.map((n) => [n, root.dependencies[n]!])),
  };
}

/** Builds the kit, stages the package and packs it into `out`; the tarball's file name. */
export function packKit(out: string): string {
  const node = (args: string[]) => execFileSync(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 2, 2] });
  node([join(ROOT, 'src/tools/ensure-build.mjs')]);
  rmSync(join(ROOT, 'build/kit'), { recursive: true, force: true });
  node([join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'src/kit/tsconfig.json']);

  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as RootManifest;
  rmSync(STAGE, { recursive: true, force: true });
  mkdirSync(join(STAGE, 'build'), { recursive: true });
  cpSync(join(ROOT, 'build/kit'), join(STAGE, 'build/kit'), { recursive: true });
  copyFileSync(join(ROOT, 'build/kernels.wasm'), join(STAGE, 'build/kernels.wasm'));
  copyFileSync(join(ROOT, 'docs/embedding.md'), join(STAGE, 'README.md'));
  const manifest = kitManifest(root, kitImports(join(STAGE, 'build/kit'), root.name));
  writeFileSync(join(STAGE, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');

  mkdirSync(out, { recursive: true });
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const packed = execFileSync(npm, ['pack', '--silent', '--pack-destination', out, STAGE], {
    cwd: ROOT, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  return packed.trim().split('\n').pop()!;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--root-pack')) {
    // package.json's prepack: `npm pack` of the repository itself would ship the service's manifest
    // (bins whose sources are not in the tarball, forty dependencies) around the kit
    console.error('npm pack: this package.json describes the service; the package is the embedding kit: '
      + 'npm run pack:kit (docs/embedding.md)');
    process.exit(1);
  }
  const at = process.argv.indexOf('--out');
  const out = resolve(at >= 0 ? process.argv[at + 1] ?? '.' : '.');
  console.log(packKit(out));
}
