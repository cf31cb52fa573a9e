// The Solana cluster an x402 payment settles on, through @solana/kit: the fee payer's keypair (read from its
// keygen file), the payer's transaction decoded and co-signed — Ed25519 signs deterministically, so the
// transaction's signature (its id: the fee payer's, the first) is known before it is sent — and the RPC calls a
// settlement needs: simulate, send, the signature's status, whether a blockhash can still land, the fee payer's SOL.
import { readFileSync } from 'node:fs';
import {
  createKeyPairFromBytes, createSolanaRpc, getAddressFromPublicKey, getBase64EncodedWireTransaction,
  getBase64Encoder, getCompiledTransactionMessageDecoder, getSignatureFromTransaction, getTransactionDecoder,
  partiallySignTransaction, type Address, type Base64EncodedWireTransaction, type Blockhash, type Rpc,
  type Signature, type SolanaRpcApi, type Transaction,
} from '@solana/kit';
import type { SolanaCommitment, SvmX402Config } from './config.ts';

/** A payer's transaction as the node reads it: its bytes, message and blockhash. */
export interface Decoded { tx: Transaction; feePayer: string; blockhash: string }

/** What the cluster says of a settlement's signature: not seen, failed, or landed at some commitment. */
export type SignatureState =
  | { seen: false }
  | { seen: true; err: string | null; slot: number; commitment: SolanaCommitment | null };

const RPC_TIMEOUT_MS = 10_000;

export class SvmChain {
  readonly #rpc: Rpc<SolanaRpcApi>;
  readonly #keys: CryptoKeyPair;
  readonly feePayer: string;

  private constructor(rpc: Rpc<SolanaRpcApi>, keys: CryptoKeyPair, feePayer: string) {
    this.#rpc = rpc;
    this.#keys = keys;
    this.feePayer = feePayer;
  }

  static async open(cfg: SvmX402Config): Promise<SvmChain> {
    const keys = await createKeyPairFromBytes(readKeypairFile(cfg.feePayerKeyFile));
    return new SvmChain(createSolanaRpc(cfg.rpcUrl), keys, await getAddressFromPublicKey(keys.publicKey));
  }

  /** The cluster's genesis hash: the network's CAIP-2 reference is its first 32 characters. */
  genesisHash(): Promise<string> { return this.#send(this.#rpc.getGenesisHash()); }

  async slot(): Promise<number> { return Number(await this.#send(this.#rpc.getSlot({ commitment: 'processed' }))); }

  async balance(): Promise<bigint> {
    return (await this.#send(this.#rpc.getBalance(this.feePayer as Address, { commitment: 'confirmed' }))).value;
  }

  /** Simulates the payer's transaction unsigned by the fee payer: throws with the cluster's error if it would fail. */
  async simulate(base64: string): Promise<void> {
    const r = await this.#send(this.#rpc.simulateTransaction(base64 as Base64EncodedWireTransaction, {
      encoding: 'base64', sigVerify: false, replaceRecentBlockhash: false, commitment: 'confirmed',
    }));
    if (r.value.err) {
      const logs = (r.value.logs ?? []).slice(-3).join(' | ');
      throw new Error(`simulation failed: ${JSON.stringify(r.value.err, bigints)}${logs ? ` (${logs})` : ''}`);
    }
  }

  /** The transaction co-signed by the fee payer: its signature (the transaction's id) and its wire form. */
  async sign(d: Decoded): Promise<{ signature: string; wire: string }> {
    const signed = await partiallySignTransaction([this.#keys], d.tx);
    return { signature: getSignatureFromTransaction(signed), wire: getBase64EncodedWireTransaction(signed) };
  }

  /** Sends a signed transaction; the cluster's preflight is skipped (the node simulated it when it took it). */
  async send(wire: string): Promise<void> {
    await this.#send(this.#rpc.sendTransaction(wire as Base64EncodedWireTransaction, {
      encoding: 'base64', skipPreflight: true, maxRetries: 0n,
    }));
  }

  async status(signature: string): Promise<SignatureState> {
    const sigs = [signature as Signature];
    const r = await this.#send(this.#rpc.getSignatureStatuses(sigs, { searchTransactionHistory: true }));
    const s = r.value[0];
    if (!s) return { seen: false };
    return {
      seen: true, err: s.err ? JSON.stringify(s.err, bigints) : null, slot: Number(s.slot),
      commitment: (s.confirmationStatus ?? null) as SolanaCommitment | null,
    };
  }

  /** Whether a transaction with this blockhash could still land: valid at `finalized` (the last to let go of it). */
  async blockhashValid(blockhash: string): Promise<boolean> {
    return (await this.#send(this.#rpc.isBlockhashValid(blockhash as Blockhash, { commitment: 'finalized' }))).value;
  }

  /** An RPC call with a deadline: a cluster that does not answer is an error, never a hang. */
  #send<T>(req: { send(o?: { abortSignal?: AbortSignal }): Promise<T> }): Promise<T> {
    return req.send({ abortSignal: AbortSignal.timeout(RPC_TIMEOUT_MS) });
  }
}

/** A payment's base64 transaction decoded; throws when it is not one. */
export function decodeTransaction(base64: string): Decoded {
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(base64));
  const msg = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  const feePayer = msg.staticAccounts[0];
  if (!feePayer) throw new Error('the transaction names no fee payer');
  return { tx, feePayer, blockhash: msg.lifetimeToken };
}

/** A keypair file as `solana-keygen new` writes it: a JSON array of 64 bytes (secret key, then public key). */
function readKeypairFile(file: string): Uint8Array {
  let bytes: unknown;
  try {
    bytes = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`SVC_X402_SOLANA_FEE_PAYER_KEY_FILE ${file}: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!Array.isArray(bytes) || bytes.length !== 64 || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b < 256)) {
    throw new Error(`SVC_X402_SOLANA_FEE_PAYER_KEY_FILE ${file} must hold a keypair as solana-keygen writes it `
      + '(a JSON array of 64 bytes)');
  }
  return Uint8Array.from(bytes as number[]);
}

const bigints = (_k: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);
