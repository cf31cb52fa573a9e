// An append-only RFC 6962 Merkle log with C2SP signed checkpoints (TIMESTAMP_PROOF and
// MACHINE_EVENT_LOG each keep one). Storage keeps every complete subtree hash (level, index), so an
// append writes O(log n) nodes and a root or inclusion proof reads O(log² n) at worst — never the
// whole tree. Appends to one log are serialized; each append is one synced batch.
// An entry appended for an execution whose own batch then fails stays in the log (logs never
// shrink); it is public data and charges nothing. On a shared store each node keeps its own logs (their
// origin names the node) under keys prefixed with its node id, and each entry is created, never
// overwritten: a second appender of one log fails its append and reads the size afresh.
import type { Kernels } from '../kernels/index.ts';
import { checkpointBody, formatTlogProof, noteKeyHash, signatureLine } from '../protocol/tlog-format.ts';
import { key, numPart } from '../store/key-codec.ts';
import { create, put, type Op, type Store } from '../store/store.ts';
import { KeyedMutex } from './keyed-mutex.ts';
import type { NodeIdentity } from './node-identity.ts';

export interface Appended {
  index: number;
  size: number;
  leafHash: Uint8Array;
  root: Uint8Array;
  proof: Uint8Array[];
  checkpoint: string;
  tlogProof: string;
  /** the key that signed the checkpoint: id and raw public key, base64url */
  keyId: string;
  publicKey: string;
}

const lvl = (l: number) => l.toString(16).padStart(2, '0');

export class TransparencyLog {
  readonly name: string;
  readonly origin: string;
  readonly #store: Store;
  readonly #k: Kernels;
  readonly #id: NodeIdentity;
  readonly #lock = new KeyedMutex();
  #size: number | null = null;
  /** the name its records are stored under: the log's name, after the node id on a shared store */
  readonly #at: string;

  constructor(store: Store, kernels: Kernels, identity: NodeIdentity, name: string, origin: string) {
    this.#store = store; this.#k = kernels; this.#id = identity;
    this.name = name; this.origin = origin;
    const scope = store.nodeScope(identity.nodeId);
    this.#at = scope ? `${scope}:${name}` : name;
  }

  async size(): Promise<number> {
    if (this.#size === null) {
      const meta = await this.#store.get('meta', `tlog_size!${this.#at}`);
      this.#size = (meta?.size as number | undefined) ?? 0;
    }
    return this.#size;
  }

  #nodeKey(level: number, index: number): string {
    return key(this.#at, lvl(level), numPart(index));
  }

  async #node(level: number, index: number, overlay: Map<string, Uint8Array>): Promise<Uint8Array> {
    const k = this.#nodeKey(level, index);
    const o = overlay.get(k);
    if (o) return o;
    const v = await this.#store.get('tlog_nodes', k);
    if (!v) throw new Error(`tlog ${this.name}: missing node ${level}/${index}`);
    return Buffer.from(v.h as string, 'base64');
  }

  /** MTH of leaves [lo, hi) from stored complete subtrees (RFC 6962 §2.1 split). */
  async #mth(lo: number, hi: number, overlay: Map<string, Uint8Array>): Promise<Uint8Array> {
    const n = hi - lo;
    if ((n & (n - 1)) === 0 && lo % n === 0) return this.#node(Math.log2(n), lo / n, overlay);
    let k = 1;
    while (k * 2 < n) k *= 2;
    return this.#k.merkleNodeHash(await this.#mth(lo, lo + k, overlay), await this.#mth(lo + k, hi, overlay));
  }

  /** RFC 6962 PATH(m, D[lo:hi]), deepest first. */
  async #path(m: number, lo: number, hi: number, overlay: Map<string, Uint8Array>): Promise<Uint8Array[]> {
    const n = hi - lo;
    if (n <= 1) return [];
    let k = 1;
    while (k * 2 < n) k *= 2;
    return m < k
      ? [...await this.#path(m, lo, lo + k, overlay), await this.#mth(lo + k, hi, overlay)]
      : [...await this.#path(m - k, lo + k, hi, overlay), await this.#mth(lo, lo + k, overlay)];
  }

  /** The signed note with the current key; the origin names the node, so it stays across key rotations. */
  signCheckpoint(size: number, root: Uint8Array): { text: string; keyId: string; publicKey: string } {
    const s = this.#id.signer();
    const body = checkpointBody(this.origin, size, root);
    const sig = s.sign(Buffer.from(body, 'utf8'));
    const text = `${body}\n${signatureLine(this.origin, noteKeyHash(this.origin, s.publicKeyRaw), sig)}`;
    return { text, keyId: s.keyId, publicKey: s.publicKey };
  }

  /** Appends the entry that `make(index)` builds; returns its proof under a fresh signed checkpoint. */
  async append(make: (index: number) => Uint8Array): Promise<Appended & { entry: Uint8Array }> {
    return this.#lock.run(this.name, async () => {
      const index = await this.size();
      const entry = make(index);
      const overlay = new Map<string, Uint8Array>();
      const ops: Op[] = [
        create('tlog_entries', key(this.#at, numPart(index)), { entry: Buffer.from(entry).toString('base64') }),
      ];
      const leafHash = this.#k.merkleLeafHash(entry);
      let level = 0, idx = index, h = leafHash;
      overlay.set(this.#nodeKey(0, index), h);
      while (idx & 1) { // this node completes a pair: store the parent
        h = this.#k.merkleNodeHash(await this.#node(level, idx - 1, overlay), h);
        level++; idx >>= 1;
        overlay.set(this.#nodeKey(level, idx), h);
      }
      for (const [k, v] of overlay) ops.push(put('tlog_nodes', k, { h: Buffer.from(v).toString('base64') }));
      const size = index + 1;
      ops.push(put('meta', `tlog_size!${this.#at}`, { size }));
      const root = await this.#mth(0, size, overlay);
      const proof = await this.#path(index, 0, size, overlay);
      try {
        await this.#store.write(ops);
      } catch (e) {
        // another appender took this index, or the write may have landed unanswered: read the size again
        this.#size = null;
        throw e;
      }
      this.#size = size;
      const signed = this.signCheckpoint(size, root);
      const checkpoint = signed.text;
      const tlogProof = formatTlogProof(index, proof, checkpoint);
      return {
        index, size, leafHash, root, proof, checkpoint, tlogProof, entry,
        keyId: signed.keyId, publicKey: signed.publicKey,
      };
    });
  }
}
