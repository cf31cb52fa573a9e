// What the Solana x402 tests share: litesvm with the real SPL Token program behind the RPC stand-in
// (test/watchers/solana-chain.ts, real JSON-RPC over HTTP on loopback), a payer holding the test mint, the payee's
// token account, a fee payer keypair file as solana-keygen writes it, and svcd with a Solana network in
// SVC_X402_NETWORK pointed at them; the official x402 client (@x402/fetch with @x402/svm's exact scheme) for a payer.
import type { ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { createKeyPairSignerFromBytes, lamports, type Address, type KeyPairSigner } from '@solana/kit';
import { x402Client } from '@x402/core/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import type { PaymentRequirements } from '../../src/protocol/x402.ts';
import { Svcd } from '../support/svcd.ts';
import { pricedQuote } from './harness.ts';
import { DECIMALS, SolanaChain, SolanaRpcStandIn } from '../watchers/solana-chain.ts';

export const SOLANA = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
/** what each payer holds: 1,000 tokens of 6 decimals */
export const HELD = 1_000n * 10n ** BigInt(DECIMALS);

export interface SolWorld {
  chain: SolanaChain;
  rpc: SolanaRpcStandIn;
  payee: Address;
  payeeAta: Address;
  /** the fee payer's keypair, as its file holds it (seed and public key) */
  feePayerBytes: Uint8Array;
  feePayer: Address;
  payer(): Promise<{ signer: KeyPairSigner; ata: Address }>;
}

export async function startSolana(t: ExecutionContext): Promise<SolWorld> {
  t.timeout(3 * 60_000);
  const chain = await SolanaChain.start();
  const rpc = await SolanaRpcStandIn.start(chain);
  t.teardown(() => rpc.close());
  rpc.autoConfirm = true;
  const payee = (await createKeyPairSignerFromBytes(keypairBytes())).address;
  const payeeAta = await chain.createAta(payee);
  const feePayerBytes = keypairBytes();
  const feePayer = (await createKeyPairSignerFromBytes(feePayerBytes)).address;
  chain.svm.airdrop(feePayer, lamports(10_000_000_000n));
  return { chain, rpc, payee, payeeAta, feePayerBytes, feePayer, payer: () => chain.fundedWallet(HELD) };
}

/** A fresh keypair in solana-keygen's layout: 32 bytes of seed, then the 32-byte public key. */
function keypairBytes(): Uint8Array {
  const seed = randomBytes(32);
  return Uint8Array.from([...seed, ...ed25519.getPublicKey(seed)]);
}

/** svcd (core and gateway in one process) with x402 on Solana only, or beside `over`'s settings (made for `s`). */
export async function startSolanaSvcd(
  t: ExecutionContext, w: SolWorld, over: Record<string, string> | ((s: Svcd) => Record<string, string>) = {},
): Promise<Svcd> {
  const s = new Svcd({});
  const keyFile = join(s.dataDir, 'fee-payer.json');
  writeFileSync(keyFile, JSON.stringify([...w.feePayerBytes]), { mode: 0o600 });
  Object.assign(s.env, {
    SVC_X402: 'on', SVC_X402_NETWORK: SOLANA, SVC_X402_SOLANA_RPC: w.rpc.url, SVC_X402_SOLANA_ASSET: w.chain.mint,
    SVC_X402_SOLANA_PAY_TO: w.payee, SVC_X402_SOLANA_FEE_PAYER_KEY_FILE: keyFile, SVC_X402_POLL_MS: '50',
    ...(typeof over === 'function' ? over(s) : over),
  });
  await s.start(['start']);
  t.teardown(async () => { await s.kill9(); s.cleanup(); });
  return s;
}

/** The official x402 client for `signer`, on the stand-in, allowed to spend the test mint. */
export function solanaClient(w: SolWorld, signer: KeyPairSigner): { fetch: typeof fetch; scheme: ExactSvmScheme } {
  const scheme = new ExactSvmScheme(signer, { rpcUrl: w.rpc.url });
  const client = new x402Client().register(SOLANA, scheme);
  client.setSpendControls({
    allowedAssets: [{ network: SOLANA, asset: w.chain.mint, maxAmountPerPayment: '1000000000' }],
  });
  return { fetch: wrapFetchWithPayment(fetch, client), scheme };
}

/** A PAYMENT-SIGNATURE header as the official client builds it for `req` (with any field of it changed). */
export async function solanaPayment(
  scheme: ExactSvmScheme, req: PaymentRequirements, change: Partial<PaymentRequirements> = {},
): Promise<string> {
  const signed = { ...req, ...change, extra: { ...req.extra, ...change.extra } };
  const made = await scheme.createPaymentPayload(2, signed as never);
  const payload = { x402Version: 2, accepted: req, payload: made.payload };
  return Buffer.from(JSON.stringify(payload)).toString('base64');
}

/** A quote for `machineId`, its 402's requirements, and a fresh payer's payment of it, as the official client signs. */
export async function paidQuote(w: SolWorld, s: Svcd, machineId: string) {
  const payer = await w.payer();
  const { q, req } = await pricedQuote(s, machineId);
  const header = await solanaPayment(solanaClient(w, payer.signer).scheme, req);
  return { payer, q, req, header };
}
