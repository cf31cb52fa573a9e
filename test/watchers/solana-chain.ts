// A Solana chain in process for the Solana watcher tests: litesvm (the real SVM with the real SPL
// Token and Associated Token Account programs) runs real signed transactions: a 6-decimal mint, the
// payers' and the rail's token accounts, transfers. litesvm keeps no getTransaction record with token
// balances, so `executed()` builds that JSON as a validator does: the account states read just before
// and just after the transaction executes, decoded as SPL token accounts, become pre/post token
// balances; the message (account keys, instructions), signature, logs and error are the transaction's
// own. SolanaRpcStandIn serves those records over a real HTTP JSON-RPC server on loopback: a
// stand-in for a Solana RPC node answering the four methods the watcher calls, with finality moved
// by hand.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  appendTransactionMessageInstructions, createTransactionMessage, generateKeyPairSigner,
  getBase58Decoder, getCompiledTransactionMessageDecoder, getSignatureFromTransaction, lamports, pipe,
  setTransactionMessageFeePayerSigner, signTransactionMessageWithSigners, type Address, type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  TOKEN_PROGRAM_ADDRESS, findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction, getMintSize, getMintToInstruction, getTokenDecoder, getTransferCheckedInstruction,
} from '@solana-program/token';
import { FailedTransactionMetadata, LiteSVM } from 'litesvm';
import type { SolanaTokenBalance, SolanaTransaction } from '../../src/core/watchers/solana-parse.ts';

export const DECIMALS = 6;

/** A getTransaction (`json`) result, as a node would answer it at `finalized`. */
export type TxJson = SolanaTransaction & Record<string, unknown>;

/** The parts of a compiled (legacy or v0) message the JSON is built from. */
interface Compiled {
  staticAccounts: readonly Address[];
  header: { numSignerAccounts: number; numReadonlySignerAccounts: number; numReadonlyNonSignerAccounts: number };
  instructions: { programAddressIndex: number; accountIndices?: readonly number[]; data?: Uint8Array }[];
  lifetimeToken: string;
}

export class SolanaChain {
  readonly svm: LiteSVM;
  readonly authority: KeyPairSigner;
  mint!: Address;
  slot = 100n;

  private constructor(svm: LiteSVM, authority: KeyPairSigner) {
    this.svm = svm;
    this.authority = authority;
  }

  /** A fresh SVM, a funded authority, and a 6-decimal mint it controls. */
  static async start(): Promise<SolanaChain> {
    const svm = new LiteSVM();
    const authority = await generateKeyPairSigner();
    svm.airdrop(authority.address, lamports(100_000_000_000n));
    const c = new SolanaChain(svm, authority);
    svm.warpToSlot(c.slot);
    const mint = await generateKeyPairSigner();
    const space = BigInt(getMintSize());
    await c.execute([
      getCreateAccountInstruction({
        payer: authority, newAccount: mint, space, programAddress: TOKEN_PROGRAM_ADDRESS,
        lamports: svm.minimumBalanceForRentExemption(space),
      }),
      getInitializeMint2Instruction({ mint: mint.address, decimals: DECIMALS, mintAuthority: authority.address }),
    ]);
    c.mint = mint.address;
    return c;
  }

  async ata(owner: Address, mint = this.mint): Promise<Address> {
    const [pda] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    return pda;
  }

  createAtaIx(owner: Address, mint = this.mint, ata: Address): Instruction {
    return getCreateAssociatedTokenIdempotentInstruction({
      payer: this.authority, ata, owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
  }

  /** A wallet with its token account holding `amount` base units. */
  async fundedWallet(amount: bigint): Promise<{ signer: KeyPairSigner; ata: Address }> {
    const signer = await generateKeyPairSigner();
    this.svm.airdrop(signer.address, lamports(1_000_000_000n));
    const ata = await this.ata(signer.address);
    await this.execute([
      this.createAtaIx(signer.address, this.mint, ata),
      getMintToInstruction({ mint: this.mint, token: ata, mintAuthority: this.authority, amount }),
    ]);
    return { signer, ata };
  }

  transferIx(from: { signer: KeyPairSigner; ata: Address }, to: Address, amount: bigint): Instruction {
    return getTransferCheckedInstruction({
      source: from.ata, mint: this.mint, destination: to, authority: from.signer, amount, decimals: DECIMALS,
    });
  }

  /**
   * Signs and executes `ixs` (fee payer: the authority, or `feePayer`) in the next slot; returns the
   * transaction as getTransaction would give it, failed or not.
   */
  async execute(ixs: Instruction[], feePayer: KeyPairSigner = this.authority): Promise<TxJson> {
    this.slot += 3n;
    this.svm.warpToSlot(this.slot);
    this.svm.expireBlockhash();
    const msg = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(feePayer, m),
      (m) => this.svm.setTransactionMessageLifetimeUsingLatestBlockhash(m),
      (m) => appendTransactionMessageInstructions(ixs, m),
    );
    const tx = await signTransactionMessageWithSigners(msg);
    const compiled = getCompiledTransactionMessageDecoder().decode(tx.messageBytes) as unknown as Compiled;
    const keys = compiled.staticAccounts as readonly Address[];
    const before = this.#tokenBalances(keys);
    const lamportsBefore = keys.map((k) => Number(this.svm.getBalance(k) ?? 0n));
    const res = this.svm.sendTransaction(tx);
    const failed = res instanceof FailedTransactionMetadata;
    const meta = failed ? res.meta() : res;
    const b58 = getBase58Decoder();
    const json = {
      slot: Number(this.slot),
      // the time the stand-in made the block, as a validator's: litesvm's own clock does not follow the wall clock
      blockTime: Math.floor(Date.now() / 1000),
      version: 0,
      meta: {
        err: failed ? { InstructionError: [0, String(res.err())] } : null,
        status: failed ? { Err: String(res.err()) } : { Ok: null },
        fee: 5000 * compiled.header.numSignerAccounts,
        preBalances: lamportsBefore,
        postBalances: keys.map((k) => Number(this.svm.getBalance(k) ?? 0n)),
        preTokenBalances: before,
        postTokenBalances: this.#tokenBalances(keys),
        innerInstructions: [],
        logMessages: meta.logs(),
        loadedAddresses: { writable: [], readonly: [] },
        rewards: [],
        computeUnitsConsumed: Number(meta.computeUnitsConsumed()),
      },
      transaction: {
        signatures: [getSignatureFromTransaction(tx)],
        message: {
          accountKeys: keys,
          header: {
            numRequiredSignatures: compiled.header.numSignerAccounts,
            numReadonlySignedAccounts: compiled.header.numReadonlySignerAccounts,
            numReadonlyUnsignedAccounts: compiled.header.numReadonlyNonSignerAccounts,
          },
          instructions: compiled.instructions.map((ix) => ({
            programIdIndex: ix.programAddressIndex, accounts: [...(ix.accountIndices ?? [])],
            data: b58.decode(ix.data ?? new Uint8Array()), stackHeight: null,
          })),
          recentBlockhash: compiled.lifetimeToken,
        },
      },
    };
    return json as TxJson;
  }

  /** The SPL token accounts among `keys`, as a validator records them in pre/postTokenBalances. */
  #tokenBalances(keys: readonly Address[]): SolanaTokenBalance[] {
    const out: SolanaTokenBalance[] = [];
    keys.forEach((k, accountIndex) => {
      const acct = this.svm.getAccount(k);
      if (!acct.exists || acct.programAddress !== TOKEN_PROGRAM_ADDRESS || acct.data.length !== 165) return;
      const t = getTokenDecoder().decode(acct.data);
      const amount = t.amount.toString();
      const ui = Number(t.amount) / 10 ** DECIMALS;
      out.push({
        accountIndex, mint: t.mint, owner: t.owner, programId: TOKEN_PROGRAM_ADDRESS,
        uiTokenAmount: { amount, decimals: DECIMALS, uiAmount: ui, uiAmountString: String(ui) },
      } as SolanaTokenBalance);
    });
    return out;
  }
}

/** JSON with bigints written as numbers (a node's JSON has no bigints). */
const toJson = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? Number(x) : x));

/**
 * A stand-in for a Solana RPC node over real HTTP on loopback: getGenesisHash, getSlot,
 * getSignaturesForAddress (newest first, `before`/`until`/`limit`, only what `finalizedSlot` covers
 * at `finalized`) and getTransaction, from the transactions `add`ed. `ignoreUntil` makes it list
 * every signature again whatever the cursor (a misbehaving node: the watcher must still credit once).
 */
export class SolanaRpcStandIn {
  readonly server: Server;
  url = '';
  readonly genesis = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d';
  finalizedSlot = 0;
  confirmedSlot = 0;
  ignoreUntil = false;
  down = false;
  readonly #txs: TxJson[] = [];
  readonly calls: string[] = [];

  private constructor() {
    this.server = createServer((req, res) => this.#handle(req, res));
  }

  static async start(): Promise<SolanaRpcStandIn> {
    const s = new SolanaRpcStandIn();
    await new Promise<void>((r) => s.server.listen(0, '127.0.0.1', () => r()));
    s.url = `http://127.0.0.1:${(s.server.address() as { port: number }).port}`;
    return s;
  }

  add(tx: TxJson): void {
    this.#txs.push(tx);
    this.confirmedSlot = Math.max(this.confirmedSlot, Number(tx.slot));
  }

  /** Everything added so far is finalized. */
  finalizeAll(): void {
    this.finalizedSlot = this.confirmedSlot = Math.max(this.confirmedSlot, this.finalizedSlot + 1);
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (this.down) {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream unavailable');
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      const call = JSON.parse(body) as { id: unknown; method: string; params?: any[] };
      this.calls.push(call.method);
      let result: unknown;
      try {
        result = this.#answer(call.method, call.params ?? []);
      } catch (e) {
        const error = { code: -32601, message: String((e as Error).message) };
        res.writeHead(200, { 'content-type': 'application/json' }).end(toJson({ jsonrpc: '2.0', id: call.id, error }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(toJson({ jsonrpc: '2.0', id: call.id, result }));
    });
  }

  #answer(method: string, params: any[]): unknown {
    const commitment = (params.at(-1) as { commitment?: string } | undefined)?.commitment ?? 'finalized';
    const visible = commitment === 'finalized' ? this.finalizedSlot : this.confirmedSlot;
    switch (method) {
      case 'getGenesisHash': return this.genesis;
      case 'getSlot': return visible;
      case 'getSignaturesForAddress': {
        const [addr, cfg = {}] = params as [string, { before?: string; until?: string; limit?: number }];
        const newestFirst = this.#txs.filter((t) => Number(t.slot) <= visible
          && t.transaction.message.accountKeys.includes(addr)).reverse();
        let list = newestFirst;
        if (cfg.before) list = list.slice(list.findIndex((t) => t.transaction.signatures[0] === cfg.before) + 1);
        if (cfg.until && !this.ignoreUntil) {
          const i = list.findIndex((t) => t.transaction.signatures[0] === cfg.until);
          if (i >= 0) list = list.slice(0, i);
        }
        return list.slice(0, cfg.limit ?? 1000).map((t) => ({
          signature: t.transaction.signatures[0], slot: t.slot, err: t.meta!.err, memo: null,
          blockTime: t.blockTime, confirmationStatus: Number(t.slot) <= this.finalizedSlot ? 'finalized' : 'confirmed',
        }));
      }
      case 'getTransaction': {
        const [sig] = params as [string];
        const t = this.#txs.find((x) => x.transaction.signatures[0] === sig);
        return t && Number(t.slot) <= visible ? t : null;
      }
      default: throw new Error(`method ${method} is not served by this stand-in`);
    }
  }

  close(): Promise<void> {
    return new Promise((r) => { this.server.closeAllConnections(); this.server.close(() => r()); });
  }
}
