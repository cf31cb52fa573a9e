// The runtime JavaScript: src/**/*.ts compiled by tsc (tsconfig.build.json) into build/js, so svcd, svc and
// svc-admin load plain JavaScript instead of compiling TypeScript at every start (tsx). Run by `npm install`
// (prepare) and before packing; the launchers (src/bin/) use build/js only while its recorded source hash is
// the sources' own, else they run the sources through tsx (an edited tree is never run stale).
//   node src/tools/build-js.mjs           build when the sources changed
//   node src/tools/build-js.mjs --force   build anyway
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { BUILD_JS, ROOT, jsBuildCurrent, runtimeSources, sourcesHash } from '../bin/js-build-info.mjs';

if (jsBuildCurrent() && !process.argv.includes('--force')) process.exit(0);
const require = createRequire(import.meta.url);
let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  console.error('build-js: typescript is not installed (a devDependency): the launchers run the sources through tsx');
  process.exit(0);
}
const hash = sourcesHash();
rmSync(BUILD_JS, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
// the .mjs files beside the sources (launch helpers, worker bootstraps) are JavaScript already
for (const f of runtimeSources().filter((s) => s.endsWith('.mjs'))) {
  const to = join(BUILD_JS, f.slice('src/'.length));
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(join(ROOT, f), to);
}
writeFileSync(join(BUILD_JS, 'BUILD_INFO.json'), `${JSON.stringify({ source_sha256: hash }, null, 2)}\n`);
if (!existsSync(join(BUILD_JS, 'main.js'))) throw new Error('build-js: tsc wrote no build/js/main.js');
console.log(`build-js: build/js from the ${runtimeSources().length} files under src/`);
