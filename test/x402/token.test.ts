// The x402 test token (fixtures/TestUSDC3009.sol) behaves like USDC's EIP-3009 on a real node (anvil):
// authorizations signed with viem's EIP-712 (an implementation independent of the contract's) settle
// through both signature forms, and every refusal comes in USDC's order with USDC's revert string, so
// the payment code tested against this token meets USDC's behaviour, not a friendlier look-alike's.
import test, { type ExecutionContext } from 'ava';
import {
  BaseError, ContractFunctionRevertedError, domainSeparator, keccak256, parseAbi, parseEventLogs, parseSignature,
  serializeSignature, toHex, type Abi, type Address, type Hex, type TransactionReceipt,
} from 'viem';
import type { HDAccount } from 'viem/accounts';
import { Anvil, BASE_CHAIN_ID } from '../support/anvil.ts';

const AUTH = 'address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce';
/** USDC's (FiatTokenV2_2) interface as x402 code calls it, written out rather than read from the fixture. */
const USDC = parseAbi([
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
  'function version() view returns (string)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function TRANSFER_WITH_AUTHORIZATION_TYPEHASH() view returns (bytes32)',
  'function RECEIVE_WITH_AUTHORIZATION_TYPEHASH() view returns (bytes32)',
  'function CANCEL_AUTHORIZATION_TYPEHASH() view returns (bytes32)',
  'function totalSupply() view returns (uint256)',
  'function balanceOf(address account) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function approve(address spender, uint256 value) returns (bool)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function transferFrom(address from, address to, uint256 value) returns (bool)',
  'function mint(address to, uint256 amount) returns (bool)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  `function transferWithAuthorization(${AUTH}, uint8 v, bytes32 r, bytes32 s)` as const,
  `function transferWithAuthorization(${AUTH}, bytes signature)` as const,
  `function receiveWithAuthorization(${AUTH}, uint8 v, bytes32 r, bytes32 s)` as const,
  `function receiveWithAuthorization(${AUTH}, bytes signature)` as const,
  'function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Approval(address indexed owner, address indexed spender, uint256 value)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
]);
// the helpers below pass a function name and its arguments through, which the overloaded typed ABI cannot
const ABI: Abi = USDC;

const AUTH_FIELDS = [
  { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' },
] as const;
const TYPES = {
  TransferWithAuthorization: AUTH_FIELDS,
  ReceiveWithAuthorization: AUTH_FIELDS,
  CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }],
} as const;

const USDC_UNIT = 10n ** 6n;
/** secp256k1's group order: n - s is the other, malleable, s of a signature */
const SECP256K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141n;
/** the payer holds 100 USDC; the facilitator submits; the payee receives */
const PAYER = 1;
const FACILITATOR = 2;
const PAYEE = 3;
const STRANGER = 4;

interface Auth { from: Address; to: Address; value: bigint; validAfter: bigint; validBefore: bigint; nonce: Hex }
interface Chain { anvil: Anvil; token: Address; payer: HDAccount; payee: Address; now: bigint }

async function start(t: ExecutionContext): Promise<Chain> {
  const anvil = await Anvil.start();
  t.teardown(() => anvil.stop());
  const token = await anvil.deployToken3009();
  const payer = anvil.account(PAYER);
  await anvil.transfer(0, payer.address, 100n * USDC_UNIT);
  const now = (await anvil.public.getBlock()).timestamp;
  return { anvil, token, payer, payee: anvil.account(PAYEE).address, now };
}

const nonce = (label: string): Hex => keccak256(toHex(`x402 test nonce ${label}`));

function auth(c: Chain, label: string, over: Partial<Auth> = {}): Auth {
  return {
    from: c.payer.address, to: c.payee, value: 5n * USDC_UNIT, validAfter: 0n, validBefore: c.now + 3600n,
    nonce: nonce(label), ...over,
  };
}

function sign(
  c: Chain, primaryType: 'TransferWithAuthorization' | 'ReceiveWithAuthorization', a: Auth, by = c.payer,
): Promise<Hex> {
  return by.signTypedData({ domain: domainOf(c.token), types: TYPES, primaryType, message: a });
}

function domainOf(token: Address, chainId = BASE_CHAIN_ID) {
  return { name: 'USD Coin', version: '2', chainId, verifyingContract: token } as const;
}

const args = (a: Auth) => [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce] as const;

/** The (…, v, r, s) form of a call's arguments, from a 65-byte signature. */
function vrs(signature: Hex): readonly [number, Hex, Hex] {
  const { v, r, s } = parseSignature(signature);
  return [Number(v), r, s];
}

async function read<T>(c: Chain, functionName: string, fnArgs: readonly unknown[] = []): Promise<T> {
  return await c.anvil.public.readContract({ address: c.token, abi: ABI, functionName, args: fnArgs }) as T;
}

/** Sends a transaction from account `from`; fails the test unless it is mined successfully. */
async function submit(c: Chain, from: number, functionName: string, fnArgs: readonly unknown[]):
  Promise<TransactionReceipt> {
  const hash = await c.anvil.wallet(from).writeContract({
    address: c.token, abi: ABI, functionName, args: fnArgs, account: c.anvil.account(from), chain: null,
  });
  const r = await c.anvil.public.waitForTransactionReceipt({ hash });
  if (r.status !== 'success') throw new Error(`${functionName} reverted: ${hash}`);
  return r;
}

/**
 * The call reverts with `reason` (eth_call), and mined anyway (a fixed gas limit, so no estimate
 * refuses to send it) it reverts on chain, so whatever it touched is rolled back. `at`: both in a
 * block with that timestamp.
 */
async function reverts(
  t: ExecutionContext, c: Chain, from: number, functionName: string, fnArgs: readonly unknown[], reason: string,
  at?: bigint,
): Promise<void> {
  const account = c.anvil.account(from);
  const err = await c.anvil.public.simulateContract({
    address: c.token, abi: ABI, functionName, args: fnArgs, account,
    ...(at === undefined ? {} : { blockOverrides: { time: at } }),
  }).then(() => null, (e: unknown) => e);
  const reverted = err instanceof BaseError ? err.walk((e) => e instanceof ContractFunctionRevertedError) : null;
  t.is((reverted as ContractFunctionRevertedError | null)?.reason, reason, `${functionName}: ${String(err)}`);
  if (at !== undefined) await c.anvil.test.setNextBlockTimestamp({ timestamp: at });
  const hash = await c.anvil.wallet(from).writeContract({
    address: c.token, abi: ABI, functionName, args: fnArgs, account, chain: null, gas: 1_000_000n,
  });
  t.is((await c.anvil.public.waitForTransactionReceipt({ hash })).status, 'reverted', `${functionName} mined`);
}

const balance = (c: Chain, who: Address) => c.anvil.balanceOf(who);
const used = (c: Chain, a: Auth) => read<boolean>(c, 'authorizationState', [a.from, a.nonce]);

/** The events of a receipt as [name, args] pairs, in log order. */
function events(r: TransactionReceipt): [string, Record<string, unknown>][] {
  return parseEventLogs({ abi: USDC, logs: r.logs }).map((l) => [l.eventName, l.args as Record<string, unknown>]);
}

test('USDC\'s domain (USD Coin, version 2, the current chain id), metadata and type hashes', async (t) => {
  const c = await start(t);
  t.is(await read<Hex>(c, 'DOMAIN_SEPARATOR'), domainSeparator({ domain: domainOf(c.token) }));
  t.deepEqual(
    await Promise.all(['name', 'symbol', 'decimals', 'version'].map((f) => read<unknown>(c, f))),
    ['USD Coin', 'USDC', 6, '2'],
  );
  for (const [constant, type] of [
    ['TRANSFER_WITH_AUTHORIZATION_TYPEHASH', `TransferWithAuthorization(${AUTH.replaceAll(', ', ',')})`],
    ['RECEIVE_WITH_AUTHORIZATION_TYPEHASH', `ReceiveWithAuthorization(${AUTH.replaceAll(', ', ',')})`],
    ['CANCEL_AUTHORIZATION_TYPEHASH', 'CancelAuthorization(address authorizer,bytes32 nonce)'],
  ] as const) t.is(await read<Hex>(c, constant), keccak256(toHex(type)), constant);

  // v2.2 computes the separator on each call: on a fork with another chain id it follows the chain
  const res = await fetch(c.anvil.url, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_setChainId', params: [1] }),
  });
  t.is(res.status, 200);
  t.is(await read<Hex>(c, 'DOMAIN_SEPARATOR'), domainSeparator({ domain: domainOf(c.token, 1) }));
});

test('transferWithAuthorization (v, r, s and bytes forms) moves the funds once, from anyone\'s transaction',
  async (t) => {
  const c = await start(t);
  const supply = await read<bigint>(c, 'totalSupply');
  const byVrs = auth(c, 'vrs');
  const byBytes = auth(c, 'bytes', { value: 7n * USDC_UNIT });
  const sigVrs = await sign(c, 'TransferWithAuthorization', byVrs);
  const sigBytes = await sign(c, 'TransferWithAuthorization', byBytes);
  t.false(await used(c, byVrs));

  const r1 = await submit(c, FACILITATOR, 'transferWithAuthorization', [...args(byVrs), ...vrs(sigVrs)]);
  // USDC marks the nonce used before it moves the funds: AuthorizationUsed comes first
  t.deepEqual(events(r1), [
    ['AuthorizationUsed', { authorizer: c.payer.address, nonce: byVrs.nonce }],
    ['Transfer', { from: c.payer.address, to: c.payee, value: 5n * USDC_UNIT }],
  ]);
  t.true(await used(c, byVrs));
  t.false(await used(c, byBytes), 'nonces are independent');

  const r2 = await submit(c, FACILITATOR, 'transferWithAuthorization', [...args(byBytes), sigBytes]);
  t.deepEqual(events(r2), [
    ['AuthorizationUsed', { authorizer: c.payer.address, nonce: byBytes.nonce }],
    ['Transfer', { from: c.payer.address, to: c.payee, value: 7n * USDC_UNIT }],
  ]);
  t.true(await used(c, byBytes));
  t.is(await balance(c, c.payer.address), 88n * USDC_UNIT);
  t.is(await balance(c, c.payee), 12n * USDC_UNIT);
  t.is(await balance(c, c.anvil.account(FACILITATOR).address), 0n, 'the submitter pays gas, never tokens');
  t.is(await read<bigint>(c, 'totalSupply'), supply);

  // (c) the same authorization again, in either form, is a replay
  const replay = 'FiatTokenV2: authorization is used or canceled';
  await reverts(t, c, FACILITATOR, 'transferWithAuthorization', [...args(byVrs), ...vrs(sigVrs)], replay);
  await reverts(t, c, FACILITATOR, 'transferWithAuthorization', [...args(byVrs), sigVrs], replay);
  await reverts(t, c, STRANGER, 'transferWithAuthorization', [...args(byBytes), sigBytes], replay);
  t.is(await balance(c, c.payer.address), 88n * USDC_UNIT);
});

test('the validity window is exclusive at both ends, as USDC\'s', async (t) => {
  const c = await start(t);
  const late = auth(c, 'late', { validBefore: c.now - 1n });
  await reverts(t, c, FACILITATOR, 'transferWithAuthorization',
    [...args(late), await sign(c, 'TransferWithAuthorization', late)], 'FiatTokenV2: authorization is expired');
  const early = auth(c, 'early', { validAfter: c.now + 3600n });
  await reverts(t, c, FACILITATOR, 'transferWithAuthorization',
    [...args(early), await sign(c, 'TransferWithAuthorization', early)], 'FiatTokenV2: authorization is not yet valid');
  t.false(await used(c, late));
  t.false(await used(c, early));

  // mined at exactly validAfter, or exactly validBefore: both refused; one second inside: settled
  const at = c.now + 1000n;
  const edge = auth(c, 'edge', { validAfter: at, validBefore: at + 2n });
  const sig = await sign(c, 'TransferWithAuthorization', edge);
  await reverts(t, c, FACILITATOR, 'transferWithAuthorization', [...args(edge), sig],
    'FiatTokenV2: authorization is not yet valid', at);
  await reverts(t, c, FACILITATOR, 'transferWithAuthorization', [...args(edge), sig],
    'FiatTokenV2: authorization is expired', at + 2n);
  // the chain cannot go back in time: the inside case is signed for the clock as it now is
  const now = (await c.anvil.public.getBlock()).timestamp;
  const inside = auth(c, 'inside', { validAfter: now, validBefore: now + 2n });
  const sigInside = await sign(c, 'TransferWithAuthorization', inside);
  await c.anvil.test.setNextBlockTimestamp({ timestamp: now + 1n });
  await submit(c, FACILITATOR, 'transferWithAuthorization', [...args(inside), sigInside]);
  t.true(await used(c, inside));
  t.false(await used(c, edge));
});

test('a signature by another key, or over other values, is an invalid signature', async (t) => {
  const c = await start(t);
  const a = auth(c, 'tampered');
  const good = await sign(c, 'TransferWithAuthorization', a);
  const invalid = 'FiatTokenV2: invalid signature';
  const cases: [string, Auth, Hex][] = [
    ['signed by another key', a, await sign(c, 'TransferWithAuthorization', a, c.anvil.account(STRANGER))],
    ['value raised', { ...a, value: a.value + 1n }, good],
    ['payee changed', { ...a, to: c.anvil.account(STRANGER).address }, good],
    ['validBefore extended', { ...a, validBefore: a.validBefore + 1n }, good],
    ['nonce changed', { ...a, nonce: nonce('other') }, good],
    ['a ReceiveWithAuthorization signature', a, await sign(c, 'ReceiveWithAuthorization', a)],
    ['signed for chain 1', a, await c.payer.signTypedData({
      domain: domainOf(c.token, 1), types: TYPES, primaryType: 'TransferWithAuthorization', message: a })],
    ['signed for another token', a, await c.payer.signTypedData({
      domain: domainOf(c.payee), types: TYPES, primaryType: 'TransferWithAuthorization', message: a })],
  ];
  for (const [what, claimed, sig] of cases) {
    await reverts(t, c, FACILITATOR, 'transferWithAuthorization', [...args(claimed), sig], invalid);
    await reverts(t, c, FACILITATOR, 'transferWithAuthorization', [...args(claimed), ...vrs(sig)], invalid);
    t.false(await used(c, claimed), what);
  }
  t.is(await balance(c, c.payer.address), 100n * USDC_UNIT);
  await submit(c, FACILITATOR, 'transferWithAuthorization', [...args(a), good]);
  t.is(await balance(c, c.payee), a.value, 'the untampered authorization still settles');
});

test('ECRecover\'s malleability checks: the high-s twin, v other than 27/28, a length other than 65', async (t) => {
  const c = await start(t);
  const a = auth(c, 'malleable');
  const sig = await sign(c, 'TransferWithAuthorization', a);
  const { r, s, yParity } = parseSignature(sig);
  // the same point with the other s: ecrecover accepts it, USDC does not
  const twin = serializeSignature({ r, s: toHex(SECP256K1_N - BigInt(s), { size: 32 }), yParity: 1 - yParity });
  await reverts(t, c, FACILITATOR, 'transferWithAuthorization', [...args(a), twin],
    'ECRecover: invalid signature \'s\' value');
  await reverts(t, c, FACILITATOR, 'transferWithAuthorization', [...args(a), yParity, r, s],
    'ECRecover: invalid signature \'v\' value');
  await reverts(t, c, FACILITATOR, 'transferWithAuthorization', [...args(a), `${sig}00`],
    'ECRecover: invalid signature length');
  await reverts(t, c, FACILITATOR, 'transferWithAuthorization', [...args(a), '0x'],
    'ECRecover: invalid signature length');
  t.false(await used(c, a));
  await submit(c, FACILITATOR, 'transferWithAuthorization', [...args(a), sig]);
  t.true(await used(c, a));
});

test('cancelAuthorization (both forms) uses up the nonce: the authorization can no longer settle', async (t) => {
  const c = await start(t);
  const invalid = 'FiatTokenV2: invalid signature';
  const used_ = 'FiatTokenV2: authorization is used or canceled';
  for (const form of ['vrs', 'bytes'] as const) {
    const a = auth(c, `cancel ${form}`);
    const transferSig = await sign(c, 'TransferWithAuthorization', a);
    const cancel = { authorizer: a.from, nonce: a.nonce };
    const cancelSig = await c.payer.signTypedData({
      domain: domainOf(c.token), types: TYPES, primaryType: 'CancelAuthorization', message: cancel,
    });
    const byStranger = await c.anvil.account(STRANGER).signTypedData({
      domain: domainOf(c.token), types: TYPES, primaryType: 'CancelAuthorization', message: cancel,
    });
    const sigArgs = (sig: Hex) => form === 'vrs' ? vrs(sig) : [sig];
    await reverts(t, c, STRANGER, 'cancelAuthorization', [a.from, a.nonce, ...sigArgs(byStranger)], invalid);
    // a transfer signature is not a cancel signature
    await reverts(t, c, STRANGER, 'cancelAuthorization', [a.from, a.nonce, ...sigArgs(transferSig)], invalid);
    t.false(await used(c, a));

    const r = await submit(c, STRANGER, 'cancelAuthorization', [a.from, a.nonce, ...sigArgs(cancelSig)]);
    t.deepEqual(events(r), [['AuthorizationCanceled', { authorizer: a.from, nonce: a.nonce }]]);
    t.true(await used(c, a));
    await reverts(t, c, FACILITATOR, 'transferWithAuthorization', [...args(a), transferSig], used_);
    await reverts(t, c, STRANGER, 'cancelAuthorization', [a.from, a.nonce, ...sigArgs(cancelSig)], used_);
  }
  // a settled authorization cannot be canceled afterwards either
  const settled = auth(c, 'settled then canceled');
  await submit(c, FACILITATOR, 'transferWithAuthorization',
    [...args(settled), await sign(c, 'TransferWithAuthorization', settled)]);
  const late = await c.payer.signTypedData({ domain: domainOf(c.token), types: TYPES,
    primaryType: 'CancelAuthorization', message: { authorizer: settled.from, nonce: settled.nonce } });
  await reverts(t, c, PAYER, 'cancelAuthorization', [settled.from, settled.nonce, late], used_);
  t.is(await balance(c, c.payer.address), 95n * USDC_UNIT);
});

test('more than the balance reverts as ERC-20 and leaves the nonce usable once the funds are there', async (t) => {
  const c = await start(t);
  const a = auth(c, 'too much', { value: 100n * USDC_UNIT + 1n });
  const sig = await sign(c, 'TransferWithAuthorization', a);
  await reverts(t, c, FACILITATOR, 'transferWithAuthorization', [...args(a), sig],
    'ERC20: transfer amount exceeds balance');
  await reverts(t, c, FACILITATOR, 'transferWithAuthorization', [...args(a), ...vrs(sig)],
    'ERC20: transfer amount exceeds balance');
  t.false(await used(c, a), 'the revert rolled the nonce back with the rest');
  t.is(await balance(c, c.payer.address), 100n * USDC_UNIT);

  await submit(c, STRANGER, 'mint', [c.payer.address, 1n]);
  await submit(c, FACILITATOR, 'transferWithAuthorization', [...args(a), sig]);
  t.true(await used(c, a));
  t.is(await balance(c, c.payee), 100n * USDC_UNIT + 1n);
  t.is(await balance(c, c.payer.address), 0n);

  // a zero-address payee is refused by _transfer too, after every authorization check passed
  const nowhere = auth(c, 'nowhere', { to: '0x0000000000000000000000000000000000000000', value: 0n });
  await reverts(t, c, FACILITATOR, 'transferWithAuthorization',
    [...args(nowhere), await sign(c, 'TransferWithAuthorization', nowhere)], 'ERC20: transfer to the zero address');
});

test('receiveWithAuthorization settles only in the payee\'s own transaction', async (t) => {
  const c = await start(t);
  for (const form of ['vrs', 'bytes'] as const) {
    const a = auth(c, `receive ${form}`);
    const sig = await sign(c, 'ReceiveWithAuthorization', a);
    const fnArgs = [...args(a), ...(form === 'vrs' ? vrs(sig) : [sig])];
    await reverts(t, c, FACILITATOR, 'receiveWithAuthorization', fnArgs, 'FiatTokenV2: caller must be the payee');
    t.false(await used(c, a));
    const r = await submit(c, PAYEE, 'receiveWithAuthorization', fnArgs);
    t.deepEqual(events(r), [
      ['AuthorizationUsed', { authorizer: c.payer.address, nonce: a.nonce }],
      ['Transfer', { from: c.payer.address, to: c.payee, value: a.value }],
    ]);
    t.true(await used(c, a));
    await reverts(t, c, PAYEE, 'receiveWithAuthorization', fnArgs, 'FiatTokenV2: authorization is used or canceled');
  }
  // the two kinds share the nonce space, and neither signature works for the other kind
  const a = auth(c, 'shared');
  const transferSig = await sign(c, 'TransferWithAuthorization', a);
  await reverts(t, c, PAYEE, 'receiveWithAuthorization', [...args(a), transferSig], 'FiatTokenV2: invalid signature');
  await submit(c, FACILITATOR, 'transferWithAuthorization', [...args(a), transferSig]);
  await reverts(t, c, PAYEE, 'receiveWithAuthorization', [...args(a), await sign(c, 'ReceiveWithAuthorization', a)],
    'FiatTokenV2: authorization is used or canceled');
  t.is(await balance(c, c.payee), 15n * USDC_UNIT);
});

test('the checks come in USDC\'s order: payee, not yet valid, expired, used, signature, balance', async (t) => {
  const c = await start(t);
  const bad = `0x${'ff'.repeat(65)}` as Hex;
  const spent = auth(c, 'spent');
  await submit(c, FACILITATOR, 'transferWithAuthorization',
    [...args(spent), await sign(c, 'TransferWithAuthorization', spent)]);
  const outside = { ...spent, validAfter: c.now + 3600n, validBefore: 0n };
  const cases: [string, Auth, string][] = [
    ['receive', outside, 'FiatTokenV2: caller must be the payee'],
    ['transfer', outside, 'FiatTokenV2: authorization is not yet valid'],
    ['transfer', { ...spent, validBefore: 0n }, 'FiatTokenV2: authorization is expired'],
    ['transfer', { ...spent, value: 10n ** 30n }, 'FiatTokenV2: authorization is used or canceled'],
    ['transfer', { ...spent, value: 10n ** 30n, nonce: nonce('fresh') }, 'ECRecover: invalid signature \'s\' value'],
  ];
  for (const [kind, a, reason] of cases) {
    await reverts(t, c, FACILITATOR, `${kind}WithAuthorization`, [...args(a), bad], reason);
  }
});

test('a contract payer is checked with ERC-1271, not ecrecover', async (t) => {
  const c = await start(t);
  // runtime code that answers every call with isValidSignature's magic value 0x1626ba7e, or with zero
  const accepts = c.anvil.account(6).address;
  const refuses = c.anvil.account(7).address;
  await c.anvil.test.setCode({ address: accepts, bytecode: '0x631626ba7e60e01b60005260206000f3' });
  await c.anvil.test.setCode({ address: refuses, bytecode: '0x60206000f3' });
  for (const wallet of [accepts, refuses]) await submit(c, 0, 'transfer', [wallet, 10n * USDC_UNIT]);

  // no 65-byte ECDSA signature at all: only the wallet's say counts
  const a = auth(c, '1271', { from: accepts });
  await submit(c, FACILITATOR, 'transferWithAuthorization', [...args(a), '0xc0ffee']);
  t.true(await used(c, a));
  t.is(await balance(c, c.payee), 5n * USDC_UNIT);
  const b = auth(c, '1271 refused', { from: refuses });
  await reverts(t, c, FACILITATOR, 'transferWithAuthorization', [...args(b), '0xc0ffee'],
    'FiatTokenV2: invalid signature');
  // a valid ECDSA signature by the address's key does not help once the address holds code
  await reverts(t, c, FACILITATOR, 'transferWithAuthorization',
    [...args(b), await sign(c, 'TransferWithAuthorization', b, c.anvil.account(7))], 'FiatTokenV2: invalid signature');
});

test('ERC-20 transfer, approve and transferFrom with USDC\'s revert strings', async (t) => {
  const c = await start(t);
  const spender = c.anvil.account(FACILITATOR).address;
  await reverts(t, c, PAYER, 'transfer', [c.payee, 100n * USDC_UNIT + 1n], 'ERC20: transfer amount exceeds balance');
  await reverts(t, c, PAYER, 'transfer', ['0x0000000000000000000000000000000000000000', 1n],
    'ERC20: transfer to the zero address');
  await reverts(t, c, PAYER, 'approve', ['0x0000000000000000000000000000000000000000', 1n],
    'ERC20: approve to the zero address');
  const r = await submit(c, PAYER, 'approve', [spender, 3n * USDC_UNIT]);
  t.deepEqual(events(r), [['Approval', { owner: c.payer.address, spender, value: 3n * USDC_UNIT }]]);
  await reverts(t, c, FACILITATOR, 'transferFrom', [c.payer.address, c.payee, 3n * USDC_UNIT + 1n],
    'ERC20: transfer amount exceeds allowance');
  await submit(c, FACILITATOR, 'transferFrom', [c.payer.address, c.payee, 2n * USDC_UNIT]);
  t.is(await read<bigint>(c, 'allowance', [c.payer.address, spender]), USDC_UNIT);
  t.is(await balance(c, c.payee), 2n * USDC_UNIT);
  // no infinite approval in USDC: the maximum is spent down like any other allowance
  await submit(c, PAYER, 'approve', [spender, 2n ** 256n - 1n]);
  await submit(c, FACILITATOR, 'transferFrom', [c.payer.address, c.payee, 1n]);
  t.is(await read<bigint>(c, 'allowance', [c.payer.address, spender]), 2n ** 256n - 2n);
});
