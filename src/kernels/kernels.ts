// The typed API over one instance of the kernel module. Bytes cross the boundary through one
// reusable scratch region in the module's memory (static buffers, DESIGN.md §7: ~3.6x cheaper per
// MiB than loader-managed arrays); views are re-created whenever memory has grown.
// Argument checks live here and name the argument; the kernels trust their inputs' shapes.
// Portable (no Node APIs): the server and the embedding kit (src/kit, the package's @svc/kit/kernels)
// share this class; only where the module comes from differs (wasm.ts in Node, kit/load.ts elsewhere).
import {
  BVM_LIMITS, BVM_STATUS, KERNEL_ERRORS, MERKLE_MAX_PROOF_HASHES, PULSE_MAX_BITS, type BvmStatus, type KernelErrorName,
  type KernelExports,
} from './abi.ts';
import { instantiateKernels } from './instance.ts';
import { ServiceError } from '../errors.ts';

export interface BvmResult {
  status: BvmStatus;
  /** true when status is 'halted' */
  halted: boolean;
  steps: number;
  /** byte offset of the instruction that trapped (or of HALT) */
  pc: number;
  output: Uint8Array;
}

export interface BvmOptions {
  /** maximum steps (1..2^32-1) */
  fuel: number;
  /** maximum output bytes */
  maxOutput: number;
}

function checkBytes(name: string, v: unknown, len?: number): asserts v is Uint8Array {
  if (!(v instanceof Uint8Array)) throw new ServiceError('invalid_request', `${name} must be a Uint8Array`);
  if (len !== undefined && v.length !== len) {
    throw new ServiceError('invalid_request', `${name} must be ${len} bytes, got ${v.length}`);
  }
}

function checkUint(name: string, v: unknown, min: number, max: number): asserts v is number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new ServiceError('invalid_request', `${name} must be an integer in ${min}..${max}`);
  }
}

/** A kernel returned a negative code: the ABI's error name (docs/kernels.md) and code travel with it. */
export class KernelError extends ServiceError {
  readonly kernelCode: number;
  readonly kernelError: KernelErrorName | 'unknown';

  constructor(code: number, what: string) {
    const name = KERNEL_ERRORS[code as keyof typeof KERNEL_ERRORS] ?? 'unknown';
    super('kernel_failed', `${what}: kernel error ${code} (${name})`, { kernel_code: code, kernel_error: name });
    this.name = 'KernelError';
    this.kernelCode = code;
    this.kernelError = name;
  }
}

const kernelError = (code: number, what: string) => new KernelError(code, what);

let defaultModule: (() => WebAssembly.Module) | null = null;
/** Where Kernels.create() gets a module when given none (wasm.ts sets Node's build/kernels.wasm). */
export function setDefaultKernelModule(load: () => WebAssembly.Module): void {
  defaultModule = load;
}

const SHA_CHUNK = 32 * 1024;

export class Kernels {
  readonly raw: KernelExports;
  #u8: Uint8Array;
  #scratch = 0;
  #cap = 0;

  constructor(raw: KernelExports) {
    this.raw = raw;
    this.#u8 = new Uint8Array(raw.memory.buffer);
  }

  /** Instantiates a compiled module; in Node, by default the release build (compiled once per process). */
  static create(mod?: WebAssembly.Module): Kernels {
    const m = mod ?? defaultModule?.();
    if (!m) throw new Error('Kernels.create() needs a module here: use loadKernels() from @svc/kit/kernels');
    return new Kernels(instantiateKernels(m));
  }

  get #mem(): Uint8Array {
    if (this.#u8.buffer !== this.raw.memory.buffer) this.#u8 = new Uint8Array(this.raw.memory.buffer);
    return this.#u8;
  }

  /** Ensures the scratch region holds `n` bytes and returns its pointer. */
  #reserve(n: number): number {
    if (n > this.#cap) {
      if (this.#scratch) this.raw.free(this.#scratch);
      const cap = Math.max(n, this.#cap * 2, 4096);
      this.#scratch = this.raw.alloc(cap);
      this.#cap = cap;
    }
    return this.#scratch;
  }

  /** Lays the given inputs and output areas out in scratch; returns their pointers in order. */
  #layout(inputs: readonly Uint8Array[], outputs: readonly number[]): number[] {
    let total = 0;
    for (const b of inputs) total += (b.length + 15) & ~15;
    for (const n of outputs) total += (n + 15) & ~15;
    let p = this.#reserve(total);
    const mem = this.#mem;
    const ptrs: number[] = [];
    for (const b of inputs) { mem.set(b, p); ptrs.push(p); p += (b.length + 15) & ~15; }
    for (const n of outputs) { ptrs.push(p); p += (n + 15) & ~15; }
    return ptrs;
  }

  #read(ptr: number, len: number): Uint8Array {
    return this.#mem.slice(ptr, ptr + len);
  }

  sha256(data: Uint8Array): Uint8Array {
    checkBytes('data', data);
    if (data.length > SHA_CHUNK * 2) return this.#sha256Chunked(data);
    const [i, o] = this.#layout([data], [32]) as [number, number];
    this.raw.sha256_digest(i, data.length, o);
    return this.#read(o, 32);
  }

  /**
   * Large inputs are copied and hashed 32 KiB at a time so each chunk is still in cache when it
   * is hashed (measured at 1 MiB: whole copy then hash ~390 MB/s, 32 KiB chunks ~405 MB/s).
   */
  #sha256Chunked(data: Uint8Array): Uint8Array {
    const ctxBytes = this.raw.SHA256_CTX_BYTES.value as number;
    const ctx = this.#reserve(ctxBytes + 32 + SHA_CHUNK);
    const out = ctx + ctxBytes, buf = out + 32;
    this.raw.sha256_init(ctx);
    for (let at = 0; at < data.length; at += SHA_CHUNK) {
      const chunk = data.subarray(at, at + SHA_CHUNK);
      this.#mem.set(chunk, buf);
      this.raw.sha256_update(ctx, buf, chunk.length);
    }
    this.raw.sha256_final(ctx, out);
    return this.#read(out, 32);
  }

  hmacSha256(key: Uint8Array, message: Uint8Array): Uint8Array {
    checkBytes('key', key); checkBytes('message', message);
    const [k, m, o] = this.#layout([key, message], [32]) as [number, number, number];
    this.raw.hmac_sha256(k, key.length, m, message.length, o);
    return this.#read(o, 32);
  }

  /**
   * HMAC-SHA256 under one fixed key, its two padded key blocks absorbed once (RFC 2104 §4 allows the
   * intermediate results to be precomputed): each MAC then hashes only the message and the inner
   * digest — for a short message half the compressions of hmacSha256, and no key copied per call.
   * The two contexts stay in this instance's memory for its life: make one per key, not per call.
   */
  hmacSha256Keyed(key: Uint8Array): (message: Uint8Array) => Uint8Array {
    checkBytes('key', key);
    const ctxBytes = this.raw.SHA256_CTX_BYTES.value as number;
    const block = new Uint8Array(64);
    block.set(key.length > 64 ? this.sha256(key) : key);
    const pads = this.raw.alloc(2 * ctxBytes); // [inner ctx, outer ctx]
    for (const [ctx, x] of [[pads, 0x36], [pads + ctxBytes, 0x5c]] as const) {
      const [b] = this.#layout([block.map((v) => v ^ x)], []) as [number];
      this.raw.sha256_init(ctx);
      this.raw.sha256_update(ctx, b, 64);
      this.#mem.fill(0, b, b + 64);
    }
    block.fill(0);
    return (message) => {
      checkBytes('message', message);
      const [m, w, o] = this.#layout([message], [ctxBytes, 32]) as [number, number, number];
      const mem = this.#mem;
      mem.copyWithin(w, pads, pads + ctxBytes);
      this.raw.sha256_update(w, m, message.length);
      this.raw.sha256_final(w, o);
      mem.copyWithin(w, pads + ctxBytes, pads + 2 * ctxBytes);
      this.raw.sha256_update(w, o, 32);
      this.raw.sha256_final(w, o);
      return this.#read(o, 32);
    };
  }

  chacha20(key: Uint8Array, nonce: Uint8Array, counter: number, data: Uint8Array): Uint8Array {
    checkBytes('key', key, 32); checkBytes('nonce', nonce, 12); checkBytes('data', data);
    checkUint('counter', counter, 0, 0xffff_ffff);
    const [k, n, d] = this.#layout([key, nonce, data], []) as [number, number, number];
    this.raw.chacha20_xor(k, n, counter, d, data.length, d);
    return this.#read(d, data.length);
  }

  hchacha20(key: Uint8Array, nonce16: Uint8Array): Uint8Array {
    checkBytes('key', key, 32); checkBytes('nonce', nonce16, 16);
    const [k, n, o] = this.#layout([key, nonce16], [32]) as [number, number, number];
    this.raw.hchacha20_subkey(k, n, o);
    return this.#read(o, 32);
  }

  poly1305(key: Uint8Array, message: Uint8Array): Uint8Array {
    checkBytes('key', key, 32); checkBytes('message', message);
    const [k, m, o] = this.#layout([key, message], [16]) as [number, number, number];
    this.raw.poly1305_mac(k, m, message.length, o);
    return this.#read(o, 16);
  }

  #seal(x: boolean, key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Uint8Array {
    checkBytes('key', key, 32); checkBytes('nonce', nonce, x ? 24 : 12);
    checkBytes('plaintext', plaintext); checkBytes('aad', aad);
    const [k, n, a, m] = this.#layout([key, nonce, aad, plaintext], [16]) as [number, number, number, number];
    const fn = x ? this.raw.xchacha20poly1305_seal : this.raw.chacha20poly1305_seal;
    const r = fn(k, n, a, aad.length, m, plaintext.length, m); // in place: the 16-byte pad after m holds the tag
    if (r < 0) throw kernelError(r, 'seal');
    this.#mem.fill(0, k, k + 32);
    return this.#read(m, r);
  }

  /** Returns the plaintext, or null when the ciphertext is not authentic. */
  #open(x: boolean, key: Uint8Array, nonce: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array | null {
    checkBytes('key', key, 32); checkBytes('nonce', nonce, x ? 24 : 12);
    checkBytes('ciphertext', sealed); checkBytes('aad', aad);
    if (sealed.length < 16) return null;
    const [k, n, a, c] = this.#layout([key, nonce, aad, sealed], []) as [number, number, number, number];
    const fn = x ? this.raw.xchacha20poly1305_open : this.raw.chacha20poly1305_open;
    const r = fn(k, n, a, aad.length, c, sealed.length, c);
    this.#mem.fill(0, k, k + 32);
    if (r === -2) return null;
    if (r < 0) throw kernelError(r, 'open');
    return this.#read(c, r);
  }

  /** XChaCha20-Poly1305 seal: ciphertext ‖ 16-byte tag. */
  xchachaSeal(
    key: Uint8Array, nonce24: Uint8Array, plaintext: Uint8Array, aad: Uint8Array = new Uint8Array(0),
  ): Uint8Array {
    return this.#seal(true, key, nonce24, plaintext, aad);
  }
  xchachaOpen(
    key: Uint8Array, nonce24: Uint8Array, sealed: Uint8Array, aad: Uint8Array = new Uint8Array(0),
  ): Uint8Array | null {
    return this.#open(true, key, nonce24, sealed, aad);
  }
  /** ChaCha20-Poly1305 (RFC 8439) seal with a 12-byte nonce. */
  chachaSeal(
    key: Uint8Array, nonce12: Uint8Array, plaintext: Uint8Array, aad: Uint8Array = new Uint8Array(0),
  ): Uint8Array {
    return this.#seal(false, key, nonce12, plaintext, aad);
  }
  chachaOpen(
    key: Uint8Array, nonce12: Uint8Array, sealed: Uint8Array, aad: Uint8Array = new Uint8Array(0),
  ): Uint8Array | null {
    return this.#open(false, key, nonce12, sealed, aad);
  }

  merkleLeafHash(data: Uint8Array): Uint8Array {
    checkBytes('data', data);
    const [i, o] = this.#layout([data], [32]) as [number, number];
    this.raw.merkle_leaf_hash(i, data.length, o);
    return this.#read(o, 32);
  }

  merkleNodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
    checkBytes('left', left, 32); checkBytes('right', right, 32);
    const [l, r, o] = this.#layout([left, right], [32]) as [number, number, number];
    this.raw.merkle_node_hash(l, r, o);
    return this.#read(o, 32);
  }

  #leaves(leafHashes: readonly Uint8Array[]): Uint8Array {
    const flat = new Uint8Array(leafHashes.length * 32);
    leafHashes.forEach((h, i) => { checkBytes(`leafHashes[${i}]`, h, 32); flat.set(h, i * 32); });
    return flat;
  }

  /** RFC 6962 MTH over leaf hashes (use merkleLeafHash on raw entries first). */
  merkleRoot(leafHashes: readonly Uint8Array[]): Uint8Array {
    const flat = this.#leaves(leafHashes);
    const [l, o] = this.#layout([flat], [32]) as [number, number];
    this.raw.merkle_root(l, leafHashes.length, o);
    return this.#read(o, 32);
  }

  #proofOut(raw: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (let i = 0; i < raw.length; i += 32) out.push(raw.slice(i, i + 32));
    return out;
  }

  inclusionProof(leafHashes: readonly Uint8Array[], index: number): Uint8Array[] {
    checkUint('index', index, 0, Math.max(0, leafHashes.length - 1));
    if (leafHashes.length === 0) throw new ServiceError('invalid_request', 'the tree is empty');
    const flat = this.#leaves(leafHashes);
    const cap = MERKLE_MAX_PROOF_HASHES * 32;
    const [l, o] = this.#layout([flat], [cap]) as [number, number];
    const r = this.raw.merkle_inclusion_proof(l, leafHashes.length, index, o, cap);
    if (r < 0) throw kernelError(r, 'inclusion proof');
    return this.#proofOut(this.#read(o, r));
  }

  consistencyProof(leafHashes: readonly Uint8Array[], oldSize: number): Uint8Array[] {
    checkUint('oldSize', oldSize, 0, leafHashes.length);
    const flat = this.#leaves(leafHashes);
    const cap = MERKLE_MAX_PROOF_HASHES * 32;
    const [l, o] = this.#layout([flat], [cap]) as [number, number];
    const r = this.raw.merkle_consistency_proof(l, leafHashes.length, oldSize, o, cap);
    if (r < 0) throw kernelError(r, 'consistency proof');
    return this.#proofOut(this.#read(o, r));
  }

  #flatProof(proof: readonly Uint8Array[]): Uint8Array {
    const flat = new Uint8Array(proof.length * 32);
    proof.forEach((h, i) => { checkBytes(`proof[${i}]`, h); if (h.length === 32) flat.set(h, i * 32); });
    return flat;
  }

  /** RFC 9162 §2.1.3.2. Returns {ok} or {ok:false, reason}. Hashes of the wrong size never verify. */
  verifyInclusion(
    leafHash: Uint8Array,
    index: bigint | number,
    treeSize: bigint | number,
    proof: readonly Uint8Array[],
    root: Uint8Array,
  ): { ok: true } | { ok: false; reason: string } {
    checkBytes('leafHash', leafHash); checkBytes('root', root);
    if (leafHash.length !== 32 || root.length !== 32 || proof.some((p) => p.length !== 32)) {
      return { ok: false, reason: 'hash_size' };
    }
    if (proof.length > MERKLE_MAX_PROOF_HASHES) return { ok: false, reason: 'proof_too_long' };
    const idx = BigInt(index), size = BigInt(treeSize);
    if (idx < 0n || size < 0n || idx >= 1n << 64n || size >= 1n << 64n) return { ok: false, reason: 'out_of_range' };
    const [lf, p, rt] = this.#layout([leafHash, this.#flatProof(proof), root], []) as [number, number, number];
    const r = this.raw.merkle_verify_inclusion(
      lf, BigInt.asIntN(64, idx), BigInt.asIntN(64, size), p, proof.length * 32, rt,
    );
    return r === 1 ? { ok: true } : { ok: false, reason: KERNEL_ERRORS[r as -3] ?? 'invalid_proof' };
  }

  /** RFC 9162 §2.1.4.2. */
  verifyConsistency(
    size1: bigint | number,
    size2: bigint | number,
    root1: Uint8Array,
    root2: Uint8Array,
    proof: readonly Uint8Array[],
  ): { ok: true } | { ok: false; reason: string } {
    checkBytes('root1', root1); checkBytes('root2', root2);
    const s1 = BigInt(size1), s2 = BigInt(size2);
    // equal sizes: the roots must be identical and the proof empty, whatever their length
    if (s1 === s2 && s1 > 0n) {
      const same = root1.length === root2.length && root1.every((b, i) => b === root2[i]);
      return proof.length === 0 && same ? { ok: true } : { ok: false, reason: 'invalid_proof' };
    }
    if (root1.length !== 32 || root2.length !== 32 || proof.some((p) => p.length !== 32)) {
      return { ok: false, reason: 'hash_size' };
    }
    if (proof.length > MERKLE_MAX_PROOF_HASHES) return { ok: false, reason: 'proof_too_long' };
    if (s1 < 0n || s2 < 0n || s1 >= 1n << 64n || s2 >= 1n << 64n) return { ok: false, reason: 'out_of_range' };
    const [a, b, p] = this.#layout([root1, root2, this.#flatProof(proof)], []) as [number, number, number];
    const r = this.raw.merkle_verify_consistency(
      BigInt.asIntN(64, s1), BigInt.asIntN(64, s2), a, b, p, proof.length * 32,
    );
    return r === 1 ? { ok: true } : { ok: false, reason: KERNEL_ERRORS[r as -3] ?? 'invalid_proof' };
  }

  /** Pulse expansion (docs/kernels.md §pulse): ceil(bits/8) bytes. */
  pulseExpand(seed: Uint8Array, context: Uint8Array, bits: number): Uint8Array {
    checkBytes('seed', seed); checkBytes('context', context);
    checkUint('bits', bits, 1, PULSE_MAX_BITS);
    const n = (bits + 7) >>> 3;
    const [s, c, o] = this.#layout([seed, context], [n]) as [number, number, number];
    const r = this.raw.pulse_expand(s, seed.length, c, context.length, bits, o, n);
    if (r < 0) throw kernelError(r, 'pulse');
    return this.#read(o, r);
  }

  /** Runs a BVM image. Traps are results, not exceptions. */
  bvmRun(image: Uint8Array, input: Uint8Array, opts: BvmOptions): BvmResult {
    checkBytes('image', image); checkBytes('input', input);
    checkUint('fuel', opts.fuel, 0, BVM_LIMITS.maxFuel);
    checkUint('maxOutput', opts.maxOutput, 0, 0x7fff_ffff);
    if (input.length > 0xffff_ffff) throw new ServiceError('invalid_request', 'input too large');
    const [im, inp, out, res] = this.#layout([image, input], [opts.maxOutput, 16]) as [number, number, number, number];
    const status = this.raw.bvm_run(im, image.length, inp, input.length, opts.fuel, opts.maxOutput, out, res);
    const dv = new DataView(this.raw.memory.buffer, res, 16);
    const steps = dv.getUint32(4, true), outLen = dv.getUint32(8, true), pc = dv.getUint32(12, true);
    const name = BVM_STATUS[status];
    if (name === undefined) throw kernelError(status, 'bvm');
    return { status: name, halted: status === 0, steps, pc, output: this.#read(out, outLen) };
  }

  /** Streaming SHA-256. Its context lives in JavaScript memory, so an abandoned stream leaks nothing. */
  createSha256(): Sha256Stream {
    return new Sha256Stream(this);
  }

  /** @internal Sha256Stream: runs one streaming step over a context copied in and back out. */
  _sha256Step(ctx: Uint8Array, data: Uint8Array | null): Uint8Array | null {
    if (data === null) {
      const [c, o] = this.#layout([ctx], [32]) as [number, number];
      this.raw.sha256_final(c, o);
      return this.#read(o, 32);
    }
    for (let at = 0; at < data.length; at += SHA_CHUNK) {
      const chunk = data.subarray(at, at + SHA_CHUNK);
      const [c, d] = this.#layout([ctx, chunk], []) as [number, number];
      this.raw.sha256_update(c, d, chunk.length);
      ctx.set(this.#mem.subarray(c, c + ctx.length));
    }
    return null;
  }
}

export class Sha256Stream {
  readonly #k: Kernels;
  #ctx: Uint8Array | null;

  constructor(k: Kernels) {
    this.#k = k;
    const bytes = k.raw.SHA256_CTX_BYTES.value as number;
    const p = k.raw.alloc(bytes);
    k.raw.sha256_init(p);
    this.#ctx = new Uint8Array(k.raw.memory.buffer).slice(p, p + bytes);
    k.raw.free(p);
  }

  update(data: Uint8Array): this {
    checkBytes('data', data);
    if (!this.#ctx) throw new ServiceError('invalid_request', 'hash already finalized');
    this.#k._sha256Step(this.#ctx, data);
    return this;
  }

  digest(): Uint8Array {
    if (!this.#ctx) throw new ServiceError('invalid_request', 'hash already finalized');
    const d = this.#k._sha256Step(this.#ctx, null)!;
    this.#ctx = null;
    return d;
  }
}
