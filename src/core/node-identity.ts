// The node's long-lived secrets, created on first start in the data dir with mode 0600: the
// Ed25519 signing key (receipts, pulses, edge proofs; its public key is what discovery publishes),
// the 32-byte result-tag key (HMAC), the 32-byte BCT sealing key (XChaCha20-Poly1305) and the
// 32-byte quote key (HMAC over issued quote_ids). The symmetric keys never leave the node. toJSON
// never reveals any of them.
import {
  createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, verify, type KeyObject,
} from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keyIdOf } from '../protocol/ed25519.ts';

export interface PublicIdentity { node_id: string; key_id: string; alg: 'Ed25519'; public_key: string }

export class NodeIdentity {
  readonly #key: KeyObject;
  readonly #resultKey: Buffer;
  readonly #bctKey: Buffer;
  readonly #quoteKey: Buffer;
  /** BCT key id: SHA-256("svc/bct-key-id/v1" ‖ key)[:8], in every packet header */
  readonly bctKeyId: Buffer;
  readonly publicKey: KeyObject;
  /** raw 32-byte Ed25519 public key */
  readonly publicKeyRaw: Buffer;
  /** hex(SHA-256(raw public key))[:16] */
  readonly keyId: string;
  readonly nodeId: string;

  private constructor(key: KeyObject, resultKey: Buffer, bctKey: Buffer, quoteKey: Buffer) {
    this.#key = key;
    this.#resultKey = resultKey;
    this.#bctKey = bctKey;
    this.#quoteKey = quoteKey;
    this.bctKeyId = createHash('sha256').update('svc/bct-key-id/v1').update(bctKey).digest().subarray(0, 8);
    this.publicKey = createPublicKey(key);
    this.publicKeyRaw = this.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
    this.keyId = keyIdOf(this.publicKeyRaw);
    this.nodeId = `svc-node-${this.keyId}`;
  }

  static loadOrCreate(dataDir: string): NodeIdentity {
    const keyPath = join(dataDir, 'node-ed25519.pem');
    const resultPath = join(dataDir, 'result-key.bin');
    if (!existsSync(keyPath)) {
      const { privateKey } = generateKeyPairSync('ed25519');
      writeFileSync(keyPath, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600, flag: 'wx' });
    }
    const secret = (path: string) => {
      if (!existsSync(path)) writeFileSync(path, randomBytes(32), { mode: 0o600, flag: 'wx' });
      const k = readFileSync(path);
      if (k.length !== 32) throw new Error(`${path} must hold 32 bytes`);
      return k;
    };
    const signing = createPrivateKey(readFileSync(keyPath));
    const bct = secret(join(dataDir, 'bct-key.bin'));
    return new NodeIdentity(signing, secret(resultPath), bct, secret(join(dataDir, 'quote-key.bin')));
  }

  sign(data: Uint8Array): Buffer {
    return sign(null, data, this.#key);
  }

  verify(data: Uint8Array, signature: Uint8Array): boolean {
    return signature.length === 64 && verify(null, data, this.publicKey, signature);
  }

  /** The result-tag key, for the HMAC kernel only. */
  resultKey(): Uint8Array {
    return this.#resultKey;
  }

  /** The quote MAC key: issued quote_ids carry their terms under it (quote-token.ts). */
  quoteKey(): Uint8Array {
    return this.#quoteKey;
  }

  /** The BCT sealing key, for the AEAD kernel only. */
  bctKey(): Uint8Array {
    return this.#bctKey;
  }

  get public(): PublicIdentity {
    return {
      node_id: this.nodeId,
      key_id: this.keyId,
      alg: 'Ed25519',
      public_key: this.publicKeyRaw.toString('base64url'),
    };
  }

  toJSON(): PublicIdentity & { secret: '[redacted]' } {
    return { ...this.public, secret: '[redacted]' };
  }
}
