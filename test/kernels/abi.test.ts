// Keeps the three descriptions of the raw ABI in step: assembly/ (the truth), src/kernels/abi.ts
// (the TypeScript mirror) and docs/kernels.md / docs/bvm.md (what embedders read); and checks
// that the committed build is the build of the committed sources.
import test from 'ava';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { BVM_STATUS, KERNEL_ERRORS, compileKernels } from '../../src/kernels/index.ts';
import { ISA } from '../../src/kernels/bvm-isa.ts';

const read = (p: string) => readFileSync(new URL(`../../${p}`, import.meta.url), 'utf8');

test('the module imports nothing but env.abort and exports the documented ABI', (t) => {
  const mod = compileKernels();
  t.deepEqual(WebAssembly.Module.imports(mod), [{ module: 'env', name: 'abort', kind: 'function' }]);
  const exported = WebAssembly.Module.exports(mod).map((e) => e.name).sort();
  const doc = read('docs/kernels.md');
  for (const name of exported) {
    if (name === 'memory') continue;
    const pair = `${name.replace(/_(seal|open)$/, '')}_seal\` / \`_open`;
    t.true(doc.includes(`\`${name}\``) || doc.includes(pair), `docs/kernels.md documents ${name}`);
  }
});

test('error codes: assembly/lib/errors.ts, src/kernels/abi.ts and docs/kernels.md agree', (t) => {
  const asm = [...read('assembly/lib/errors.ts').matchAll(/export const ERR_(\w+): i32 = (-\d+);/g)]
    .map((m) => Number(m[2]));
  t.deepEqual(asm.sort(), Object.keys(KERNEL_ERRORS).map(Number).sort());
  const doc = read('docs/kernels.md');
  for (const [code, name] of Object.entries(KERNEL_ERRORS)) {
    t.true(doc.includes(`| ${code} | \`${name}\` |`), `${code} ${name} in docs`);
  }
});

test('BVM status codes: assembly/lib/bvm.ts, src/kernels/abi.ts and docs/bvm.md agree', (t) => {
  const asm = [...read('assembly/lib/bvm.ts').matchAll(/export const ([A-Z_]+): i32 = (\d+);/g)]
    .filter((m) => !m[1]!.startsWith('BVM_'));
  t.is(asm.length, BVM_STATUS.length);
  for (const [, name, code] of asm) t.is(BVM_STATUS[Number(code)] as string, name!.toLowerCase(), `status ${code}`);
  const doc = read('docs/bvm.md');
  BVM_STATUS.forEach((s, i) => t.true(doc.includes(`| ${i} | \`${s}\` |`), `docs/bvm.md lists ${i} ${s}`));
});

test('BVM opcodes: the ISA table, the WASM interpreter and docs/bvm.md agree', (t) => {
  const src = read('assembly/lib/bvm.ts');
  const doc = read('docs/bvm.md');
  for (const op of ISA) {
    const hexCode = `0x${op.code.toString(16).padStart(2, '0')}`;
    t.true(src.includes(`case ${hexCode}:`), `bvm.ts handles ${op.name} (${hexCode})`);
    const alone = new RegExp(`\\| ${hexCode}( / 0x[0-9a-f]{2})? \\| \`${op.name}\``);
    const second = new RegExp(`\\| 0x[0-9a-f]{2} / ${hexCode} \\| \`[a-z_]+\` / \`${op.name}\``);
    t.true(alone.test(doc) || second.test(doc), `docs/bvm.md lists ${op.name} as ${hexCode}`);
  }
});

test('the committed build matches the committed sources (build/BUILD_INFO.json)', (t) => {
  const info = JSON.parse(read('build/BUILD_INFO.json'));
  for (const [file, sha] of Object.entries(info.outputs as Record<string, string>)) {
    const bytes = readFileSync(new URL(`../../build/${file}`, import.meta.url));
    t.is(createHash('sha256').update(bytes).digest('hex'), sha, file);
  }
});
