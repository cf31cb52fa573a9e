// The "embed anywhere" promise: the same build/kernels.wasm gives identical bytes for the same
// vectors in Node, in Deno (a dev dependency) and in headless Chromium (Debian's chromium driven by
// playwright-core). Standard vectors are also checked against their published values.
import test from 'ava';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { kernelWasmPath } from '../src/kernels/index.ts';
import { assemble } from '../src/kernels/bvm-assembler.ts';
import { ownVectors, prng, hex } from './helpers.ts';
import { CHROMIUM, hasChromium, runPage } from './support/browser.ts';
import { testNeeding } from './support/needs.ts';
// @ts-expect-error plain JS module shared with Deno and the browser
import { runVectors } from './cross-runtime/vector-runner.js';

const run = promisify(execFile);
const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const wasmPath = kernelWasmPath('release');
const DENO = here('../node_modules/.bin/deno');

function makeBundle() {
  const sha = ownVectors('sha256.json').vectors.filter((v: any) => !v.repeat)
    .map((v: any) => ({ name: v.name, msg: v.msg_hex, want: v.digest }));
  const hmac = ownVectors('hmac-sha256.json').vectors.filter((v: any) => !v.truncate)
    .map((v: any) => ({ name: v.name, key: v.key, data: v.data, want: v.mac }));
  const ch = ownVectors('chacha20-poly1305.json').aead
    .map((v: any, i: number) => ({ name: `rfc8439-${i}`, x: false, ...v }));
  const xc = ownVectors('xchacha20-poly1305.json').aead
    .map((v: any, i: number) => ({ name: `xchacha-${i}`, x: true, ...v }));
  const merkle = ownVectors('merkle.json');
  const r = prng(31337);
  const pulse = [1, 7, 8, 256, 1000, 65536]
    .map((bits) => ({ bits, seed: hex(r.bytes(32)), context: hex(r.bytes(40)) }));
  const ex = (n: string) => readFileSync(here(`../docs/examples/${n}`), 'utf8');
  const bvm = [
    { name: 'fib', image: hex(assemble(ex('fib.bvm')).image), input: '', fuel: 10_000, maxOutput: 64 },
    {
      name: 'hash-chain', image: hex(assemble(ex('hash-chain.bvm')).image), input: hex(r.bytes(40)),
      fuel: 10_000, maxOutput: 64,
    },
    {
      name: 'sum-input', image: hex(assemble(ex('sum-input.bvm')).image), input: hex(r.bytes(300)),
      fuel: 100_000, maxOutput: 8,
    },
    { name: 'out-of-fuel', image: hex(assemble('l: jmp l').image), input: '', fuel: 12345, maxOutput: 0 },
    { name: 'garbage', image: hex(r.bytes(100)), input: '', fuel: 100, maxOutput: 8 },
  ];
  return { sha256: sha, hmac, aead: [...ch, ...xc], merkle, pulse, bvm };
}

const bundle = makeBundle();
const dir = mkdtempSync(join(tmpdir(), 'svc-xrt-'));
const bundlePath = join(dir, 'bundle.json');
writeFileSync(bundlePath, JSON.stringify(bundle));
let nodeResults: Record<string, unknown>;

test.serial('Node: raw-ABI runner reproduces the published vectors', async (t) => {
  nodeResults = await runVectors(readFileSync(wasmPath), bundle);
  for (const v of bundle.sha256) t.is(nodeResults[`sha256/${v.name}`], v.want);
  for (const v of bundle.hmac) t.is(nodeResults[`hmac/${v.name}`], v.want);
  for (const v of bundle.aead) {
    t.deepEqual(nodeResults[`aead/${v.name}`], { sealed: v.ciphertext + v.tag, opened: v.plaintext });
  }
  t.deepEqual(nodeResults['merkle/roots'], bundle.merkle.roots);
  t.is((nodeResults['bvm/fib'] as any).output, '000101020305080d15223759');
  t.true(Object.keys(nodeResults).length > 25);
});

test.serial('Deno: identical results from the same .wasm', async (t) => {
  if (!existsSync(DENO)) {
    t.fail(`deno not found at ${DENO}: npm install should provide it (dev dependency)`);
    return;
  }
  const args = [
    'run', '--quiet', `--allow-read=${dir},${wasmPath}`, here('./cross-runtime/deno-main.js'), wasmPath, bundlePath,
  ];
  const { stdout } = await run(DENO, args, {
    env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', DENO_DIR: join(dir, 'deno-cache'), NO_COLOR: '1' },
  });
  const out = JSON.parse(stdout);
  t.regex(out.runtime, /^deno \d/);
  t.deepEqual(out.results, nodeResults);
});

testNeeding(
  test.serial,
  'Chromium: identical results from the same .wasm in a page',
  { what: CHROMIUM, present: hasChromium, hint: 'apt-get install chromium, or set SVC_CHROMIUM; .ci/run does' },
  async (t) => {
    const files: Record<string, [string, Buffer]> = {
      '/page.html': ['text/html', readFileSync(here('./cross-runtime/page.html'))],
      '/vector-runner.js': ['text/javascript', readFileSync(here('./cross-runtime/vector-runner.js'))],
      '/kernels.wasm': ['application/wasm', readFileSync(wasmPath)],
      '/bundle.json': ['application/json', readFileSync(bundlePath)],
    };
    const serve = (path: string) => {
      const f = files[path];
      return f ? { type: f[0], body: f[1] } : null;
    };
    const { value, status } = await runPage(serve, '/page.html', '__results', 30_000);
    t.deepEqual(value, nodeResults);
    t.regex(status, /^done: \d+ results/);
  },
);
