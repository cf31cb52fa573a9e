// Rebuilds build/*.wasm when the AssemblyScript sources changed. The build is keyed by a SHA-256
// over assembly/**, asconfig.json and the compiler version, recorded in build/BUILD_INFO.json, so a
// fresh clone (where every file has the same mtime) still knows whether its committed build is current.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const infoPath = join(root, 'build', 'BUILD_INFO.json');

function files(dir) {
  return readdirSync(dir).sort().flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

export function sourceHash() {
  const h = createHash('sha256');
  const asc = JSON.parse(readFileSync(join(root, 'node_modules/assemblyscript/package.json'), 'utf8')).version;
  h.update(`asc ${asc}\n`);
  for (const f of [...files(join(root, 'assembly')), join(root, 'asconfig.json')]) {
    h.update(relative(root, f).replaceAll('\\', '/') + '\n');
    h.update(readFileSync(f));
  }
  return h.digest('hex');
}

const sha = (p) => createHash('sha256').update(readFileSync(p)).digest('hex');
const want = sourceHash();
let current = false;
if (existsSync(infoPath)) {
  const info = JSON.parse(readFileSync(infoPath, 'utf8'));
  current = info.source_sha256 === want
    && Object.entries(info.outputs ?? {})
      .every(([f, h]) => existsSync(join(root, 'build', f)) && sha(join(root, 'build', f)) === h);
}
if (!current || process.argv.includes('--force')) {
  console.error('[ensure-build] compiling assembly/ → build/ (release + debug)');
  for (const target of ['release', 'debug']) {
    const asc = join(root, 'node_modules/assemblyscript/bin/asc.js');
    execFileSync(process.execPath, [asc, 'assembly/kernels.ts', '--target', target], { cwd: root, stdio: 'inherit' });
  }
  const outputs = Object.fromEntries(
    ['kernels.wasm', 'kernels.debug.wasm'].map((f) => [f, sha(join(root, 'build', f))]),
  );
  writeFileSync(infoPath, JSON.stringify({ source_sha256: want, outputs }, null, 2) + '\n');
}
