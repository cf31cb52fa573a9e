// A Solana chain in process for the Solana tests: litesvm (the real SVM with the real SPL Token and
// Associated Token Account programs) runs real signed transactions: a 6-decimal mint, the payers' and
// the rail's token accounts, transfers. litesvm keeps no getTransaction record with token balances, so
// the chain builds that JSON as a validator does: the account states read just before and just after
// the transaction executes, decoded as SPL token accounts, become pre/post token balances; the message
// (account keys, instructions), signatures, logs and error are the transaction's own.
//
// The chain also plays the cluster for transactions sent from outside (an x402 payment a client built
// and a facilitator co-signed): a blockhash stays valid for 150 blocks (litesvm itself knows only its
// latest, so its own check is off and this registry decides), a message is processed once (the status
// cache), and a transaction whose signatures do not verify never lands.
//
// SolanaRpcStandIn serves all this over a real HTTP JSON-RPC server on loopback: a stand-in for a
// Solana RPC node with commitment moved by hand. The watcher reads getGenesisHash, getSlot,
// getSignaturesForAddress and getTransaction; an x402 client and facilitator use getAccountInfo,
// getLatestBlockhash, isBlockhashValid, getBlockHeight, getBalance, getTokenAccountBalance,
// simulateTransaction, sendTransaction and getSignatureStatuses.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  appendTransactionMessageInstructions, createTransactionMessage, generateKeyPairSigner, getAddressDecoder,
  getBase58Decoder, getBase58Encoder, getBase64Decoder, getBase64Encoder, getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder, getPublicKeyFromAddress, getTransactionDecoder, lamports, pipe,
  setTransactionMessageFeePayerSigner, signTransactionMessageWithSigners, verifySignature, type Address,
  type EncodedAccount, type Instruction, type KeyPairSigner, type MaybeEncodedAccount, type Transaction,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  TOKEN_PROGRAM_ADDRESS, findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction, getMintDecoder, getMintSize, getMintToInstruction, getTokenDecoder,
  getTransferCheckedInstruction,
} from '@solana-program/token';
import { FailedTransactionMetadata, LiteSVM, type TransactionMetadata } from 'litesvm';
import type { SolanaTokenBalance, SolanaTransaction } from '../../src/core/watchers/solana-parse.ts';

export const DECIMALS = 6;

/** Blocks a blockhash stays valid for after the block it was made in (a validator's MAX_PROCESSING_AGE). */
const MAX_PROCESSING_AGE = 150n;
const LAMPORTS_PER_SIGNATURE = 5000n;
const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
/** The rentEpoch a node reports for every rent-exempt account (u64::MAX). */
const RENT_EPOCH_EXEMPT = 18446744073709551615n;

/** A getTransaction (`json`) result, as a node would answer it at `finalized`. */
export type TxJson = SolanaTransaction & Record<string, unknown>;

/** A TransactionError as Solana's JSON writes it: "BlockhashNotFound", {"InstructionError":[2,{"Custom":1}]}. */
export type TxError = string | Record<string, unknown>;

/** What simulating a transaction gave: the fields of simulateTransaction's value the SVM knows. */
export interface Simulation {
  err: TxError | null;
  logs: string[];
  unitsConsumed: number;
  returnData: { programId: Address; data: [string, 'base64'] } | null;
  /** The accounts as the simulation left them (empty when it failed). */
  accounts: Map<string, EncodedAccount>;
}

/** The parts of a compiled (legacy or v0) message the JSON is built from. */
interface Compiled {
  version: number | 'legacy';
  staticAccounts: readonly Address[];
  header: { numSignerAccounts: number; numReadonlySignerAccounts: number; numReadonlyNonSignerAccounts: number };
  instructions: { programAddressIndex: number; accountIndices?: readonly number[]; data?: Uint8Array }[];
  lifetimeToken: string;
}

const compiledOf = (tx: Transaction) =>
  getCompiledTransactionMessageDecoder().decode(tx.messageBytes) as unknown as Compiled;

// litesvm's TransactionErrorFieldless and InstructionErrorFieldless, in their numeric order: the runtime
// hands out the numbers, Solana's JSON writes the names
const TX_ERROR_NAMES = ('AccountInUse AccountLoadedTwice AccountNotFound ProgramAccountNotFound '
  + 'InsufficientFundsForFee InvalidAccountForFee AlreadyProcessed BlockhashNotFound CallChainTooDeep '
  + 'MissingSignatureForFee InvalidAccountIndex SignatureFailure InvalidProgramForExecution SanitizeFailure '
  + 'ClusterMaintenance AccountBorrowOutstanding WouldExceedMaxBlockCostLimit UnsupportedVersion '
  + 'InvalidWritableAccount WouldExceedMaxAccountCostLimit WouldExceedAccountDataBlockLimit TooManyAccountLocks '
  + 'AddressLookupTableNotFound InvalidAddressLookupTableOwner InvalidAddressLookupTableData '
  + 'InvalidAddressLookupTableIndex InvalidRentPayingAccount WouldExceedMaxVoteCostLimit '
  + 'WouldExceedAccountDataTotalLimit MaxLoadedAccountsDataSizeExceeded ResanitizationNeeded '
  + 'InvalidLoadedAccountsDataSizeLimit UnbalancedTransaction ProgramCacheHitMaxLimit CommitCancelled').split(' ');
const IX_ERROR_NAMES = ('GenericError InvalidArgument InvalidInstructionData InvalidAccountData AccountDataTooSmall '
  + 'InsufficientFunds IncorrectProgramId MissingRequiredSignature AccountAlreadyInitialized UninitializedAccount '
  + 'UnbalancedInstruction ModifiedProgramId ExternalAccountLamportSpend ExternalAccountDataModified '
  + 'ReadonlyLamportChange ReadonlyDataModified DuplicateAccountIndex ExecutableModified RentEpochModified '
  + 'NotEnoughAccountKeys AccountDataSizeChanged AccountNotExecutable AccountBorrowFailed AccountBorrowOutstanding '
  + 'DuplicateAccountOutOfSync InvalidError ExecutableDataModified ExecutableLamportChange '
  + 'ExecutableAccountNotRentExempt UnsupportedProgramId CallDepth MissingAccount ReentrancyNotAllowed '
  + 'MaxSeedLengthExceeded InvalidSeeds InvalidRealloc ComputationalBudgetExceeded PrivilegeEscalation '
  + 'ProgramEnvironmentSetupFailure ProgramFailedToComplete ProgramFailedToCompile Immutable IncorrectAuthority '
  + 'AccountNotRentExempt InvalidAccountOwner ArithmeticOverflow UnsupportedSysvar IllegalOwner '
  + 'MaxAccountsDataAllocationsExceeded MaxAccountsExceeded MaxInstructionTraceLengthExceeded '
  + 'BuiltinProgramsMustConsumeComputeUnits BorshIoError').split(' ');

/** litesvm's error object, written as Solana's JSON writes a TransactionError. */
function txErrorJson(e: unknown): TxError {
  if (typeof e === 'number') return TX_ERROR_NAMES[e] ?? `TransactionError${e}`;
  const o = e as { index: number; accountIndex: number; err(): unknown };
  switch ((e as object).constructor.name) {
    case 'TransactionErrorInstructionError': {
      const ix = o.err() as number | { code?: number; msg?: string };
      const inner = typeof ix === 'number' ? IX_ERROR_NAMES[ix] ?? `InstructionError${ix}`
        : ix.code !== undefined ? { Custom: ix.code } : { BorshIoError: ix.msg };
      return { InstructionError: [o.index, inner] };
    }
    case 'TransactionErrorDuplicateInstruction': return { DuplicateInstruction: o.index };
    case 'TransactionErrorInsufficientFundsForRent':
      return { InsufficientFundsForRent: { account_index: o.accountIndex } };
    case 'TransactionErrorProgramExecutionTemporarilyRestricted':
      return { ProgramExecutionTemporarilyRestricted: { account_index: o.accountIndex } };
    default: return String(e);
  }
}

/** A TransactionError as a node words it in "Transaction simulation failed: …" (its Display). */
export function txErrorText(err: TxError): string {
  const texts: Record<string, string> = {
    AlreadyProcessed: 'This transaction has already been processed', BlockhashNotFound: 'Blockhash not found',
    SignatureFailure: 'Transaction did not pass signature verification',
    InsufficientFundsForFee: 'Insufficient funds for fee',
    AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  };
  if (typeof err === 'string') return texts[err] ?? err;
  const ix = err.InstructionError as [number, string | { Custom?: number }] | undefined;
  if (!ix) return JSON.stringify(err);
  const [i, inner] = ix;
  const what = typeof inner === 'string' ? inner
    : inner.Custom !== undefined ? `custom program error: 0x${inner.Custom.toString(16)}` : JSON.stringify(inner);
  return `Error processing Instruction ${i}: ${what}`;
}

/**
 * Whether a transaction that failed so is still committed to a block (its fee charged, its status kept):
 * an error while executing is; a check before execution (blockhash, status cache, fee payer) refuses it.
 */
const committed = (err: TxError | null) =>
  err === null || (typeof err === 'object' && ('InstructionError' in err || 'InsufficientFundsForRent' in err));

/** A token amount as a node writes uiAmountString: exact, no trailing zeros. */
function uiAmountString(amount: bigint, decimals: number): string {
  const s = amount.toString().padStart(decimals + 1, '0');
  const frac = s.slice(s.length - decimals).replace(/0+$/, '');
  return frac ? `${s.slice(0, s.length - decimals)}.${frac}` : s.slice(0, s.length - decimals);
}

/**
 * The fee a validator charges: 5000 lamports a signature, plus the priority fee (compute unit limit ×
 * price in micro-lamports, rounded up). Without a SetComputeUnitLimit the limit is 200,000 a non-budget
 * instruction (at most 1,400,000).
 */
function feeOf(c: Compiled): bigint {
  let limit: bigint | undefined;
  let price = 0n;
  let others = 0n;
  for (const ix of c.instructions) {
    const d = ix.data ?? new Uint8Array();
    if (c.staticAccounts[ix.programAddressIndex] !== COMPUTE_BUDGET_PROGRAM) { others += 1n; continue; }
    const view = new DataView(d.buffer, d.byteOffset, d.byteLength);
    if (d[0] === 2 && d.length >= 5) limit = BigInt(view.getUint32(1, true));
    if (d[0] === 3 && d.length >= 9) price = view.getBigUint64(1, true);
  }
  const units = limit ?? (others * 200_000n > 1_400_000n ? 1_400_000n : others * 200_000n);
  return LAMPORTS_PER_SIGNATURE * BigInt(c.header.numSignerAccounts) + (units * price + 999_999n) / 1_000_000n;
}

function returnDataJson(meta: TransactionMetadata): Simulation['returnData'] {
  const r = meta.returnData();
  const data = r.data();
  if (data.length === 0) return null;
  return { programId: getAddressDecoder().decode(r.programId()), data: [getBase64Decoder().decode(data), 'base64'] };
}

export class SolanaChain {
  readonly svm: LiteSVM;
  readonly authority: KeyPairSigner;
  mint!: Address;
  slot = 100n;
  /** Every blockhash a block was made with, with the last block height it is valid at. */
  readonly #blockhashes = new Map<string, bigint>();
  /** The status cache: the messages committed (base64), each refused if it comes again. */
  readonly #processed = new Set<string>();
  /** How many times each signature (the first, base58) was executed and committed. */
  readonly #executions = new Map<string, number>();

  private constructor(svm: LiteSVM, authority: KeyPairSigner) {
    this.svm = svm;
    this.authority = authority;
  }

  /** A fresh SVM, a funded authority, and a 6-decimal mint it controls. */
  static async start(): Promise<SolanaChain> {
    // blockhash validity is this chain's registry (150 blocks); litesvm accepts only its latest one
    const svm = new LiteSVM().withBlockhashCheck(false);
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

  /** Creates `owner`'s associated token account (a payee's, before anything is paid to it); its address. */
  async createAta(owner: Address, mint = this.mint): Promise<Address> {
    const ata = await this.ata(owner, mint);
    await this.execute([this.createAtaIx(owner, mint, ata)]);
    return ata;
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

  /** A keypair holding `sol` lamports and no tokens: the fee payer a facilitator co-signs with. */
  async feePayer(sol = 10_000_000_000n): Promise<KeyPairSigner> {
    const signer = await generateKeyPairSigner();
    this.svm.airdrop(signer.address, lamports(sol));
    return signer;
  }

  /** A token account's amount in base units; null when there is no such token account. */
  tokenBalance(account: Address): bigint | null {
    const acct = this.svm.getAccount(account);
    if (!acct.exists || acct.programAddress !== TOKEN_PROGRAM_ADDRESS || acct.data.length !== 165) return null;
    return getTokenDecoder().decode(acct.data).amount;
  }

  transferIx(from: { signer: KeyPairSigner; ata: Address }, to: Address, amount: bigint): Instruction {
    return getTransferCheckedInstruction({
      source: from.ata, mint: this.mint, destination: to, authority: from.signer, amount, decimals: DECIMALS,
    });
  }

  /** The block height (here the slot) that blockhash validity is counted in. */
  get blockHeight(): bigint {
    return this.slot;
  }

  /** The latest blockhash and the last block height it is valid at, as getLatestBlockhash answers. */
  latestBlockhash(): { blockhash: string; lastValidBlockHeight: bigint } {
    const blockhash = this.svm.latestBlockhash();
    let last = this.#blockhashes.get(blockhash);
    if (last === undefined) this.#blockhashes.set(blockhash, (last = this.blockHeight + MAX_PROCESSING_AGE));
    return { blockhash, lastValidBlockHeight: last };
  }

  /** Whether a transaction made with `blockhash` can still land: a recent blockhash not yet past its height. */
  isBlockhashValid(blockhash: string): boolean {
    const last = this.#blockhashes.get(blockhash);
    return last !== undefined && this.blockHeight <= last;
  }

  /** Every blockhash handed out so far stops being valid, as 150 blocks later; the latest becomes a new one. */
  expireBlockhashes(): void {
    this.#blockhashes.clear();
    this.svm.expireBlockhash();
  }

  /** How many times the transaction with this (first) signature was executed and committed. */
  executions(signature: string): number {
    return this.#executions.get(signature) ?? 0;
  }

  /** Whether every signature the message requires is there and verifies (a validator's sigverify). */
  async verifySignatures(tx: Transaction): Promise<boolean> {
    const c = compiledOf(tx);
    for (const signer of c.staticAccounts.slice(0, c.header.numSignerAccounts)) {
      const sig = tx.signatures[signer];
      if (!sig || !(await verifySignature(await getPublicKeyFromAddress(signer), sig, tx.messageBytes))) return false;
    }
    return true;
  }

  /**
   * What `tx` would do against the current state, nothing kept: the bank's checks before execution
   * (blockhash, status cache), then the SVM with signatures not checked (verifySignatures is separate, as
   * a node's sigVerify is).
   */
  simulate(tx: Transaction): Simulation {
    const refused = this.#precheck(tx);
    if (refused) return { err: refused, logs: [], unitsConsumed: 0, returnData: null, accounts: new Map() };
    this.svm.withSigverify(false);
    try {
      const res = this.svm.simulateTransaction(tx);
      if (res instanceof FailedTransactionMetadata) {
        const meta = res.meta();
        return {
          err: txErrorJson(res.err()), logs: meta.logs(), unitsConsumed: Number(meta.computeUnitsConsumed()),
          returnData: returnDataJson(meta), accounts: new Map(),
        };
      }
      const meta = res.meta();
      return {
        err: null, logs: meta.logs(), unitsConsumed: Number(meta.computeUnitsConsumed()),
        returnData: returnDataJson(meta), accounts: new Map(res.postAccounts().map((a) => [a.address, a])),
      };
    } finally {
      this.svm.withSigverify(true);
    }
  }

  /**
   * A signed transaction reaching the leader: dropped (its error returned, no fee, no status) when a
   * signature does not verify, its blockhash is not valid, its message was processed before, or the
   * SVM refuses it before executing; otherwise executed in the next block and returned as getTransaction
   * gives it, failed or not.
   */
  async land(tx: Transaction): Promise<{ landed: TxJson } | { dropped: TxError }> {
    if (!(await this.verifySignatures(tx))) return { dropped: 'SignatureFailure' };
    const refused = this.#precheck(tx);
    if (refused) return { dropped: refused };
    this.#nextBlock();
    const json = this.#run(tx);
    const err = json.meta!.err as TxError | null;
    return committed(err) ? { landed: json } : { dropped: err! };
  }

  /**
   * Signs and executes `ixs` (fee payer: the authority, or `feePayer`) in the next slot; returns the
   * transaction as getTransaction would give it, failed or not.
   */
  async execute(ixs: Instruction[], feePayer: KeyPairSigner = this.authority): Promise<TxJson> {
    this.#nextBlock();
    const msg = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(feePayer, m),
      (m) => this.svm.setTransactionMessageLifetimeUsingLatestBlockhash(m),
      (m) => appendTransactionMessageInstructions(ixs, m),
    );
    return this.#run(await signTransactionMessageWithSigners(msg));
  }

  /** A new block: the slot moves on and the block has its own blockhash, valid for the next 150 blocks. */
  #nextBlock(): void {
    this.slot += 3n;
    this.svm.warpToSlot(this.slot);
    this.svm.expireBlockhash();
    this.latestBlockhash();
  }

  /** The bank's checks before executing: an unknown or expired blockhash, a message already processed. */
  #precheck(tx: Transaction): TxError | null {
    if (!this.isBlockhashValid(compiledOf(tx).lifetimeToken)) return 'BlockhashNotFound';
    if (this.#processed.has(getBase64Decoder().decode(tx.messageBytes))) return 'AlreadyProcessed';
    return null;
  }

  /**
   * Executes `tx` in the current slot and returns it as getTransaction would give it: the one place the
   * transaction JSON is built, for the chain's own transactions and for those sent to the stand-in.
   */
  #run(tx: Transaction): TxJson {
    const compiled = compiledOf(tx);
    const keys = compiled.staticAccounts;
    const before = this.#tokenBalances(keys);
    const lamportsBefore = keys.map((k) => Number(this.svm.getBalance(k) ?? 0n));
    const res = this.svm.sendTransaction(tx);
    const failed = res instanceof FailedTransactionMetadata;
    const meta = failed ? res.meta() : res;
    const err = failed ? txErrorJson(res.err()) : null;
    const b58 = getBase58Decoder();
    const signatures = keys.slice(0, compiled.header.numSignerAccounts)
      .map((k) => b58.decode(tx.signatures[k] ?? new Uint8Array(64)));
    if (committed(err)) {
      this.#processed.add(getBase64Decoder().decode(tx.messageBytes));
      this.#executions.set(signatures[0]!, this.executions(signatures[0]!) + 1);
    }
    const json = {
      slot: Number(this.slot),
      // the time the stand-in made the block, as a validator's: litesvm's own clock does not follow the wall clock
      blockTime: Math.floor(Date.now() / 1000),
      version: compiled.version,
      meta: {
        err,
        status: err === null ? { Ok: null } : { Err: err },
        fee: Number(feeOf(compiled)),
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
        signatures,
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
      out.push({
        accountIndex, mint: t.mint, owner: t.owner, programId: TOKEN_PROGRAM_ADDRESS,
        uiTokenAmount: tokenAmount(t.amount, DECIMALS),
      } as SolanaTokenBalance);
    });
    return out;
  }
}

/** A token amount as a node writes it (getTokenAccountBalance's value, a token balance's uiTokenAmount). */
function tokenAmount(amount: bigint, decimals: number) {
  const ui = uiAmountString(amount, decimals);
  return { amount: amount.toString(), decimals, uiAmount: Number(ui), uiAmountString: ui };
}

/** JSON with bigints written as exact integers (a node's JSON has no bigints; u64 values exceed 2^53). */
const toJson = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `\u0000big:${x}` : x))
  .replace(/"\\u0000big:(\d+)"/g, '$1');

/** A JSON-RPC error as a node answers it. */
class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
  }
}

type Commitment = 'processed' | 'confirmed' | 'finalized';

/** A wire transaction in the encoding a node accepts (base58 unless said, as a node defaults). */
function decodeWire(data: string, encoding = 'base58'): Transaction {
  if (encoding !== 'base58' && encoding !== 'base64') {
    throw new RpcError(-32602, `unsupported encoding: ${encoding}. Supported encodings: base58, base64`);
  }
  try {
    const bytes = (encoding === 'base64' ? getBase64Encoder() : getBase58Encoder()).encode(data);
    return getTransactionDecoder().decode(bytes);
  } catch (e) {
    throw new RpcError(-32602, `failed to deserialize VersionedTransaction: ${(e as Error).message}`);
  }
}

/** `tx` with its message's blockhash replaced (simulateTransaction's replaceRecentBlockhash). */
function withBlockhash(tx: Transaction, blockhash: string): Transaction {
  const c = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  const messageBytes = getCompiledTransactionMessageEncoder().encode({ ...c, lifetimeToken: blockhash } as typeof c);
  return { ...tx, messageBytes } as unknown as Transaction;
}

/** An account as getAccountInfo answers it (null when there is none). */
function accountJson(a: MaybeEncodedAccount | EncodedAccount, encoding = 'binary',
  slice?: { offset: number; length: number }): unknown {
  if ('exists' in a && !a.exists) return null;
  const acct = a as EncodedAccount;
  const bytes = slice ? acct.data.slice(slice.offset, slice.offset + slice.length) : acct.data;
  let data: unknown;
  if (encoding === 'base64') data = [getBase64Decoder().decode(bytes), 'base64'];
  else if (encoding === 'base58') data = [getBase58Decoder().decode(bytes), 'base58'];
  else if (encoding === 'binary') data = getBase58Decoder().decode(bytes);
  else throw new RpcError(-32602, `encoding ${encoding} is not served by this stand-in (base64, base58 are)`);
  return {
    data, executable: acct.executable, lamports: acct.lamports, owner: acct.programAddress,
    rentEpoch: RENT_EPOCH_EXEMPT, space: acct.data.length,
  };
}

/**
 * A stand-in for a Solana RPC node over real HTTP on loopback.
 *
 * Watcher side: getGenesisHash, getSlot, getSignaturesForAddress (newest first, `before`/`until`/`limit`,
 * only what `finalizedSlot` covers at `finalized`, `confirmedSlot` otherwise) and getTransaction, from the
 * transactions `add`ed and those that landed from sendTransaction. `ignoreUntil` makes it list every
 * signature again whatever the cursor (a misbehaving node: the watcher must still credit once).
 *
 * Payment side (needs the chain: `start(chain)`): a sent transaction lands in a block of its own; its
 * commitment follows its slot: finalized up to `finalizedSlot`, confirmed up to `confirmedSlot`,
 * processed above. Test controls: `down`, `sendDown`, `holdSends`/`mineHeld()`, `dropSends`,
 * `autoConfirm`, `confirmAll()`, `finalizeAll()`, `expireBlockhashes()`, `executions()`.
 */
export class SolanaRpcStandIn {
  readonly server: Server;
  readonly chain: SolanaChain | undefined;
  url = '';
  readonly genesis = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d';
  finalizedSlot = 0;
  confirmedSlot = 0;
  ignoreUntil = false;
  /** Every request answers HTTP 503. */
  down = false;
  /** sendTransaction answers HTTP 503 (the node takes nothing); every other method answers. */
  sendDown = false;
  /** sendTransaction (preflight included) accepts and returns the signature; the transaction lands at mineHeld(). */
  holdSends = false;
  /** sendTransaction (preflight included) accepts and returns the signature; the transaction never lands. */
  dropSends = false;
  /** A transaction that lands is confirmed at once, as `add` confirms; otherwise processed until confirmAll(). */
  autoConfirm = false;
  /** The signature of every transaction sendTransaction accepted, in order, repeats included. */
  readonly sent: string[] = [];
  readonly calls: string[] = [];
  readonly #txs: TxJson[] = [];
  readonly #held: Transaction[] = [];

  private constructor(chain: SolanaChain | undefined) {
    this.chain = chain;
    this.server = createServer((req, res) => this.#handle(req, res));
  }

  /** The stand-in on a free loopback port; with `chain`, it also serves state, simulation and sending. */
  static async start(chain?: SolanaChain): Promise<SolanaRpcStandIn> {
    const s = new SolanaRpcStandIn(chain);
    await new Promise<void>((r) => s.server.listen(0, '127.0.0.1', () => r()));
    s.url = `http://127.0.0.1:${(s.server.address() as { port: number }).port}`;
    return s;
  }

  /** A transaction the chain executed, now confirmed. */
  add(tx: TxJson): void {
    this.#record(tx);
    this.confirmedSlot = Math.max(this.confirmedSlot, Number(tx.slot));
  }

  /** Everything added or landed so far is finalized. */
  finalizeAll(): void {
    this.finalizedSlot = this.confirmedSlot = Math.max(this.confirmedSlot, this.finalizedSlot + 1, this.#topSlot());
  }

  /** Everything added or landed so far is confirmed. */
  confirmAll(): void {
    this.confirmedSlot = Math.max(this.confirmedSlot, this.#topSlot());
  }

  /** The blockhashes handed out so far expire: isBlockhashValid false, a transaction made with one never lands. */
  expireBlockhashes(): void {
    this.#needChain('expireBlockhashes').expireBlockhashes();
  }

  /** How many times the transaction with this signature was executed (a validator: at most once). */
  executions(signature: string): number {
    return this.#needChain('executions').executions(signature);
  }

  /** Transactions sendTransaction holds (holdSends), not yet landed. */
  get held(): number {
    return this.#held.length;
  }

  /** The held transactions reach the leader, in the order sent; returns those that landed. */
  async mineHeld(): Promise<TxJson[]> {
    const out: TxJson[] = [];
    for (const tx of this.#held.splice(0)) {
      const landed = await this.#land(tx);
      if (landed) out.push(landed);
    }
    return out;
  }

  /** The commitment a signature has reached; null when no transaction with it landed. */
  commitmentOf(signature: string): Commitment | null {
    const t = this.#find(signature);
    return t ? this.#level(Number(t.slot)) : null;
  }

  #needChain(what: string): SolanaChain {
    if (!this.chain) throw new RpcError(-32601, `${what} needs a chain: SolanaRpcStandIn.start(chain)`);
    return this.chain;
  }

  #topSlot(): number {
    return Math.max(0, ...this.#txs.map((t) => Number(t.slot)));
  }

  /** The slot a read at `commitment` sees: the chain's tip when processed. */
  #slotAt(commitment: string): number {
    if (commitment === 'finalized') return this.finalizedSlot;
    if (commitment === 'confirmed') return this.confirmedSlot;
    return Math.max(this.confirmedSlot, this.#topSlot(), this.chain ? Number(this.chain.slot) : 0);
  }

  #level(slot: number): Commitment {
    return slot <= this.finalizedSlot ? 'finalized' : slot <= this.confirmedSlot ? 'confirmed' : 'processed';
  }

  #find(signature: string): TxJson | undefined {
    return this.#txs.find((x) => x.transaction.signatures[0] === signature);
  }

  /** Keeps `tx` among the transactions in slot order (the listing's newest first relies on it). */
  #record(tx: TxJson): void {
    const i = this.#txs.findIndex((x) => Number(x.slot) > Number(tx.slot));
    this.#txs.splice(i < 0 ? this.#txs.length : i, 0, tx);
  }

  async #land(tx: Transaction): Promise<TxJson | null> {
    const r = await this.#needChain('sendTransaction').land(tx);
    if (!('landed' in r)) return null;
    this.#record(r.landed);
    if (this.autoConfirm) this.confirmedSlot = Math.max(this.confirmedSlot, Number(r.landed.slot));
    return r.landed;
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.#respond(Buffer.concat(chunks).toString('utf8'), res).catch(() => res.destroy());
    });
  }

  async #respond(body: string, res: ServerResponse): Promise<void> {
    const unavailable = () => res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream unavailable');
    if (this.down) return void unavailable();
    let call: { id: unknown; method: string; params?: any[] };
    try {
      call = JSON.parse(body) as typeof call;
    } catch {
      const error = { code: -32700, message: 'Parse error' };
      return void res.writeHead(200, { 'content-type': 'application/json' })
        .end(toJson({ jsonrpc: '2.0', id: null, error }));
    }
    if (this.sendDown && call.method === 'sendTransaction') return void unavailable();
    this.calls.push(call.method);
    let out: { result: unknown } | { error: { code: number; message: string; data?: unknown } };
    try {
      out = { result: await this.#answer(call.method, call.params ?? []) };
    } catch (e) {
      out = e instanceof RpcError
        ? { error: { code: e.code, message: e.message, ...(e.data === undefined ? {} : { data: e.data }) } }
        : { error: { code: -32603, message: `Internal error: ${(e as Error).message}` } };
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(toJson({ jsonrpc: '2.0', id: call.id, ...out }));
  }

  async #answer(method: string, params: any[]): Promise<unknown> {
    const commitment = (params.at(-1) as { commitment?: string } | undefined)?.commitment ?? 'finalized';
    const visible = commitment === 'finalized' ? this.finalizedSlot : this.confirmedSlot;
    // state reads answer from the chain's current state, whatever the commitment asked
    const context = () => ({ slot: this.#slotAt('processed') });
    switch (method) {
      case 'getGenesisHash': return this.genesis;
      case 'getSlot': return commitment === 'processed' ? this.#slotAt('processed') : visible;
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
        const t = this.#find(sig);
        return t && Number(t.slot) <= visible ? t : null;
      }
      case 'getSignatureStatuses': {
        const [sigs] = params as [string[]];
        if (sigs.length > 256) throw new RpcError(-32602, 'Too many inputs provided; max 256');
        return {
          context: context(),
          value: sigs.map((sig) => {
            const t = this.#find(sig);
            if (!t) return null;
            const level = this.#level(Number(t.slot));
            return {
              slot: t.slot, confirmations: level === 'finalized' ? null : level === 'confirmed' ? 1 : 0,
              err: t.meta!.err, status: t.meta!.err === null ? { Ok: null } : { Err: t.meta!.err },
              confirmationStatus: level,
            };
          }),
        };
      }
      case 'getLatestBlockhash':
        return { context: context(), value: this.#needChain(method).latestBlockhash() };
      case 'isBlockhashValid':
        return { context: context(), value: this.#needChain(method).isBlockhashValid(params[0] as string) };
      case 'getBlockHeight': return this.#needChain(method).blockHeight;
      case 'getBalance':
        return { context: context(), value: this.#needChain(method).svm.getBalance(params[0] as Address) ?? 0n };
      case 'getAccountInfo': {
        type Cfg = { encoding?: string; dataSlice?: { offset: number; length: number } };
        const [addr, cfg = {}] = params as [Address, Cfg];
        const acct = this.#needChain(method).svm.getAccount(addr);
        return { context: context(), value: accountJson(acct, cfg.encoding, cfg.dataSlice) };
      }
      case 'getTokenAccountBalance': {
        const chain = this.#needChain(method);
        const amount = chain.tokenBalance(params[0] as Address);
        if (amount === null) throw new RpcError(-32602, 'Invalid param: not a Token account');
        const token = getTokenDecoder().decode((chain.svm.getAccount(params[0] as Address) as EncodedAccount).data);
        const mint = chain.svm.getAccount(token.mint) as EncodedAccount;
        return { context: context(), value: tokenAmount(amount, getMintDecoder().decode(mint.data).decimals) };
      }
      case 'simulateTransaction': return this.#simulate(params);
      case 'sendTransaction': return this.#send(params);
      default: throw new RpcError(-32601, `method ${method} is not served by this stand-in`);
    }
  }

  async #simulate(params: any[]): Promise<unknown> {
    const chain = this.#needChain('simulateTransaction');
    const [data, cfg = {}] = params as [string, {
      encoding?: string; sigVerify?: boolean; replaceRecentBlockhash?: boolean;
      accounts?: { addresses: Address[]; encoding?: string };
    }];
    let tx = decodeWire(data, cfg.encoding);
    let replacementBlockhash: ReturnType<SolanaChain['latestBlockhash']> | null = null;
    if (cfg.replaceRecentBlockhash) {
      if (cfg.sigVerify) throw new RpcError(-32602, 'sigVerify may not be used with replaceRecentBlockhash');
      replacementBlockhash = chain.latestBlockhash();
      tx = withBlockhash(tx, replacementBlockhash.blockhash);
    }
    if (cfg.sigVerify && !(await chain.verifySignatures(tx))) {
      throw new RpcError(-32003, 'Transaction signature verification failure');
    }
    const sim = chain.simulate(tx);
    let accounts: unknown[] | null = null;
    if (cfg.accounts) {
      const encoding = cfg.accounts.encoding ?? 'base64';
      if (encoding !== 'base64') throw new RpcError(-32602, `${encoding} encoding not supported`);
      accounts = cfg.accounts.addresses.map((a) => (sim.err ? null
        : accountJson(sim.accounts.get(a) ?? chain.svm.getAccount(a), 'base64')));
    }
    return {
      context: { slot: this.#slotAt('processed') },
      value: {
        err: sim.err, logs: sim.logs, accounts, unitsConsumed: sim.unitsConsumed, returnData: sim.returnData,
        innerInstructions: null, replacementBlockhash,
      },
    };
  }

  /**
   * sendTransaction as a node answers it. With preflight (the default): signatures verified (-32003 when
   * not), then simulated against the current state (-32002 "Transaction simulation failed: …" with the
   * simulation as data: an expired blockhash, a message already processed, a failing instruction). With
   * skipPreflight: the signature, whatever the transaction; the leader drops it if it cannot land.
   */
  async #send(params: any[]): Promise<string> {
    const chain = this.#needChain('sendTransaction');
    const [data, cfg = {}] = params as [string, { encoding?: string; skipPreflight?: boolean }];
    const tx = decodeWire(data, cfg.encoding);
    const c = compiledOf(tx);
    const signature = getBase58Decoder().decode(tx.signatures[c.staticAccounts[0]!] ?? new Uint8Array(64));
    if (!cfg.skipPreflight) {
      if (!(await chain.verifySignatures(tx))) throw new RpcError(-32003, 'Transaction signature verification failure');
      const sim = chain.simulate(tx);
      if (sim.err) {
        throw new RpcError(-32002, `Transaction simulation failed: ${txErrorText(sim.err)}`, {
          err: sim.err, logs: sim.logs, accounts: null, unitsConsumed: sim.unitsConsumed, returnData: sim.returnData,
          innerInstructions: null, replacementBlockhash: null,
        });
      }
    }
    this.sent.push(signature);
    if (this.dropSends) return signature;
    if (this.holdSends) this.#held.push(tx);
    else await this.#land(tx);
    return signature;
  }

  close(): Promise<void> {
    return new Promise((r) => { this.server.closeAllConnections(); this.server.close(() => r()); });
  }
}
