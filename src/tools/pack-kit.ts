// npm run pack:kit [-- --out DIR]: the embedding kit as an npm tarball, svc-kit-<version>.tgz, in DIR
// (default: the current directory); prints its file name. The repository's package.json describes the
// service (its launchers, its Koa, LevelDB, PostgreSQL and chain dependencies); the kit is a small part of
// it, so the tarball gets a manifest of its own, staged in build/kit-package/: its own name (@svc/kit), the
// service's version, engines and entry points (`exports` copied from package.json), its licence and
// repository where package.json states them, no bins or scripts, and as dependencies exactly the packages
// the built kit imports, at the ranges package.json gives them. An embedder's install then fetches those
// two or three packages, not the service's forty. Its README is src/kit/README.md, written for embedders
// (docs/embedding.md is the repository's guide, and links to files the package does not ship).
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importedPackages } from './imports.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const STAGE = join(ROOT, 'build', 'kit-package');
/** The package's name: the service's repository is `svc`, private; the kit is what embedders install. */
export const KIT_NAME = '@svc/kit';
/** Licence texts npm ships when present; package.json's `license` names the licence. */
const LICENCE_FILES = ['LICENSE', 'LICENSE.md', 'LICENSE.txt', 'LICENCE', 'LICENCE.md', 'COPYING'];

interface RootManifest {
  name: string;
  version: string;
  type: string;
  engines: Record<string, string>;
  exports: Record<string, unknown>;
  types: string;
  license?: string;
  repository?: string | { type?: string; url: string; directory?: string };
  homepage?: string;
  bugs?: unknown;
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

/** package.json's repository, pointed at the kit's sources in it (npm's `directory`). */
function kitRepository(r: RootManifest['repository']): Record<string, string> | undefined {
  if (r === undefined) return undefined;
  const { url, type } = typeof r === 'string' ? { url: r, type: undefined } : r;
  return { type: type ?? 'git', url, directory: 'src/kit' };
}

/**
 * The kit's package.json, from the repository's and the list of packages the kit imports. The licence
 * and repository are package.json's own, never made up here: a manifest without them says so by their
 * absence (packKit warns).
 */
export function kitManifest(root: RootManifest, imports: string[]): Record<string, unknown> {
  const missing = imports.filter((n) => root.dependencies[n] === undefined);
  if (missing.length) throw new Error(`the kit imports ${missing.join(', ')}, not in package.json dependencies`);
  const repository = kitRepository(root.repository);
  return {
    name: KIT_NAME,
    version: root.version,
    description: 'svc embedding kit: the proof kernels (WASM) and the offline verifiers for receipts, '
      + 'pulses, timestamps, logs, attestations and sealed messages; Node, Deno, Bun and browsers',
    keywords: ['svc', 'verifier', 'ed25519', 'transparency-log', 'webassembly', 'hpke'],
    type: root.type,
    engines: root.engines,
    exports: root.exports,
    types: root.types,
    files: ['build/kit/', 'build/kernels.wasm'],
    ...(root.license ? { license: root.license } : {}),
    ...(repository ? { repository } : {}),
    ...(root.homepage ? { homepage: root.homepage } : {}),
    ...(root.bugs ? { bugs: root.bugs } : {}),
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
  copyFileSync(join(ROOT, 'src/kit/README.md'), join(STAGE, 'README.md'));
  for (const f of LICENCE_FILES.filter((n) => existsSync(join(ROOT, n)))) copyFileSync(join(ROOT, f), join(STAGE, f));
  const manifest = kitManifest(root, kitImports(join(STAGE, 'build/kit'), KIT_NAME));
  for (const field of ['license', 'repository'] as const) {
    if (manifest[field] === undefined) console.error(`pack:kit: package.json has no ${field}: the kit has none either`);
  }
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
