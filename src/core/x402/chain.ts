// The chain an x402 payment settles on, through viem: the token's EIP-3009 state (is a nonce used, the
// payer's balance, its EIP-712 domain), the signature check (an EOA's, or a contract wallet's through
// ERC-1271), and the relayer: it signs the settlement transaction here and knows its hash before sending
// it, so a payment's record names the transaction before it can exist on chain (payments.ts).
import { readFileSync } from 'node:fs';
import {
  createPublicClient, createWalletClient, decodeEventLog, encodeFunctionData, http, keccak256, parseAbi, parseAbiItem,
  parseSignature, recoverTypedDataAddress,
  type Address, type Hash, type Hex, type PublicClient, type WalletClient,
} from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Authorization } from '../../protocol/x402.ts';
import type { EvmX402Config } from './config.ts';

// USDC's EIP-3009 interface as the node uses it (FiatTokenV2_2): the token's views, both settlement forms and the
// two events a settlement's receipt holds
const AUTHORIZATION_USED = parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)');
const TOKEN_ABI = parseAbi([
  'function name() view returns (string)',
  'function version() view returns (string)',
  'function balanceOf(address account) view returns (uint256)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);
const AUTHORIZATION = 'address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce';
const SETTLE_VRS = parseAbi([`function transferWithAuthorization(${AUTHORIZATION}, uint8 v, bytes32 r, bytes32 s)`]);
const SETTLE_BYTES = parseAbi([`function transferWithAuthorization(${AUTHORIZATION}, bytes signature)`]);

export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

export interface TokenDomain { name: string; version: string }

/** A settlement transaction as mined: whether it succeeded and whether it moved the authorized transfer. */
export interface Mined { status: 'success' | 'reverted'; blockNumber: number; paid: boolean }

/** The relayer refused to send: the transaction would revert now (estimation failed); nothing was sent. */
export class WouldRevert extends Error {
  constructor(message: string, options?: { cause?: unknown }) { super(message, options); this.name = 'WouldRevert'; }
}

export class X402Chain {
  readonly #cfg: EvmX402Config;
  readonly #public: PublicClient;
  readonly #wallet: WalletClient;
  readonly #relayer: PrivateKeyAccount;

  constructor(cfg: EvmX402Config) {
    this.#cfg = cfg;
    const transport = http(cfg.rpcUrl, { retryCount: 1, timeout: 10_000 });
    this.#public = createPublicClient({ transport, cacheTime: 0 });
    this.#relayer = privateKeyToAccount(readRelayerKey(cfg.relayerKeyFile));
    this.#wallet = createWalletClient({ account: this.#relayer, transport });
  }

  get relayer(): string {
    return this.#relayer.address.toLowerCase();
  }

  async chainId(): Promise<number> {
    return this.#public.getChainId();
  }

  async tokenDomain(): Promise<TokenDomain> {
    const address = this.#cfg.asset as Address;
    const [name, version] = await Promise.all([
      this.#public.readContract({ address, abi: TOKEN_ABI, functionName: 'name' }),
      this.#public.readContract({ address, abi: TOKEN_ABI, functionName: 'version' }),
    ]);
    return { name, version };
  }

  async relayerBalance(): Promise<bigint> {
    return this.#public.getBalance({ address: this.#relayer.address });
  }

  async authorizationUsed(from: string, nonce: string): Promise<boolean> {
    return this.#public.readContract({
      address: this.#cfg.asset as Address, abi: TOKEN_ABI, functionName: 'authorizationState',
      args: [from as Address, nonce as Hex],
    });
  }

  async balanceOf(owner: string): Promise<bigint> {
    return this.#public.readContract({
      address: this.#cfg.asset as Address, abi: TOKEN_ABI, functionName: 'balanceOf', args: [owner as Address],
    });
  }

  /** Whether `signature` is `a.from`'s over the authorization: an EOA's recovered, a contract's by ERC-1271. */
  async signedBy(domain: TokenDomain, a: Authorization, signature: string): Promise<boolean> {
    const typed = {
      signature: signature as Hex,
      domain: { ...domain, chainId: this.#cfg.chainId, verifyingContract: this.#cfg.asset as Address },
      types: TRANSFER_WITH_AUTHORIZATION_TYPES, primaryType: 'TransferWithAuthorization' as const, message: message(a),
    };
    try {
      // an EOA's signature recovers to it here; anything else may be a contract wallet's (ERC-1271, a call)
      if (signature.length === 132 && (await recoverTypedDataAddress(typed)).toLowerCase() === a.from.toLowerCase()) {
        return true;
      }
      return await this.#public.verifyTypedData({ address: a.from as Address, ...typed });
    } catch {
      return false;
    }
  }

  /**
   * Signs the settlement and returns it with its hash, unsent; its relayer nonce is the account's pending
   * count, so the caller sends one prepared transaction before preparing the next (payments.ts holds a lock).
   * WouldRevert when the chain refuses it now (estimation reverts: a used nonce, a bad signature, too
   * little balance).
   */
  async prepare(a: Authorization, signature: string): Promise<{ hash: Hash; raw: Hex }> {
    const data = settlementCall(a, signature);
    let request;
    try {
      request = await this.#wallet.prepareTransactionRequest({
        account: this.#relayer, to: this.#cfg.asset as Address, data, chain: null, chainId: this.#cfg.chainId,
      });
    } catch (e) {
      throw new WouldRevert(shortCause(e), { cause: e });
    }
    const raw = await this.#wallet.signTransaction({ ...request, account: this.#relayer, chain: null } as never);
    return { hash: keccak256(raw), raw };
  }

  async send(raw: Hex): Promise<void> {
    await this.#wallet.sendRawTransaction({ serializedTransaction: raw });
  }

  /** Whether the chain knows the transaction at all (mined or waiting in the node's pool). */
  async known(hash: string): Promise<boolean> {
    try {
      await this.#public.getTransaction({ hash: hash as Hash });
      return true;
    } catch {
      return false;
    }
  }

  /** The mined transaction, or null while it is not mined (or not known). */
  async mined(hash: string, a: Authorization): Promise<Mined | null> {
    let r;
    try {
      r = await this.#public.getTransactionReceipt({ hash: hash as Hash });
    } catch {
      return null;
    }
    const paid = r.status === 'success' && this.#paid(r.logs, a);
    return { status: r.status, blockNumber: Number(r.blockNumber), paid };
  }

  /**
   * The newest block trusted as final: the configured tag's, less the configured confirmations. `mined`: the
   * block a settlement is in; at `latest` with no confirmations it is trusted as it is (no call needed).
   */
  async trustedHead(mined: number): Promise<number> {
    if (this.#cfg.finality === 'latest' && this.#cfg.confirmations === 0) return mined;
    const tagged = this.#cfg.finality === 'latest'
      ? Number(await this.#public.getBlockNumber({ cacheTime: 0 }))
      : Number((await this.#public.getBlock({ blockTag: this.#cfg.finality })).number);
    return tagged - this.#cfg.confirmations;
  }

  async blockNumber(): Promise<number> {
    return Number(await this.#public.getBlockNumber({ cacheTime: 0 }));
  }

  /** The transaction that used `from`'s `nonce` (its AuthorizationUsed event), searched from `fromBlock`. */
  async usedBy(from: string, nonce: string, fromBlock: number): Promise<Hash | null> {
    const logs = await this.#public.getLogs({
      address: this.#cfg.asset as Address, event: AUTHORIZATION_USED,
      args: { authorizer: from as Address, nonce: nonce as Hex },
      fromBlock: BigInt(fromBlock), toBlock: 'latest',
    });
    return logs[0]?.transactionHash ?? null;
  }

  /**
   * The receipt's logs hold the transfer paid for: the token's Transfer of `value` from `from` to this node's
   * payee (not merely to whatever the authorization names: what is credited is what arrived here).
   */
  #paid(logs: readonly { address: string; topics: readonly Hex[]; data: Hex }[], a: Authorization): boolean {
    return logs.some((l) => {
      if (l.address.toLowerCase() !== this.#cfg.asset) return false;
      try {
        const ev = decodeEventLog({ abi: TOKEN_ABI, topics: l.topics as [Hex, ...Hex[]], data: l.data });
        return ev.eventName === 'Transfer' && ev.args.from.toLowerCase() === a.from.toLowerCase()
          && ev.args.to.toLowerCase() === this.#cfg.payTo && ev.args.value === BigInt(a.value);
      } catch {
        return false;
      }
    });
  }
}

const message = (a: Authorization) => ({
  from: a.from as Address, to: a.to as Address, value: BigInt(a.value), validAfter: BigInt(a.validAfter),
  validBefore: BigInt(a.validBefore), nonce: a.nonce as Hex,
});

/** transferWithAuthorization's call: v, r, s for a 65-byte signature (every EIP-3009 token), bytes otherwise. */
function settlementCall(a: Authorization, signature: string): Hex {
  const m = message(a);
  const head = [m.from, m.to, m.value, m.validAfter, m.validBefore, m.nonce] as const;
  if (signature.length === 132) {
    const { r, s, v, yParity } = parseSignature(signature as Hex);
    const vv = Number(v ?? BigInt(27 + yParity));
    return encodeFunctionData({
      abi: SETTLE_VRS, functionName: 'transferWithAuthorization', args: [...head, vv, r, s],
    });
  }
  return encodeFunctionData({
    abi: SETTLE_BYTES, functionName: 'transferWithAuthorization', args: [...head, signature as Hex],
  });
}

function readRelayerKey(file: string): Hex {
  const key = readFileSync(file, 'utf8').trim();
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) {
    throw new Error(`SVC_X402_RELAYER_KEY_FILE: ${file} must hold one private key, 0x and 64 hex digits`);
  }
  return key as Hex;
}

/** The first line of a viem error: the revert reason or the RPC's complaint, without the request it made. */
function shortCause(e: unknown): string {
  const m = (e as { shortMessage?: string }).shortMessage ?? (e instanceof Error ? e.message : String(e));
  return m.split('\n')[0]!.slice(0, 300);
}
