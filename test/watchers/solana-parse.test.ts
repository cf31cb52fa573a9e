// The Solana transfer parser on real transactions: built with @solana/kit, signed, and executed by
// the real SVM with the real SPL Token programs in process (litesvm); pre/post token balances are the
// token accounts' real states around execution (solana-chain.ts). What arrives in the rail's token
// account is what counts, however it was paid.
import test from 'ava';
import { generateKeyPairSigner, lamports } from '@solana/kit';
import { parseDeposits } from '../../src/core/watchers/solana-parse.ts';
import { associatedTokenAccount } from '../../src/core/watchers/solana.ts';
import { SolanaChain } from './solana-chain.ts';

const UNIT = 10n ** 6n;

async function setup() {
  const chain = await SolanaChain.start();
  const rail = await generateKeyPairSigner();
  const railAta = await chain.ata(rail.address);
  const payer = await chain.fundedWallet(1_000n * UNIT);
  return { chain, rail, railAta, payer, watched: new Set<string>([railAta]) };
}

test('solana parse: the rail ATA the watcher derives is the one the ATA program uses', async (t) => {
  const { chain, rail, railAta } = await setup();
  t.is(await associatedTokenAccount(rail.address, chain.mint), railAta);
  // and the real program creates it there
  await chain.execute([chain.createAtaIx(rail.address, chain.mint, railAta)]);
  t.true(chain.svm.getAccount(railAta).exists);
});

test('solana parse: a transfer into the rail ATA is one deposit of what arrived, keyed by its account index',
  async (t) => {
    const { chain, rail, railAta, payer, watched } = await setup();
    await chain.execute([chain.createAtaIx(rail.address, chain.mint, railAta)]);
    const tx = await chain.execute([chain.transferIx(payer, railAta, 25n * UNIT + 4321n)], payer.signer);
    t.is(tx.meta!.err, null);
    const head = Number(tx.slot) + 40;
    const deps = parseDeposits(tx, 'USDC_SOLANA', chain.mint, watched, head);
    const index = tx.transaction.message.accountKeys.indexOf(railAta);
    t.true(index > 0);
    t.deepEqual(deps, [{
      rail: 'USDC_SOLANA', tx_id: tx.transaction.signatures[0]!, log_index: index, amount: '25004321',
      from: payer.signer.address, to: railAta, block_number: Number(tx.slot), block_hash: '',
      block_time: new Date(Number(tx.blockTime) * 1000).toISOString(), confirmations: 41,
    }]);
    // another mint's account, or a token account the rail does not watch: nothing
    t.deepEqual(parseDeposits(tx, 'USDC_SOLANA', payer.ata, watched, head), []);
    t.deepEqual(parseDeposits(tx, 'USDC_SOLANA', chain.mint, new Set([payer.ata]), head), []);
  });

test('solana parse: the ATA created in the paying transaction (no pre balance) counts the whole amount',
  async (t) => {
    const { chain, rail, railAta, payer, watched } = await setup();
    const tx = await chain.execute([
      chain.createAtaIx(rail.address, chain.mint, railAta), chain.transferIx(payer, railAta, 7n * UNIT + 1n),
    ], payer.signer);
    const idx = tx.transaction.message.accountKeys.indexOf(railAta);
    t.false(tx.meta!.preTokenBalances!.some((b) => b.accountIndex === idx), 'no pre balance: the account was new');
    const [d, ...rest] = parseDeposits(tx, 'USDC_SOLANA', chain.mint, watched, Number(tx.slot));
    t.deepEqual(rest, []);
    t.like(d, { amount: '7000001', log_index: idx, from: payer.signer.address });
  });

test('solana parse: two transfers in one transaction are one deposit of their sum', async (t) => {
  const { chain, rail, railAta, payer, watched } = await setup();
  await chain.execute([chain.createAtaIx(rail.address, chain.mint, railAta)]);
  const tx = await chain.execute([
    chain.transferIx(payer, railAta, 3n * UNIT), chain.transferIx(payer, railAta, 5n),
  ], payer.signer);
  const deps = parseDeposits(tx, 'USDC_SOLANA', chain.mint, watched, Number(tx.slot));
  t.is(deps.length, 1);
  t.is(deps[0]!.amount, '3000005');
});

test('solana parse: a failed transaction moves nothing and yields no deposit', async (t) => {
  const { chain, rail, railAta, payer, watched } = await setup();
  await chain.execute([chain.createAtaIx(rail.address, chain.mint, railAta)]);
  // more than the payer holds: the token program refuses, the SVM reports the error
  const tx = await chain.execute([chain.transferIx(payer, railAta, 2_000n * UNIT)], payer.signer);
  t.not(tx.meta!.err, null);
  t.deepEqual(tx.meta!.preTokenBalances, tx.meta!.postTokenBalances, 'nothing moved');
  t.deepEqual(parseDeposits(tx, 'USDC_SOLANA', chain.mint, watched, Number(tx.slot)), []);
  // a failed transaction whose balances did move would still not count: the error decides
  const forged = { ...tx, meta: { ...tx.meta!, postTokenBalances: [] } };
  t.deepEqual(parseDeposits(forged, 'USDC_SOLANA', chain.mint, watched, Number(tx.slot)), []);
});

test('solana parse: money leaving the rail account is not a deposit', async (t) => {
  const { chain, rail, railAta, payer, watched } = await setup();
  await chain.execute([chain.createAtaIx(rail.address, chain.mint, railAta)]);
  await chain.execute([chain.transferIx(payer, railAta, 10n * UNIT)], payer.signer);
  chain.svm.airdrop(rail.address, lamports(1_000_000_000n));
  const out = await chain.execute([chain.transferIx({ signer: rail, ata: railAta }, payer.ata, 4n * UNIT)],
    rail);
  t.is(out.meta!.err, null);
  t.deepEqual(parseDeposits(out, 'USDC_SOLANA', chain.mint, watched, Number(out.slot)), []);
});
