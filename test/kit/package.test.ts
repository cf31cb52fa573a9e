// The embedding package as an embedder gets it: `npm run pack:kit` (build/kit with tsc, staged with the
// kit's own manifest and README), the tarball installed offline into an empty directory, and then in
// Node, Deno, Bun and headless Chromium the same script (test/kit/embed/check.js) imports
// @svc/kit/kernels and @svc/kit/verify, hashes the standard vectors, fetches pulses from a live svcd over
// HTTP (CORS in the page), recomputes a paid GET_PULSE output, verifies a real receipt — and rejects both
// after one flipped byte.
import test from 'ava';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { fundMachine } from '../support/svcd.ts';
import { CHROMIUM, hasChromium, runPage } from '../support/browser.ts';
import { ownVectors } from '../helpers.ts';
import { testNeeding } from '../support/needs.ts';
import { until } from '../support/until.ts';
import { sharedSvcd } from '../support/start-svcd.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const bin = (name: string) => join(ROOT, 'node_modules/.bin', name);
const NPM_ENV = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false' };

const s = sharedSvcd(test, { SVC_PULSE_PERIOD_MS: '1500' });
let dir: string;
let tgz: string;
let bundle: Record<string, unknown>;
let expected: Record<string, unknown>;
const M = 'kit-pack';

test.before(async () => {
  const token = await fundMachine(s, M, 2);
  const c = await s.edge();
  try {
    const q = await c.request('QUOTE', { service: 'get-pulse', machine_id: M, bits: 512 });
    await c.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: M }, { token });
    const ex = await c.request('GET_PULSE', { quote_id: q.quote_id, machine_id: M }, { token });
    const receipt = await c.request('VERIFY_RECEIPT', { receipt_id: ex.receipt_id, machine_id: M });
    const index = (ex.pulse as { index: number }).index;
    // pulse k+1 reveals the seed: the embedders recompute the output from it
    await until('pulse k+1 is published',
      () => c.request('PULSE', { index: index + 1 }).then(() => true, () => false), { every: 50 });
    const nodes = await (await fetch(`${s.ready.http}/.well-known/svc/nodes.json`)).json();
    bundle = {
      base: s.ready.http, nodes, receipt, result: { ...ex, machine_id: M },
      sha256: ownVectors('sha256.json').vectors.filter((v: { repeat?: number }) => !v.repeat),
    };
    expected = {
      sha256: (bundle.sha256 as { digest: string }[]).map((v) => v.digest),
      expanded: ex.output_hex,
      pulse: [true, null], pulseFlipped: [false, 'bad_output'],
      receipt: [true, null], receiptFlipped: [false, 'bad_signature'],
    };
  } finally {
    c.close();
  }
  // pack, then install the tarball alone into an empty directory; from npm's cache where it can
  // (--offline would need the registry metadata of the kit's dependencies, which `npm ci` never caches)
  dir = mkdtempSync(join(tmpdir(), 'svc-kit-'));
  const packed = await run('npm', ['run', '--silent', 'pack:kit', '--', '--out', dir], { cwd: ROOT, env: NPM_ENV });
  tgz = packed.stdout.trim().split('\n').pop()!;
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(dir, tgz)], {
    cwd: dir, env: NPM_ENV, maxBuffer: 16 << 20,
  });
  for (const f of ['check.js', 'main.mjs', 'page.html']) copyFileSync(here(`./embed/${f}`), join(dir, f));
  writeFileSync(join(dir, 'bundle.json'), JSON.stringify(bundle));
});
test.after.always(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

const strip = (r: Record<string, unknown>) => {
  const { runtime: _r, backend: _b, ...rest } = r;
  return rest;
};

test.serial('docs/embedding.md installs the tarball `npm run pack:kit` makes, by its name', (t) => {
  // the Install block: `npm run pack:kit` here, `npm install ./svc-kit-<version>.tgz` in the embedder's project
  // (as above, with the tarball in a temp dir); a version bump that leaves the doc's name behind fails
  const doc = readFileSync(join(ROOT, 'docs/embedding.md'), 'utf8');
  t.regex(tgz, /^svc-kit-\d+\.\d+\.\d+\.tgz$/, 'npm names a scoped package\'s tarball scope-name-version');
  t.true(doc.includes(`npm run pack:kit                   # in this repository: ${tgz}`), tgz);
  t.true(doc.includes(`npm install ./${tgz}    # in your project`), tgz);
});

test.serial('the tarball ships the kit and the module, nothing secret, no tests, no sources', (t) => {
  const pkg = join(dir, 'node_modules/@svc/kit');
  const listing = (p: string): string[] => readdirSync(p, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listing(join(p, e.name)).map((x) => `${e.name}/${x}`) : [e.name]));
  const files = listing(pkg);
  t.true(files.includes('build/kernels.wasm'));
  t.true(files.includes('build/kit/kit/verify-api.d.ts'));
  const secretOrSource = (f: string) => /^(test|assembly|data|bench)\//.test(f) || /\.(pem|key)$/.test(f)
    || (f.endsWith('.ts') && !f.endsWith('.d.ts'));
  t.false(files.some(secretOrSource), files.filter((f) => !f.startsWith('build/kit/')).join(', '));
  t.false(existsSync(join(pkg, 'src/kit')));
});

test.serial('the kit\'s manifest: its own name, the entry points, no bins or scripts, and only the packages the '
  + 'kit imports', (t) => {
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const kit = JSON.parse(readFileSync(join(dir, 'node_modules/@svc/kit/package.json'), 'utf8'));
    t.like(kit, { name: '@svc/kit', version: root.version, type: 'module' });
    t.not(kit.name, root.name, 'the repository\'s package is the service; the kit is named apart');
    t.deepEqual(kit.engines, root.engines);
    // licence and repository are package.json's own, never made up at pack time
    t.is(kit.license, root.license);
    t.is(kit.repository?.url, typeof root.repository === 'string' ? root.repository : root.repository?.url);
    if (kit.repository) t.is(kit.repository.directory, 'src/kit');
    t.deepEqual(kit.exports, root.exports);
    t.is(kit.bin, undefined);
    t.is(kit.scripts, undefined);
    t.is(kit.private, undefined);
    t.deepEqual(kit.dependencies, { '@noble/curves': root.dependencies['@noble/curves'] });
    // what the install brought: the kit and its dependencies' own, none of the service's
    const installed = readdirSync(join(dir, 'node_modules')).filter((n) => !n.startsWith('.'));
    t.deepEqual(installed.sort(), ['@noble', '@svc']);
  });

test.serial('the kit\'s README is written for embedders: every link resolves in the package or is absolute, and '
  + 'every name its examples import is exported', async (t) => {
    const pkg = join(dir, 'node_modules/@svc/kit');
    const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
    t.is(readme, readFileSync(join(ROOT, 'src/kit/README.md'), 'utf8'));
    t.regex(readme, /^# @svc\/kit\n/);
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
    for (const link of links) {
      if (/^https:\/\//.test(link)) continue;
      t.false(/^[a-z]+:/.test(link), `${link}: only https links leave the package`);
      t.true(existsSync(join(pkg, link.split('#')[0]!)), `${link} is in the package`);
    }
    // each example's imports, run against the installed package
    const imports = [...readme.matchAll(/^import \{([^}]+)\} from '(@svc\/kit[^']*)';$/gm)]
      .map((m) => ({ names: m[1]!.split(',').map((n) => n.trim()), from: m[2]! }));
    t.true(imports.length >= 2, 'the examples import from the package');
    const script = `const out = {}; for (const { names, from } of ${JSON.stringify(imports)}) {
      const m = await import(from); out[from] = names.filter((n) => !(n in m)); } console.log(JSON.stringify(out));`;
    writeFileSync(join(dir, 'readme-imports.mjs'), script);
    const { stdout } = await run(process.execPath, ['readme-imports.mjs'], { cwd: dir });
    for (const [from, missing] of Object.entries(JSON.parse(stdout) as Record<string, string[]>)) {
      t.deepEqual(missing, [], `${from} exports what the README imports`);
    }
  });

test.serial('`npm pack` of the repository refuses, naming npm run pack:kit: its manifest is the service\'s',
  async (t) => {
    const e = await t.throwsAsync(run('npm', ['pack', '--pack-destination', dir], { cwd: ROOT, env: NPM_ENV }));
    t.regex((e as unknown as { stderr: string }).stderr, /the package is the embedding kit: npm run pack:kit/);
    t.false(readdirSync(dir).some((f) => f.endsWith('.tgz') && f !== tgz), 'no tarball written');
  });

test.serial('Node: one import, standard vectors, a live pulse expanded, a real receipt verified', async (t) => {
  const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: dir });
  const out = JSON.parse(stdout);
  t.regex(out.runtime, /^node v\d+/);
  t.is(out.backend, 'webcrypto');
  t.deepEqual(strip(out), expected);
});

test.serial('Deno: the same results', async (t) => {
  t.true(existsSync(bin('deno')), 'deno comes with npm install (dev dependency)');
  const host = new URL(s.ready.http!).host;
  const env = { ...process.env, DENO_NO_UPDATE_CHECK: '1', DENO_DIR: join(dir, '.deno'), NO_COLOR: '1' };
  const args = ['run', '--quiet', `--allow-read=${dir}`, `--allow-net=${host}`, 'main.mjs'];
  const { stdout } = await run(bin('deno'), args, { cwd: dir, env });
  const out = JSON.parse(stdout);
  t.regex(out.runtime, /^deno \d/);
  t.deepEqual(strip(out), expected);
});

test.serial('Bun: the same results', async (t) => {
  t.true(existsSync(bin('bun')), 'bun comes with npm install (dev dependency)');
  const { stdout } = await run(bin('bun'), ['main.mjs'], { cwd: dir, env: { ...process.env, NO_COLOR: '1' } });
  const out = JSON.parse(stdout);
  t.regex(out.runtime, /^bun \d/);
  t.deepEqual(strip(out), expected);
});

testNeeding(test.serial, 'Chromium: the same results in a page on another origin (CORS)',
  { what: CHROMIUM, present: hasChromium, hint: 'apt-get install chromium, or set SVC_CHROMIUM; .ci/run does' },
  async (t) => {
    const types: Record<string, string> = {
      '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.json': 'application/json',
      '.wasm': 'application/wasm',
    };
    const serve = (path: string) => {
      const file = join(dir, path);
      if (!file.startsWith(dir) || !existsSync(file)) return null;
      return { type: types[extname(file)] ?? 'application/octet-stream', body: readFileSync(file) };
    };
    const out = (await runPage(serve, '/page.html', '__result')).value as Record<string, unknown>;
    t.is(out.error, undefined);
    t.regex(out.runtime as string, /^chromium \d/);
    t.deepEqual(strip(out), expected);
  },
);
