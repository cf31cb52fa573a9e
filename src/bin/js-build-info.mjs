// Whether build/js (src/tools/build-js.mjs) is the sources' current build: a SHA-256 over every file under
// src/ and the two tsconfig files, recorded at build time and compared here (about 10 ms for the tree). A
// hash, not mtimes: a fresh clone gives every file the same time.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BUILD_JS = join(ROOT, 'build', 'js');

/** Every file under src/, as paths from the repository root, in a fixed order. */
export function runtimeSources() {
  const out = [];
  const walk = (dir) => {
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else out.push(p);
    }
  };
  walk('src');
  return out;
}

export function sourcesHash() {
  const h = createHash('sha256');
  for (const f of [...runtimeSources(), 'tsconfig.json', 'tsconfig.build.json']) {
    h.update(`${f}\n`);
    h.update(readFileSync(join(ROOT, f)));
  }
  return h.digest('hex');
}

/** build/js holds the build of exactly these sources. */
export function jsBuildCurrent() {
  const info = join(BUILD_JS, 'BUILD_INFO.json');
  if (!existsSync(info)) return false;
  try {
    return JSON.parse(readFileSync(info, 'utf8')).source_sha256 === sourcesHash();
  } catch {
    return false;
  }
}
