// The Solana RPC stand-in (test/watchers/solana-chain.ts) against the official x402 code: an "exact" payment
// built by @x402/svm's client through the stand-in (getAccountInfo of the mint, getLatestBlockhash), then
// handled as a node would with @solana/kit: simulated with the fee payer's signature still missing,
// co-signed, sent, its status read. Every transaction is really executed by litesvm with the real SPL Token
// program. A validator's rules are what is checked: a message lands at most once, an expired blockhash is
// refused at preflight and never lands without it, a send held in flight is not there until it lands, a
// dropped one never is. @x402/svm's facilitator, with its own signer on the stand-in, verifies and settles.
import test, { type ExecutionContext } from 'ava';
import {
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND, createSolanaRpc, generateKeyPairSigner,
  getBase58Decoder, getBase64EncodedWireTransaction, getBase64Encoder, getCompiledTransactionMessageDecoder,
  getSignatureFromTransaction, getTransactionDecoder, isSolanaError, signTransaction, type Address,
  type Base64EncodedWireTransaction, type Blockhash, type KeyPairSigner, type Signature, type Transaction,
} from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS, fetchMint } from '@solana-program/token';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import { ExactSvmScheme as ExactSvmFacilitator } from '@x402/svm/exact/facilitator';
import { DECIMALS, SolanaChain, SolanaRpcStandIn } from '../watchers/solana-chain.ts';

const NETWORK = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
const UNIT = 10n ** BigInt(DECIMALS);
const FUNDS = 1_000n * UNIT;

interface World {
  chain: SolanaChain;
  standIn: SolanaRpcStandIn;
  rpc: ReturnType<typeof createSolanaRpc>;
  payer: { signer: KeyPairSigner; ata: Address };
  feePayer: KeyPairSigner;
  payee: Address;
  payeeAta: Address;
  requirements: (amount?: string) => PaymentRequirements;
  /** A payment payload built by the official client for `amount`, as a buyer would send it. */
  pay: (amount?: string) => Promise<PaymentPayload>;
}

async function world(t: ExecutionContext): Promise<World> {
  const chain = await SolanaChain.start();
  const standIn = await SolanaRpcStandIn.start(chain);
  t.teardown(() => standIn.close());
  const payer = await chain.fundedWallet(FUNDS);
  const feePayer = await chain.feePayer();
  const payee = (await generateKeyPairSigner()).address;
  const payeeAta = await chain.createAta(payee);
  const requirements = (amount = '1500'): PaymentRequirements => ({
    scheme: 'exact', network: NETWORK, asset: chain.mint, amount, payTo: payee, maxTimeoutSeconds: 60,
    extra: { feePayer: feePayer.address, memo: 'q_test' },
  });
  const client = new ExactSvmClient(payer.signer, { rpcUrl: standIn.url });
  const pay = async (amount?: string): Promise<PaymentPayload> => {
    const accepted = requirements(amount);
    const made = await client.createPaymentPayload(2, accepted);
    return { x402Version: made.x402Version, accepted, payload: made.payload };
  };
  return {
    chain, standIn, rpc: createSolanaRpc(standIn.url), payer, feePayer, payee, payeeAta, requirements, pay,
  };
}

const wireOf = (p: PaymentPayload) =>
  (p.payload as { transaction: string }).transaction as Base64EncodedWireTransaction;
const decode = (wire: string): Transaction => getTransactionDecoder().decode(getBase64Encoder().encode(wire));
const blockhashOf = (tx: Transaction) =>
  getCompiledTransactionMessageDecoder().decode(tx.messageBytes).lifetimeToken as Blockhash;

/** What a node does with the client's transaction: its fee payer co-signs it. */
async function coSign(w: World, p: PaymentPayload): Promise<{ wire: Base64EncodedWireTransaction; sig: Signature }> {
  const signed = await signTransaction([w.feePayer.keyPair], decode(wireOf(p)));
  return { wire: getBase64EncodedWireTransaction(signed), sig: getSignatureFromTransaction(signed) };
}

const status = async (w: World, sig: Signature) => (await w.rpc.getSignatureStatuses([sig]).send()).value[0];

test('solana stand-in: the official client builds the payment through it; simulated, co-signed, sent, landed once',
  async (t) => {
    const w = await world(t);
    const { rpc, standIn, chain } = w;
    // what the client read: the mint (fetchMint, base64) and a blockhash (getLatestBlockhash)
    const mint = await fetchMint(rpc, chain.mint);
    t.like(mint.data, { decimals: DECIMALS, isInitialized: true });
    const p = await w.pay();
    t.true(standIn.calls.includes('getAccountInfo') && standIn.calls.includes('getLatestBlockhash'));
    const tx = decode(wireOf(p));
    t.is(tx.signatures[w.feePayer.address], null, 'the fee payer has not signed yet');
    t.truthy(tx.signatures[w.payer.signer.address]);
    const { value: latest } = await rpc.getLatestBlockhash().send();
    t.is(blockhashOf(tx), latest.blockhash);
    t.is(latest.lastValidBlockHeight, (await rpc.getBlockHeight().send()) + 150n);
    t.true((await rpc.isBlockhashValid(latest.blockhash).send()).value);

    // simulated as it came: the missing fee payer signature is no obstacle without sigVerify
    const sim = await rpc.simulateTransaction(wireOf(p), { encoding: 'base64', sigVerify: false }).send();
    t.like(sim.value, { err: null, accounts: null, returnData: null });
    t.true(sim.value.unitsConsumed! > 0n);
    t.true(sim.value.logs!.includes(`Program ${TOKEN_PROGRAM_ADDRESS} success`));
    t.true(sim.value.logs!.includes('Program log: q_test'), 'the seller\'s memo');
    const unsigned = await t.throwsAsync(rpc.simulateTransaction(wireOf(p), { encoding: 'base64', sigVerify: true })
      .send());
    t.true(isSolanaError(unsigned, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE));
    t.is(chain.tokenBalance(w.payeeAta), 0n, 'a simulation moves nothing');

    const { wire, sig } = await coSign(w, p);
    const solBefore = (await rpc.getBalance(w.feePayer.address).send()).value;
    t.is(await rpc.sendTransaction(wire, { encoding: 'base64' }).send(), sig);
    t.like(await status(w, sig),
      { err: null, status: { Ok: null }, confirmationStatus: 'processed', confirmations: 0n });
    t.is(chain.tokenBalance(w.payeeAta), 1500n);
    t.is(chain.tokenBalance(w.payer.ata), FUNDS - 1500n);
    const { value: bal } = await rpc.getTokenAccountBalance(w.payeeAta).send();
    t.deepEqual(bal, { amount: '1500', decimals: DECIMALS, uiAmount: 0.0015, uiAmountString: '0.0015' });
    t.is(standIn.executions(sig), 1);

    // processed is not confirmed: the watcher's reads do not see it yet
    const getTx = () => rpc.getTransaction(sig, { commitment: 'confirmed', encoding: 'json',
      maxSupportedTransactionVersion: 0 }).send();
    t.is(await getTx(), null);
    standIn.confirmAll();
    t.like(await status(w, sig), { confirmationStatus: 'confirmed' });
    const got = (await getTx())!;
    const buyerSig = getBase58Decoder().decode(decode(wire).signatures[w.payer.signer.address]!);
    t.deepEqual(got.transaction.signatures, [sig, buyerSig], 'fee payer first, then the buyer');
    const feePaid = solBefore - (await rpc.getBalance(w.feePayer.address).send()).value;
    t.is(BigInt(got.meta!.fee), BigInt(feePaid), 'the fee recorded is the fee charged');
    t.is(feePaid, 2n * 5000n + 1n, 'two signatures and the client\'s 20,000 units at 1 micro-lamport');
    const payeeIndex = got.transaction.message.accountKeys.indexOf(w.payeeAta);
    t.like(got.meta!.postTokenBalances!.find((b) => b.accountIndex === payeeIndex), {
      mint: chain.mint, owner: w.payee, uiTokenAmount: { amount: '1500' },
    });
    const listed = await rpc.getSignaturesForAddress(w.payeeAta, { commitment: 'confirmed' }).send();
    t.deepEqual(listed.map((s) => s.signature), [sig]);
    standIn.finalizeAll();
    t.like(await status(w, sig), { confirmationStatus: 'finalized', confirmations: null });

    // sent again: preflight refuses it as already processed; without preflight the node answers its signature
    // and the leader drops it. Either way it ran once.
    const again = await t.throwsAsync(rpc.sendTransaction(wire, { encoding: 'base64' }).send());
    t.true(isSolanaError(again, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE));
    t.true(isSolanaError((again as Error).cause, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED));
    t.is(await rpc.sendTransaction(wire, { encoding: 'base64', skipPreflight: true }).send(), sig);
    t.is(standIn.executions(sig), 1);
    t.is(chain.tokenBalance(w.payeeAta), 1500n);
    t.deepEqual(standIn.sent, [sig, sig]);
    // the buyer's copy (fee payer unsigned) is the same message: simulating it now says so
    const late = await rpc.simulateTransaction(wireOf(p), { encoding: 'base64', sigVerify: false }).send();
    t.is(late.value.err, 'AlreadyProcessed');
  });

test('solana stand-in: an expired blockhash is invalid, refused at preflight, and never lands', async (t) => {
  const w = await world(t);
  const { rpc, standIn, chain } = w;
  const p = await w.pay();
  const { wire, sig } = await coSign(w, p);
  const blockhash = blockhashOf(decode(wire));
  standIn.expireBlockhashes();
  t.false((await rpc.isBlockhashValid(blockhash).send()).value);
  const { value: fresh } = await rpc.getLatestBlockhash().send();
  t.not(fresh.blockhash, blockhash);
  t.true((await rpc.isBlockhashValid(fresh.blockhash).send()).value);

  const sim = await rpc.simulateTransaction(wire, { encoding: 'base64' }).send();
  t.is(sim.value.err, 'BlockhashNotFound');
  const replaced = await rpc.simulateTransaction(wire, { encoding: 'base64', replaceRecentBlockhash: true }).send();
  t.is(replaced.value.err, null, 'with a fresh blockhash the same transfer would go through');
  t.is(replaced.value.replacementBlockhash!.blockhash, fresh.blockhash);

  const refused = await t.throwsAsync(rpc.sendTransaction(wire, { encoding: 'base64' }).send());
  t.true(isSolanaError(refused, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE));
  t.true(isSolanaError((refused as Error).cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND));
  // without preflight the node takes it and it never lands
  t.is(await rpc.sendTransaction(wire, { encoding: 'base64', skipPreflight: true }).send(), sig);
  t.is(await status(w, sig), null);
  t.is(standIn.executions(sig), 0);
  t.is(chain.tokenBalance(w.payeeAta), 0n);
  t.is(chain.tokenBalance(w.payer.ata), FUNDS);
});

test('solana stand-in: a held send is pending until mined; a dropped one never lands; 503 on send only',
  async (t) => {
    const w = await world(t);
    const { rpc, standIn, chain } = w;
    standIn.holdSends = true;
    const first = await coSign(w, await w.pay());
    t.is(await rpc.sendTransaction(first.wire, { encoding: 'base64' }).send(), first.sig);
    t.is(standIn.held, 1);
    t.is(await status(w, first.sig), null, 'accepted, not landed');
    t.is(chain.tokenBalance(w.payeeAta), 0n);
    const mined = await standIn.mineHeld();
    t.deepEqual(mined.map((x) => x.transaction.signatures[0]), [first.sig]);
    t.like(await status(w, first.sig), { err: null, confirmationStatus: 'processed' });
    t.is(chain.tokenBalance(w.payeeAta), 1500n);

    // held while its blockhash expires: the leader drops it
    const stale = await coSign(w, await w.pay('7'));
    await rpc.sendTransaction(stale.wire, { encoding: 'base64' }).send();
    standIn.expireBlockhashes();
    t.deepEqual(await standIn.mineHeld(), []);
    t.is(await status(w, stale.sig), null);
    t.is(standIn.executions(stale.sig), 0);
    standIn.holdSends = false;

    // lost in flight: the node answered the signature, the transaction never arrives; sent again, it lands
    standIn.dropSends = true;
    const lost = await coSign(w, await w.pay('2500'));
    t.is(await rpc.sendTransaction(lost.wire, { encoding: 'base64' }).send(), lost.sig);
    t.deepEqual(await standIn.mineHeld(), []);
    t.is(await status(w, lost.sig), null);
    t.is(chain.tokenBalance(w.payeeAta), 1500n);
    standIn.dropSends = false;
    await rpc.sendTransaction(lost.wire, { encoding: 'base64' }).send();
    t.like(await status(w, lost.sig), { err: null });
    t.is(chain.tokenBalance(w.payeeAta), 4000n);
    t.is(standIn.executions(lost.sig), 1);

    // the node refuses sends (HTTP 503) while answering reads
    standIn.sendDown = true;
    const down = await coSign(w, await w.pay('1'));
    const err = await t.throwsAsync(rpc.sendTransaction(down.wire, { encoding: 'base64' }).send());
    t.true(isSolanaError(err, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR) && err.context.statusCode === 503);
    t.is(await status(w, down.sig), null);
    t.like(await status(w, lost.sig), { err: null });
    standIn.sendDown = false;
    standIn.down = true;
    await t.throwsAsync(rpc.getSlot().send());
  });

test('solana stand-in: a signature that does not verify is refused, and never lands without preflight',
  async (t) => {
    const w = await world(t);
    const { rpc, standIn } = w;
    const p = await w.pay();
    // a fee payer signature that is not one: bytes that do not verify against the fee payer's key
    const tx = decode(wireOf(p));
    const bad = { ...tx, signatures: { ...tx.signatures, [w.feePayer.address]: new Uint8Array(64).fill(7) } };
    const wire = getBase64EncodedWireTransaction(bad as unknown as Transaction);
    const refused = await t.throwsAsync(rpc.sendTransaction(wire, { encoding: 'base64' }).send());
    t.true(isSolanaError(refused, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE));
    const sig = await rpc.sendTransaction(wire, { encoding: 'base64', skipPreflight: true }).send();
    t.is(await status(w, sig), null);
    t.is(standIn.executions(sig), 0);
    t.is(w.chain.tokenBalance(w.payeeAta), 0n);
  });

test('solana stand-in: the official facilitator verifies through it, refuses a wrong amount, and settles once',
  async (t) => {
    const w = await world(t);
    const { standIn, chain } = w;
    // @x402/svm's own signer for the fee payer, talking to the stand-in for simulation, sending and status
    const facilitatorSigner = toFacilitatorSvmSigner(w.feePayer, { defaultRpcUrl: standIn.url });
    const facilitator = new ExactSvmFacilitator(facilitatorSigner);
    const p = await w.pay();
    const ok = await facilitator.verify(p, w.requirements());
    t.like(ok, { isValid: true, payer: w.payer.signer.address });
    t.true(standIn.calls.includes('simulateTransaction'));
    const short = await facilitator.verify(await w.pay('1499'), w.requirements());
    t.like(short, { isValid: false, invalidReason: 'invalid_exact_svm_payload_amount_mismatch' });

    // settle: co-sign, send without preflight, wait for `confirmed`
    standIn.autoConfirm = true;
    const settled = await facilitator.settle(p, w.requirements());
    t.like(settled, { success: true, network: NETWORK, payer: w.payer.signer.address });
    const sig = settled.transaction as Signature;
    t.is(standIn.commitmentOf(sig), 'confirmed');
    t.is(standIn.executions(sig), 1);
    t.is(chain.tokenBalance(w.payeeAta), 1500n);
    // another facilitator (no settlement cache) given the same payment: its simulation finds it processed
    const again = await new ExactSvmFacilitator(facilitatorSigner).settle(p, w.requirements());
    t.like(again, { success: false, errorReason: 'invalid_exact_svm_transaction_simulation_failed' });
    t.is(standIn.executions(sig), 1);
    t.is(chain.tokenBalance(w.payeeAta), 1500n);
  });
