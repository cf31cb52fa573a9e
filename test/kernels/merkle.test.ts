import test from 'ava';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { Kernels } from '../../src/kernels/index.ts';
import { hex, ownVectors, prng, readJson, sharedPath, unhex } from '../helpers.ts';
import { testNeeding } from '../support/needs.ts';
import { H, refPath, refRoot, refSubproof } from '../reference/merkle-ref.ts';

const k = Kernels.create();


test('Merkle: RFC 6962 reference tree roots for n = 1..8, empty tree, leaf/node hashing', (t) => {
  const v = ownVectors('merkle.json');
  const leaves = v.leaves.map((x: string) => k.merkleLeafHash(unhex(x)));
  for (let n = 1; n <= 8; n++) t.is(hex(k.merkleRoot(leaves.slice(0, n))), v.roots[n - 1], `n=${n}`);
  t.is(hex(k.merkleRoot([])), v.empty_root);
  t.is(hex(k.merkleLeafHash(new Uint8Array(0))), hex(H(Uint8Array.of(0))));
  t.is(hex(k.merkleNodeHash(leaves[0], leaves[1])), hex(H(Uint8Array.of(1), leaves[0], leaves[1])));
});

test('Merkle: roots, inclusion and consistency proofs equal the RFC 6962 recursion on random trees;'
  + ' all verify', (t) => {
  const r = prng(6962);
  for (const n of [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 129, 257, 1000]) {
    const leaves = Array.from({ length: n }, () => k.merkleLeafHash(r.bytes(r.int(50))));
    const root = k.merkleRoot(leaves);
    t.is(hex(root), hex(refRoot(leaves)), `root n=${n}`);
    for (const i of new Set([0, n - 1, r.int(n), r.int(n)])) {
      const proof = k.inclusionProof(leaves, i);
      t.deepEqual(proof.map(hex), refPath(i, leaves).map(hex), `path ${i}/${n}`);
      t.deepEqual(k.verifyInclusion(leaves[i]!, i, n, proof, root), { ok: true });
      if (proof.length) {
        const bad = proof.map((p) => p.slice()); bad[0]![0]! ^= 1;
        t.false(k.verifyInclusion(leaves[i]!, i, n, bad, root).ok);
      }
      t.false(k.verifyInclusion(leaves[i]!, i + 1, n, proof, root).ok, 'wrong index');
    }
    for (const m of new Set([1, n, r.int(n) + 1, Math.ceil(n / 2)])) {
      const proof = k.consistencyProof(leaves, m);
      t.deepEqual(proof.map(hex), (m === n ? [] : refSubproof(m, leaves, true)).map(hex), `consistency ${m}->${n}`);
      const oldRoot = k.merkleRoot(leaves.slice(0, m));
      t.deepEqual(k.verifyConsistency(m, n, oldRoot, root, proof), { ok: true });
      if (proof.length) t.false(k.verifyConsistency(m, n, root, oldRoot, proof).ok, 'swapped roots');
    }
  }
});

test('Merkle: any (index, size) proof verifies only for its own leaf (property)', (t) => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 70 }), fc.nat(), fc.nat(), (n, ia, ib) => {
    const leaves = Array.from({ length: n }, (_, i) => k.merkleLeafHash(Uint8Array.of(i, n)));
    const root = k.merkleRoot(leaves);
    const i = ia % n, j = ib % n;
    const proof = k.inclusionProof(leaves, i);
    return k.verifyInclusion(leaves[j]!, i, n, proof, root).ok === (i === j);
  }), { numRuns: 200 });
  t.pass();
});

test('Merkle: malformed proofs are rejected with a reason, never thrown', (t) => {
  const leaves = [1, 2, 3].map((i) => k.merkleLeafHash(Uint8Array.of(i)));
  const root = k.merkleRoot(leaves);
  const proof = k.inclusionProof(leaves, 0);
  t.deepEqual(
    k.verifyInclusion(leaves[0]!, 0, 3, [...proof, new Uint8Array(31)], root),
    { ok: false, reason: 'hash_size' },
  );
  t.deepEqual(k.verifyInclusion(leaves[0]!, 3, 3, proof, root), { ok: false, reason: 'invalid_proof' });
  t.deepEqual(
    k.verifyInclusion(leaves[0]!, 0, 3, Array(65).fill(new Uint8Array(32)), root),
    { ok: false, reason: 'proof_too_long' },
  );
  t.deepEqual(k.verifyInclusion(leaves[0]!, 0, 3, proof, new Uint8Array(9)), { ok: false, reason: 'hash_size' });
  t.false(k.verifyConsistency(3, 2, root, root, []).ok);
  t.throws(() => k.inclusionProof(leaves, 3), { message: /index must be/ });
});

// transparency-dev/merkle testdata: every happy path verifies, every mutation fails.
function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => { const p = join(dir, n); return statSync(p).isDirectory() ? walk(p) : [p]; });
}
const b64 = (s: string | null | undefined) => new Uint8Array(Buffer.from(s ?? '', 'base64'));
for (const kind of ['inclusion', 'consistency'] as const) {
  const found = sharedPath(`merkle-rfc6962/${kind}`);
  const need = { what: `../shared/vectors/merkle-rfc6962/${kind}`, present: !!found, hint: 'set SVC_SHARED_VECTORS' };
  testNeeding(test, `Merkle: transparency-dev ${kind} vectors (happy paths verify, all mutations fail)`, need, (t) => {
    const dir = found!;
    let pass = 0, fail = 0;
    for (const f of walk(dir).filter((p) => p.endsWith('.json'))) {
      const v = readJson(f);
      const proof = (v.proof ?? []).map(b64);
      const res = kind === 'inclusion'
        ? k.verifyInclusion(b64(v.leafHash), BigInt(v.leafIdx), BigInt(v.treeSize), proof, b64(v.root))
        : k.verifyConsistency(BigInt(v.size1), BigInt(v.size2), b64(v.root1), b64(v.root2), proof);
      t.is(res.ok, !v.wantErr, `${f.slice(dir.length)}: ${v.desc}`);
      if (res.ok) pass++; else fail++;
    }
    t.true(pass >= 6 && fail >= 90, `${pass} pass / ${fail} fail`);
  });
}
