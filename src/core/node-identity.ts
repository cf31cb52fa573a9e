// The node's long-lived secrets, in the data dir with mode 0600: the Ed25519 signing keys (receipts,
// pulses, checkpoints, edge proofs; discovery publishes their public keys with validity windows), the
// 32-byte result-tag keys (HMAC), the 32-byte BCT sealing keys (XChaCha20-Poly1305) and the 32-byte
// quote key (HMAC over issued quote_ids, never rotated: quotes live minutes). toJSON reveals none.
// Rotation (docs/operations.md "Key rotation") adds a new key of each rotating kind and retires the
// current one; retired keys stay so that what they signed or sealed still checks. Not here: how the
// key set is published (src/discovery), how it is verified offline (src/kit/verify.ts).
import {
  createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject,
} from 'node:crypto';
import {
  closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { keyIdOf, type PublishedKey } from '../protocol/ed25519.ts';

export type { PublishedKey };

export interface PublicIdentity { node_id: string; key_id: string; alg: 'Ed25519'; public_key: string }

/** A symmetric key's public facts (its id and window; the key itself never leaves the node). */
export interface SecretKeyInfo { key_id: string; valid_from: string | null; valid_until: string | null }

/** One key in keyring.json: its file in the data dir and its window; signing keys carry their public key. */
interface RingEntry {
  key_id: string;
  file: string;
  valid_from: string | null;
  valid_until: string | null;
  public_key?: string;
}

export const KEYRING_FILE = 'keyring.json';
export const KEYRING_FORMAT = 'svc_keyring_v1';
/** The first key of each kind: the files a node creates at its first start (and before any rotation). */
export const GENESIS_FILES = { signing: 'node-ed25519.pem', result: 'result-key.bin', bct: 'bct-key.bin' } as const;
const QUOTE_FILE = 'quote-key.bin';

/**
 * The node's quote key, read from its data dir: for the gateway workers of `svcd start`, which answer
 * free quotes themselves (quote-desk.ts). The primary made it (loadOrCreate) before forking them.
 */
export function readQuoteKey(dataDir: string): Buffer {
  return readSecret(join(dataDir, QUOTE_FILE));
}

/** keyring.json: the key set once a node has rotated. The last entry of each list is the current key. */
interface Keyring {
  format: typeof KEYRING_FORMAT;
  node_id: string;
  signing: RingEntry[];
  result: RingEntry[];
  bct: RingEntry[];
}

/** A signing key; the private half only for keys created or loaded as current by this process. */
export interface Signer {
  readonly keyId: string;
  readonly publicKeyRaw: Buffer;
  readonly publicKey: string;
  sign(data: Uint8Array): Buffer;
}

interface SigningKey extends Signer {
  readonly entry: RingEntry;
}

/** BCT key id: SHA-256("svc/bct-key-id/v1" ‖ key)[:8], in every packet header. */
export function bctKeyIdOf(key: Uint8Array): Buffer {
  return createHash('sha256').update('svc/bct-key-id/v1').update(key).digest().subarray(0, 8);
}

/** Result key id: hex(SHA-256("svc/result-key-id/v1" ‖ key)[:8]) — names the key, reveals nothing of it. */
export function resultKeyIdOf(key: Uint8Array): string {
  return createHash('sha256').update('svc/result-key-id/v1').update(key).digest().subarray(0, 8).toString('hex');
}

/** Writes a file and forces it to disk before returning (the rotation's order depends on it). */
function writeDurable(path: string, data: Uint8Array | string, flag: 'wx' | 'w'): void {
  const fd = openSync(path, flag, 0o600);
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try { fsyncSync(fd); } finally { closeSync(fd); }
}

function readSecret(path: string): Buffer {
  const k = readFileSync(path);
  if (k.length !== 32) throw new Error(`${path} must hold 32 bytes`);
  return k;
}

function privateOf(entry: RingEntry, privateKey: KeyObject | null): KeyObject {
  if (!privateKey) throw new Error(`signing key ${entry.key_id} is retired: this process holds no private half`);
  return privateKey;
}

function signingKey(entry: RingEntry, privateKey: KeyObject | null, publicRaw: Buffer): SigningKey {
  return {
    keyId: entry.key_id, publicKeyRaw: publicRaw, publicKey: publicRaw.toString('base64url'), entry,
    sign(data: Uint8Array): Buffer {
      return sign(null, data, privateOf(entry, privateKey));
    },
  };
}

const rawOf = (k: KeyObject) => createPublicKey(k).export({ format: 'der', type: 'spki' }).subarray(-32);

/** Whether `at` (ISO 8601) lies in an entry's window (both ends inclusive; null: unbounded). */
export function inWindow(w: { valid_from: string | null; valid_until: string | null }, at: string): boolean {
  const t = Date.parse(at);
  if (Number.isNaN(t)) return false;
  const from = w.valid_from === null ? -Infinity : Date.parse(w.valid_from);
  const until = w.valid_until === null ? Infinity : Date.parse(w.valid_until);
  return from <= t && t <= until;
}

export class NodeIdentity {
  readonly #dataDir: string;
  #ring!: Keyring;
  #signing!: SigningKey[];
  #result!: Buffer[];
  #bct!: Buffer[];
  readonly #quoteKey: Buffer;
  /** private halves this process holds, by key id: in-flight work that began before a rotation signs with them */
  readonly #privates = new Map<string, KeyObject>();
  readonly nodeId: string;

  private constructor(dataDir: string, ring: Keyring, quoteKey: Buffer, current: KeyObject) {
    this.#dataDir = dataDir;
    this.#quoteKey = quoteKey;
    this.nodeId = ring.node_id;
    this.#privates.set(ring.signing.at(-1)!.key_id, current);
    this.#install(ring);
  }

  /** Loads the key set: keyring.json when the node has rotated, else the genesis files (made if absent). */
  static loadOrCreate(dataDir: string): NodeIdentity {
    // a keyring.json.tmp left by a rotation killed before its switch is ignored (the next rotation
    // overwrites it); removing it here could race a rotation in the running svcd (svcd manifest, audit)
    const quotePath = join(dataDir, QUOTE_FILE);
    if (!existsSync(quotePath)) writeDurable(quotePath, randomBytes(32), 'wx');
    const quote = readSecret(quotePath);
    const ringPath = join(dataDir, KEYRING_FILE);
    let ring: Keyring;
    if (existsSync(ringPath)) {
      ring = JSON.parse(readFileSync(ringPath, 'utf8')) as Keyring;
      if (ring.format !== KEYRING_FORMAT || !ring.signing?.length || !ring.result?.length || !ring.bct?.length) {
        throw new Error(`${ringPath} is not a ${KEYRING_FORMAT} key set`);
      }
    } else {
      ring = NodeIdentity.#genesis(dataDir);
    }
    const current = createPrivateKey(readFileSync(join(dataDir, ring.signing.at(-1)!.file)));
    return new NodeIdentity(dataDir, ring, quote, current);
  }

  /** A node that never rotated: its genesis files, created on first start. */
  static #genesis(dataDir: string): Keyring {
    const keyPath = join(dataDir, GENESIS_FILES.signing);
    if (!existsSync(keyPath)) {
      const { privateKey } = generateKeyPairSync('ed25519');
      writeDurable(keyPath, privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, 'wx');
    }
    for (const f of [GENESIS_FILES.result, GENESIS_FILES.bct]) {
      if (!existsSync(join(dataDir, f))) writeDurable(join(dataDir, f), randomBytes(32), 'wx');
    }
    const raw = rawOf(createPrivateKey(readFileSync(keyPath)));
    const keyId = keyIdOf(raw);
    const entry = (key_id: string, file: string, extra: Partial<RingEntry> = {}): RingEntry => ({
      key_id, file, valid_from: null, valid_until: null, ...extra,
    });
    return {
      format: KEYRING_FORMAT,
      node_id: `svc-node-${keyId}`,
      signing: [entry(keyId, GENESIS_FILES.signing, { public_key: raw.toString('base64url') })],
      result: [entry(resultKeyIdOf(readSecret(join(dataDir, GENESIS_FILES.result))), GENESIS_FILES.result)],
      bct: [entry(bctKeyIdOf(readSecret(join(dataDir, GENESIS_FILES.bct))).toString('hex'), GENESIS_FILES.bct)],
    };
  }

  #install(ring: Keyring): void {
    this.#signing = ring.signing.map((e) => {
      const raw = e.public_key ? Buffer.from(e.public_key, 'base64url')
        : rawOf(createPrivateKey(readFileSync(join(this.#dataDir, e.file))));
      if (keyIdOf(raw) !== e.key_id) throw new Error(`key set: ${e.file} is not key ${e.key_id}`);
      return signingKey(e, this.#privates.get(e.key_id) ?? null, raw);
    });
    const secrets = (list: RingEntry[], idOf: (k: Buffer) => string) => list.map((e) => {
      const k = readSecret(join(this.#dataDir, e.file));
      if (idOf(k) !== e.key_id) throw new Error(`key set: ${e.file} is not key ${e.key_id}`);
      return k;
    });
    this.#result = secrets(ring.result, resultKeyIdOf);
    this.#bct = secrets(ring.bct, (k) => bctKeyIdOf(k).toString('hex'));
    this.#ring = ring;
  }

  /** The current signing key. */
  signer(): Signer {
    return this.#signing.at(-1)!;
  }

  /**
   * The key whose window holds `at`, when this process still holds its private half (work that took
   * its time before a rotation signs with the key of that time); otherwise the current key.
   */
  signerAt(at: Date): Signer {
    const iso = at.toISOString();
    const k = this.#signing.find((s) => inWindow(s.entry, iso) && this.#privates.has(s.keyId));
    return k ?? this.signer();
  }

  get keyId(): string { return this.signer().keyId; }
  get publicKeyRaw(): Buffer { return this.signer().publicKeyRaw; }

  sign(data: Uint8Array): Buffer {
    return this.signer().sign(data);
  }

  /** A signing key of the set (current or retired), by key id: its public half and window. */
  signingKey(keyId: unknown): { key_id: string; public_key: string; window: SecretKeyInfo } | undefined {
    const k = this.#signing.find((s) => s.keyId === keyId);
    return k && { key_id: k.keyId, public_key: k.publicKey, window: this.#info(k.entry) };
  }

  /** The current result-tag key, for the HMAC kernel only. */
  resultKey(): Uint8Array {
    return this.#result.at(-1)!;
  }

  /** Every result-tag key, current first: a tag made before a rotation still checks. */
  resultKeys(): Uint8Array[] {
    return [...this.#result].reverse();
  }

  /** The quote MAC key: issued quote_ids carry their terms under it (quote-token.ts). */
  quoteKey(): Uint8Array {
    return this.#quoteKey;
  }

  /** The current BCT sealing key, for the AEAD kernel only. */
  bctKey(): Uint8Array {
    return this.#bct.at(-1)!;
  }

  /** The current BCT key id (8 bytes, in every new packet header). */
  get bctKeyId(): Buffer {
    return bctKeyIdOf(this.bctKey());
  }

  /** The BCT key a packet header names (current or retired), or undefined. */
  bctKeyById(id: Uint8Array): Uint8Array | undefined {
    const hex = Buffer.from(id).toString('hex');
    const i = this.#ring.bct.findIndex((e) => e.key_id === hex);
    return i < 0 ? undefined : this.#bct[i];
  }

  #info(e: RingEntry): SecretKeyInfo {
    return { key_id: e.key_id, valid_from: e.valid_from, valid_until: e.valid_until };
  }

  /** The signing keys as discovery publishes them, oldest first. */
  publishedKeys(): PublishedKey[] {
    return this.#signing.map((s, i) => ({
      key_id: s.keyId, alg: 'Ed25519', public_key: s.publicKey, valid_from: s.entry.valid_from,
      valid_until: s.entry.valid_until, status: i === this.#signing.length - 1 ? 'current' : 'retired',
    }));
  }

  /** The whole key set's public facts: signing keys, and the ids and windows of the BCT and result keys. */
  keySet(): { node_id: string; signing: PublishedKey[]; bct: SecretKeyInfo[]; result: SecretKeyInfo[] } {
    return {
      node_id: this.nodeId, signing: this.publishedKeys(),
      bct: this.#ring.bct.map((e) => this.#info(e)), result: this.#ring.result.map((e) => this.#info(e)),
    };
  }

  /** Every key file of the set, relative to the data dir (the quote key too): what a backup copies. */
  keyFiles(): string[] {
    const r = this.#ring;
    return [...new Set([...r.signing, ...r.result, ...r.bct].map((e) => e.file).concat(QUOTE_FILE))];
  }

  /**
   * Rotates the signing, result and BCT keys at `now`: the new key files are written and synced
   * first (unreferenced, they change nothing), then keyring.json is replaced in one rename — the
   * switch. A crash before the rename leaves the old key set (and unused files), after it the new
   * one. Synchronous on purpose: no request runs between the switch on disk and the one in memory.
   */
  rotate(now: Date): { rotated_at: string; retired: string; current: string } {
    const at = now.toISOString();
    const dir = join(this.#dataDir, 'keys');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const { privateKey } = generateKeyPairSync('ed25519');
    const raw = rawOf(privateKey);
    const keyId = keyIdOf(raw);
    const result = randomBytes(32), bct = randomBytes(32);
    const files = {
      signing: `keys/node-ed25519-${keyId}.pem`,
      result: `keys/result-key-${resultKeyIdOf(result)}.bin`,
      bct: `keys/bct-key-${bctKeyIdOf(bct).toString('hex')}.bin`,
    };
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    writeDurable(join(this.#dataDir, files.signing), pem, 'wx');
    writeDurable(join(this.#dataDir, files.result), result, 'wx');
    writeDurable(join(this.#dataDir, files.bct), bct, 'wx');
    fsyncDir(dir);
    const retire = (list: RingEntry[]) => list.map((e, i) => (i === list.length - 1 ? { ...e, valid_until: at } : e));
    const fresh = (key_id: string, file: string, extra: Partial<RingEntry> = {}): RingEntry => ({
      key_id, file, valid_from: at, valid_until: null, ...extra,
    });
    const old = this.#ring;
    const ring: Keyring = {
      format: KEYRING_FORMAT,
      node_id: old.node_id,
      signing: [...retire(old.signing), fresh(keyId, files.signing, { public_key: raw.toString('base64url') })],
      result: [...retire(old.result), fresh(resultKeyIdOf(result), files.result)],
      bct: [...retire(old.bct), fresh(bctKeyIdOf(bct).toString('hex'), files.bct)],
    };
    const ringPath = join(this.#dataDir, KEYRING_FILE);
    writeDurable(`${ringPath}.tmp`, JSON.stringify(ring, null, 2) + '\n', 'w');
    renameSync(`${ringPath}.tmp`, ringPath);
    fsyncDir(this.#dataDir);
    this.#privates.set(keyId, privateKey);
    this.#install(ring);
    return { rotated_at: at, retired: old.signing.at(-1)!.key_id, current: keyId };
  }

  get public(): PublicIdentity {
    return { node_id: this.nodeId, key_id: this.keyId, alg: 'Ed25519', public_key: this.signer().publicKey };
  }

  toJSON(): PublicIdentity & { secret: '[redacted]' } {
    return { ...this.public, secret: '[redacted]' };
  }
}
