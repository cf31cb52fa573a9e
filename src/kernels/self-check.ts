// Known-answer self-check of the loaded kernels (run at service start and by `svcd selfcheck`):
// one published vector per kernel, so a corrupt or mismatched build/kernels.wasm is refused
// before it can produce a receipt. The full evidence lives in the test suite.
import { createHash } from 'node:crypto';
import { Kernels } from './kernels.ts';
import { buildImage } from './bvm-assembler.ts';
import { compileKernels } from './wasm.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const unhex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));
const utf8 = (s: string) => new TextEncoder().encode(s);

export interface SelfCheckResult { name: string; ok: boolean }

export function selfCheck(k: Kernels = Kernels.create(compileKernels())): SelfCheckResult[] {
  const checks: [string, () => boolean][] = [
    ['sha256 (FIPS 180-4 "abc")', () =>
      hex(k.sha256(utf8('abc'))) === 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    ['hmac-sha256 (RFC 4231 case 2)', () => {
      const mac = k.hmacSha256(utf8('Jefe'), utf8('what do ya want for nothing?'));
      return hex(mac) === '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843';
    }],
    ['poly1305 (RFC 8439 §2.5.2)', () => {
      const key = unhex('85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b');
      return hex(k.poly1305(key, utf8('Cryptographic Forum Research Group'))) === 'a8061dc1305136c6c22b8baf0c0127a9';
    }],
    ['hchacha20 (draft-irtf-cfrg-xchacha §2.2.1)', () => {
      const key = unhex('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f');
      const subkey = k.hchacha20(key, unhex('000000090000004a0000000031415927'));
      return hex(subkey) === '82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc';
    }],
    ['xchacha20-poly1305 round trip', () => {
      const key = k.sha256(utf8('key')), nonce = k.sha256(utf8('nonce')).subarray(0, 24), msg = utf8('self-check');
      const sealed = k.xchachaSeal(key, nonce, msg, utf8('aad'));
      const bad = sealed.slice(); bad[0]! ^= 1;
      return hex(k.xchachaOpen(key, nonce, sealed, utf8('aad')) ?? new Uint8Array(0)) === hex(msg)
        && k.xchachaOpen(key, nonce, bad, utf8('aad')) === null;
    }],
    ['merkle (RFC 6962 reference tree, 8 leaves)', () => {
      const leaves = [
        '', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f',
      ].map((h) => k.merkleLeafHash(unhex(h)));
      const root = k.merkleRoot(leaves);
      return hex(root) === '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328'
        && k.verifyInclusion(leaves[5]!, 5, 8, k.inclusionProof(leaves, 5), root).ok;
    }],
    ['pulse expansion (bits bound, zero-padded)', () => {
      // independent oracle: node:crypto over the documented layout (docs/kernels.md §pulse)
      const be = (v: number) => { const b = Buffer.alloc(4); b.writeUInt32BE(v); return b; };
      const block = createHash('sha256').update('svc/pulse/v1')
        .update(be(12)).update(be(32)).update(Buffer.alloc(32)).update(be(0)).update(be(0))
        .digest();
      const want = Buffer.from([block[0]!, block[1]! & 0xf0]);
      return hex(k.pulseExpand(new Uint8Array(32), new Uint8Array(0), 12)) === want.toString('hex');
    }],
    ['bvm (push/add/out8/halt; out_of_fuel)', () => {
      const img = buildImage(Uint8Array.of(0x03, 40, 0x03, 2, 0x10, 0x4b, 0x00));
      const r = k.bvmRun(img, new Uint8Array(0), { fuel: 100, maxOutput: 4 });
      const loop = buildImage(Uint8Array.of(0x38, 0, 0, 0, 0));
      const spin = k.bvmRun(loop, new Uint8Array(0), { fuel: 1000, maxOutput: 0 });
      return r.status === 'halted' && r.steps === 5 && hex(r.output) === '2a'
        && spin.status === 'out_of_fuel' && spin.steps === 1000;
    }],
  ];
  return checks.map(([name, fn]) => {
    try { return { name, ok: fn() }; } catch { return { name, ok: false }; }
  });
}
