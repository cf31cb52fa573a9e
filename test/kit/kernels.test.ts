// The kit's kernel API (@svc/kit/kernels) from source: loaded portably, the standard answers, typed
// errors carrying the ABI name, and memory that does not grow across a million calls.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { createHash, createHmac } from 'node:crypto';
import {
  KernelError, KERNELS_WASM_URL, ServiceError, assemble, loadKernels, type Kernels,
} from '../../src/kit/kernels.ts';
import { kernelWasmPath } from '../../src/kernels/index.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const utf8 = (s: string) => new TextEncoder().encode(s);

test('loadKernels: default file, bytes, a compiled module and a Response all give working kernels', async (t) => {
  t.regex(KERNELS_WASM_URL.href, /\/kernels\.wasm$/);
  const bytes = readFileSync(kernelWasmPath());
  const sources = [
    await loadKernels(), await loadKernels(bytes), await loadKernels(new WebAssembly.Module(bytes)),
    await loadKernels(new Response(bytes, { headers: { 'content-type': 'application/wasm' } })),
  ];
  t.is(sources[0], await loadKernels(), 'the shipped module is loaded once');
  for (const k of sources) {
    t.is(hex(k.sha256(utf8('abc'))), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  }
  await t.throwsAsync(loadKernels(new Uint8Array([0, 97, 115, 109])));
});

test('the typed API: hashes, HMAC, AEAD, Merkle, pulse and BVM; ABI errors are KernelError', async (t) => {
  const k: Kernels = await loadKernels();
  const data = utf8('x'.repeat(200_000));
  t.is(hex(k.sha256(data)), createHash('sha256').update(data).digest('hex'));
  const s = k.createSha256();
  for (let i = 0; i < data.length; i += 70_001) s.update(data.subarray(i, i + 70_001));
  t.is(hex(s.digest()), hex(k.sha256(data)));
  t.throws(() => s.digest(), { instanceOf: ServiceError });
  t.is(hex(k.hmacSha256(utf8('key'), data)), createHmac('sha256', 'key').update(data).digest('hex'));
  const key = k.sha256(utf8('k')), nonce = k.sha256(utf8('n')).slice(0, 24);
  const sealed = k.xchachaSeal(key, nonce, data, utf8('aad'));
  t.deepEqual(k.xchachaOpen(key, nonce, sealed, utf8('aad')), data);
  sealed[3]! ^= 1;
  t.is(k.xchachaOpen(key, nonce, sealed, utf8('aad')), null);
  const leaves = [0, 1, 2, 3, 4].map((i) => k.merkleLeafHash(Uint8Array.of(i)));
  const root = k.merkleRoot(leaves);
  t.true(k.verifyInclusion(leaves[3]!, 3, 5, k.inclusionProof(leaves, 3), root).ok);
  t.true(k.verifyConsistency(2, 5, k.merkleRoot(leaves.slice(0, 2)), root, k.consistencyProof(leaves, 2)).ok);
  t.is(k.pulseExpand(new Uint8Array(32), new Uint8Array(0), 12).length, 2);
  const image = assemble('push8 40\npush8 2\nadd\nout8\nhalt').image;
  const r = k.bvmRun(image, new Uint8Array(0), { fuel: 100, maxOutput: 4 });
  t.deepEqual([r.status, hex(r.output)], ['halted', '2a']);
  t.throws(() => k.sha256('abc' as never), { instanceOf: ServiceError, message: /data must be a Uint8Array/ });
  // a negative ABI return: the raw kernel refuses 0 bits; the typed error carries its name
  const e = t.throws(() => {
    const p = k.raw.alloc(64);
    const code = k.raw.pulse_expand(p, 32, p, 0, 0, p, 8);
    if (code < 0) throw new KernelError(code, 'pulse');
  }, { instanceOf: KernelError });
  t.is(e?.kernelError, 'invalid_input');
  t.is(e?.kernelCode, -1);
});

test('no leaks: a million calls (and abandoned streams) leave the module memory where it was', async (t) => {
  const k = await loadKernels(readFileSync(kernelWasmPath()));
  const small = utf8('abc'), key = new Uint8Array(32), nonce = new Uint8Array(24);
  const warm = () => {
    k.sha256(small); k.hmacSha256(key, small); k.xchachaOpen(key, nonce, k.xchachaSeal(key, nonce, small), undefined);
    k.pulseExpand(key, small, 256); k.createSha256().update(small);
  };
  for (let i = 0; i < 1000; i++) warm();
  const pages = k.raw.memory.buffer.byteLength;
  for (let i = 0; i < 1_000_000; i++) {
    k.sha256(small);
    if (i % 10 === 0) warm();
  }
  t.is(k.raw.memory.buffer.byteLength, pages, 'memory did not grow');
});
