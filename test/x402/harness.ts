// What the x402 tests share: anvil (chain 8453, like Base) with the USDC port (EIP-3009, fixtures/), payers
// holding it, a relayer key file, and svcd with SVC_X402=on pointed at them; the official x402 client
// (@x402/fetch with @x402/evm's exact scheme, unmodified) for a payer.
import type { ExecutionContext } from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { x402Client } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { randomBytes } from 'node:crypto';
import { toHex, type Address, type Hex } from 'viem';
import type { PaymentRequired, PaymentRequirements } from '../../src/protocol/x402.ts';
import { Anvil } from '../support/anvil.ts';
import { Svcd } from '../support/svcd.ts';

export const NETWORK = 'eip155:8453';
/** Payers: accounts 1..4 hold tokens; account 8 relays (ether only); account 9 receives. */
export const PAYERS = [1, 2, 3, 4];
export const RELAYER = 8;
export const PAY_TO = 9;
/** what each payer holds: 1,000 tokens of 6 decimals */
export const HELD = 1_000n * 10n ** 6n;

export interface Chain { anvil: Anvil; token: Address; payTo: Address }

export async function startChain(t: ExecutionContext): Promise<Chain> {
  t.timeout(5 * 60_000);
  const anvil = await Anvil.start();
  t.teardown(() => anvil.stop());
  const token = await anvil.deployToken3009();
  for (const p of PAYERS) await anvil.transfer(0, anvil.account(p).address, HELD);
  return { anvil, token, payTo: anvil.account(PAY_TO).address };
}

/** svcd's EVM x402 settings for `chain`, its relayer key written into `s`'s data dir; `rpc`: anvil's own URL. */
export function evmSettings(s: Svcd, chain: Chain, rpc = chain.anvil.url): Record<string, string> {
  const keyFile = join(s.dataDir, 'relayer.key');
  writeFileSync(keyFile, `${toHex(chain.anvil.account(RELAYER).getHdKey().privateKey!)}\n`, { mode: 0o600 });
  return {
    SVC_X402: 'on', SVC_X402_RPC: rpc, SVC_X402_ASSET: chain.token, SVC_X402_PAY_TO: chain.payTo,
    SVC_X402_RELAYER_KEY_FILE: keyFile, SVC_X402_POLL_MS: '50',
  };
}

/** svcd (core and gateway in one process) with x402 on; `rpc` defaults to anvil's own URL. */
export async function startSvcd(
  t: ExecutionContext, chain: Chain, over: Record<string, string> = {}, rpc = chain.anvil.url,
): Promise<Svcd> {
  const s = new Svcd({});
  Object.assign(s.env, { ...evmSettings(s, chain, rpc), ...over });
  await s.start(['start']);
  t.teardown(async () => { await s.kill9(); s.cleanup(); });
  return s;
}

/** The official x402 fetch for payer account `i`, allowed to spend the test token (not a known USDC). */
export function payingFetch(chain: Chain, i: number): typeof fetch {
  const client = new x402Client().register(NETWORK, new ExactEvmScheme(chain.anvil.account(i)));
  client.setSpendControls({
    allowedAssets: [{ network: NETWORK, asset: chain.token, maxAmountPerPayment: '1000000000' }],
  });
  return wrapFetchWithPayment(fetch, client);
}

/** A free GET_PULSE quote for `machineId` over HTTP. */
export async function quotePulse(
  s: Svcd, machineId: string, bits = 256,
): Promise<{ quote_id: string; quote_units: number }> {
  const r = await fetch(`${s.ready.http}/api/v1/quotes/get-pulse`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ machine_id: machineId, bits, max_output: 64 }),
  });
  if (r.status !== 200) throw new Error(`quote ${r.status}: ${await r.text()}`);
  return await r.json() as { quote_id: string; quote_units: number };
}

/** What a 402 asks: the requirements its PAYMENT-REQUIRED header carries (the first of accepts). */
export async function requirementsOf(r: Response): Promise<PaymentRequirements> {
  const header = r.headers.get('payment-required');
  if (r.status !== 402 || !header) {
    throw new Error(`expected a 402 with PAYMENT-REQUIRED, got ${r.status}: ${await r.text()}`);
  }
  return (JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PaymentRequired).accepts[0]!;
}

export interface Signing {
  to?: string; value?: string; validAfter?: bigint; validBefore?: bigint; nonce?: Hex; chainId?: number;
  network?: string; signer?: number;
}

/**
 * A PAYMENT-SIGNATURE header as an x402 client makes one, signed by payer account `i` (viem's EIP-712, not
 * the node's), with any field overridden to make it wrong.
 */
export async function signPayment(chain: Chain, i: number, req: PaymentRequirements, o: Signing = {}): Promise<string> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: chain.anvil.account(i).address, to: (o.to ?? req.payTo) as Address, value: BigInt(o.value ?? req.amount),
    validAfter: o.validAfter ?? 0n, validBefore: o.validBefore ?? now + BigInt(req.maxTimeoutSeconds),
    nonce: o.nonce ?? toHex(randomBytes(32)),
  };
  const signature = await chain.anvil.account(o.signer ?? i).signTypedData({
    domain: { name: 'USD Coin', version: '2', chainId: o.chainId ?? 8453, verifyingContract: chain.token },
    types: TYPES, primaryType: 'TransferWithAuthorization', message: authorization,
  });
  const payload = {
    x402Version: 2, accepted: { ...req, ...(o.network ? { network: o.network } : {}) },
    payload: {
      signature,
      authorization: Object.fromEntries(Object.entries(authorization).map(([k, v]) => [k, String(v)])),
    },
  };
  return Buffer.from(JSON.stringify(payload)).toString('base64');
}

// written here again, not imported from the node: what the tests sign is the x402 clients' and EIP-3009's
// shape, checked by the token, never the node's own idea of it
const TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** POST a paid execution of GET_PULSE for `machineId`'s quote, with `headers` (a payment, a token). */
export function executePulse(s: Svcd, machineId: string, quoteId: string, headers: Record<string, string> = {}) {
  return fetch(`${s.ready.http}/api/v1/executions/get-pulse`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ machine_id: machineId, quote_id: quoteId }),
  });
}

/** The store's audit through svc-admin: clean, and what it says. */
export async function auditOf(s: Svcd): Promise<{ clean: boolean; discrepancies: string[]; [k: string]: unknown }> {
  const r = await s.svcAdmin(['--json', 'audit']);
  return JSON.parse(r.stdout) as { clean: boolean; discrepancies: string[] };
}

/** How every x402 test ends: the audit clean (its discrepancies named when not). Returns the report. */
export async function auditClean(t: ExecutionContext, s: Svcd): ReturnType<typeof auditOf> {
  const audit = await auditOf(s);
  t.true(audit.clean, audit.discrepancies.join('; '));
  return audit;
}

/** A quote for `machineId` and what its execution without a payment asks for (the 402's requirements). */
export async function pricedQuote(
  s: Svcd, machineId: string, bits?: number,
): Promise<{ q: { quote_id: string; quote_units: number }; req: PaymentRequirements }> {
  const q = await quotePulse(s, machineId, bits);
  return { q, req: await requirementsOf(await executePulse(s, machineId, q.quote_id)) };
}
