// X402Chain against anvil and the USDC port: what the node reads of a settlement is what the chain did —
// `paid` only for a Transfer of the amount from the payer to this node's payee, the transaction that used a
// nonce found by its AuthorizationUsed event, a signature checked as the token checks it.
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { toHex, type Hex } from 'viem';
import { X402Chain } from '../../src/core/x402/chain.ts';
import type { EvmX402Config } from '../../src/core/x402/config.ts';
import type { Authorization } from '../../src/protocol/x402.ts';
import { PAYERS, RELAYER, startChain, type Chain } from './harness.ts';

function chainFor(c: Chain): X402Chain {
  const dir = mkdtempSync(join(tmpdir(), 'x402-chain-'));
  const keyFile = join(dir, 'relayer.key');
  writeFileSync(keyFile, toHex(c.anvil.account(RELAYER).getHdKey().privateKey!));
  const cfg: EvmX402Config = {
    family: 'evm', network: 'eip155:8453', chainId: 8453, rpcUrl: c.anvil.url, asset: c.token.toLowerCase(),
    payTo: c.payTo.toLowerCase(), tokenName: null, tokenVersion: null, relayerKeyFile: keyFile,
    finality: 'latest', confirmations: 0,
  };
  return new X402Chain(cfg);
}

/** An authorization from payer `i` to `to`, signed with viem (not the node's code). */
async function authorize(c: Chain, i: number, to: string, value: bigint): Promise<{ a: Authorization; sig: Hex }> {
  const nonce = toHex(crypto.getRandomValues(new Uint8Array(32)));
  const message = {
    from: c.anvil.account(i).address, to: to as Hex, value, validAfter: 0n,
    validBefore: BigInt(Math.floor(Date.now() / 1000) + 600), nonce,
  };
  const sig = await c.anvil.account(i).signTypedData({
    domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: c.token },
    types: {
      TransferWithAuthorization: [
        { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' },
        { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'TransferWithAuthorization', message,
  });
  const a = Object.fromEntries(Object.entries(message).map(([k, v]) => [k, String(v)])) as unknown as Authorization;
  return { a, sig };
}

/**
 * The settlement's receipt once anvil has it: automine answers eth_sendRawTransaction before the block is
 * always readable on a loaded machine, so the test waits for it (up to 10 s) rather than for a time.
 */
async function minedSoon(chain: X402Chain, hash: string, a: Authorization) {
  for (let i = 0; i < 200; i++) {
    const m = await chain.mined(hash, a);
    if (m) return m;
    await new Promise((r) => setTimeout(r, 50));
  }
  return null;
}

test('x402 chain: paid only for what reached the payee; the nonce\'s user found; signatures as the token',
  async (t) => {
    const c = await startChain(t);
    const chain = chainFor(c);
    t.deepEqual(await chain.tokenDomain(), { name: 'USD Coin', version: '2' });
    t.is(await chain.chainId(), 8453);

    const good = await authorize(c, PAYERS[0]!, c.payTo, 500n);
    t.true(await chain.signedBy({ name: 'USD Coin', version: '2' }, good.a, good.sig));
    t.false(await chain.signedBy({ name: 'USD Coin', version: '1' }, good.a, good.sig), 'another domain');
    t.false(await chain.signedBy({ name: 'USD Coin', version: '2' }, { ...good.a, value: '501' }, good.sig));
    const from = await chain.blockNumber();
    const sent = await chain.prepare(good.a, good.sig);
    await chain.send(sent.raw);
    const mined = await minedSoon(chain, sent.hash, good.a);
    t.like(mined, { status: 'success', paid: true });
    t.true(await chain.authorizationUsed(good.a.from, good.a.nonce));
    t.is(await chain.usedBy(good.a.from, good.a.nonce, from), sent.hash);

    // a valid authorization to someone else settles on chain, but paid nothing here
    const elsewhere = await authorize(c, PAYERS[1]!, c.anvil.account(7).address, 500n);
    const other = await chain.prepare(elsewhere.a, elsewhere.sig);
    await chain.send(other.raw);
    t.like(await minedSoon(chain, other.hash, elsewhere.a), { status: 'success', paid: false });

    // a used nonce: the token refuses it before anything is sent
    await t.throwsAsync(chain.prepare(good.a, good.sig), { name: 'WouldRevert' });
    t.is(await chain.mined(`0x${'ab'.repeat(32)}`, good.a), null, 'an unknown transaction is not mined');
    t.false(await chain.known(`0x${'ab'.repeat(32)}`));
  });
