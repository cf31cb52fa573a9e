// Runtime-neutral vector runner: plain JavaScript, no imports, nothing but the standard
// WebAssembly API and the raw ABI of build/kernels.wasm (docs/kernels.md). The same file runs in
// Node, Deno and a browser page; each returns the same JSON, which the test compares byte for byte.
// It doubles as the embedding example: this is all a host needs to call the kernels.

const hexOf = (u8) => Array.from(u8, (b) => b.toString(16).padStart(2, '0')).join('');
const bytesOf = (hex) => {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
};

/** Instantiates the kernels and returns small helpers over the raw ABI. */
export async function loadKernels(wasmBytes) {
  const { instance } = await WebAssembly.instantiate(wasmBytes, {
    env: { abort: (_m, _f, line, col) => { throw new Error(`kernel abort at ${line}:${col}`); } },
  });
  const x = instance.exports;
  const mem = () => new Uint8Array(x.memory.buffer); // re-created after every call that may grow memory
  const put = (bytes) => { const p = x.alloc(bytes.length); mem().set(bytes, p); return p; };
  const take = (p, n) => { const out = mem().slice(p, p + n); return out; };
  return { x, mem, put, take };
}

export async function runVectors(wasmBytes, bundle) {
  const { x, put, take } = await loadKernels(wasmBytes);
  const out = {};
  const call = (name, fn) => { out[name] = fn(); };

  for (const v of bundle.sha256) call(`sha256/${v.name}`, () => {
    const m = put(bytesOf(v.msg)), o = x.alloc(32);
    x.sha256_digest(m, v.msg.length / 2, o);
    return hexOf(take(o, 32));
  });
  for (const v of bundle.hmac) call(`hmac/${v.name}`, () => {
    const kp = put(bytesOf(v.key)), mp = put(bytesOf(v.data)), o = x.alloc(32);
    x.hmac_sha256(kp, v.key.length / 2, mp, v.data.length / 2, o);
    return hexOf(take(o, 32));
  });
  for (const v of bundle.aead) call(`aead/${v.name}`, () => {
    const kp = put(bytesOf(v.key)), np = put(bytesOf(v.nonce)), ap = put(bytesOf(v.aad));
    const pt = bytesOf(v.plaintext), mp = put(pt), o = x.alloc(pt.length + 16);
    const seal = v.x ? x.xchacha20poly1305_seal : x.chacha20poly1305_seal;
    const n = seal(kp, np, ap, v.aad.length / 2, mp, pt.length, o);
    const sealed = take(o, n);
    const open = v.x ? x.xchacha20poly1305_open : x.chacha20poly1305_open;
    const back = x.alloc(pt.length + 1);
    const m = open(kp, np, ap, v.aad.length / 2, o, n, back);
    return { sealed: hexOf(sealed), opened: m >= 0 ? hexOf(take(back, m)) : m };
  });
  call('merkle/roots', () => bundle.merkle.roots.map((_, i) => {
    const n = i + 1;
    const leaves = x.alloc(32 * n);
    bundle.merkle.leaves.slice(0, n).forEach((leaf, j) => { const p = put(bytesOf(leaf)); x.merkle_leaf_hash(p, leaf.length / 2, leaves + 32 * j); });
    const o = x.alloc(32);
    x.merkle_root(leaves, n, o);
    return hexOf(take(o, 32));
  }));
  call('merkle/proofs', () => {
    const n = bundle.merkle.leaves.length;
    const leaves = x.alloc(32 * n);
    bundle.merkle.leaves.forEach((leaf, j) => { const p = put(bytesOf(leaf)); x.merkle_leaf_hash(p, leaf.length / 2, leaves + 32 * j); });
    const root = x.alloc(32); x.merkle_root(leaves, n, root);
    const res = [];
    for (let i = 0; i < n; i++) {
      const pr = x.alloc(2048);
      const len = x.merkle_inclusion_proof(leaves, n, i, pr, 2048);
      res.push([hexOf(take(pr, len)), x.merkle_verify_inclusion(leaves + 32 * i, BigInt(i), BigInt(n), pr, len, root)]);
    }
    return res;
  });
  for (const v of bundle.pulse) call(`pulse/${v.bits}`, () => {
    const s = put(bytesOf(v.seed)), c = put(bytesOf(v.context)), o = x.alloc((v.bits + 7) >> 3);
    const n = x.pulse_expand(s, v.seed.length / 2, c, v.context.length / 2, v.bits, o, (v.bits + 7) >> 3);
    return hexOf(take(o, n));
  });
  for (const v of bundle.bvm) call(`bvm/${v.name}`, () => {
    const img = bytesOf(v.image), inp = bytesOf(v.input);
    const ip = put(img), np = put(inp), op = x.alloc(v.maxOutput + 1), rp = x.alloc(16);
    const status = x.bvm_run(ip, img.length, np, inp.length, v.fuel, v.maxOutput, op, rp);
    const r = new DataView(x.memory.buffer, rp, 16);
    return { status, steps: r.getUint32(4, true), pc: r.getUint32(12, true), output: hexOf(take(op, r.getUint32(8, true))) };
  });
  return out;
}
