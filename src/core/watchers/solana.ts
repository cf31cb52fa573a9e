// The Solana chain watcher (USDC, USDT): lists the signatures of each watched token account (the
// rail wallet's associated token account for the mint, or the configured ones) with
// getSignaturesForAddress at `finalized` commitment, newer than the stored cursor signature, reads
// each transaction with getTransaction (`finalized`), takes what arrived from its pre/post token
// balances (solana-parse.ts) and hands it to deposits.ts (which credits at most once). The cursor is
// one signature per account, saved after each transaction: a crash reads at most that one again.
// Finalized slots are not rolled back, so there is no re-scan window. Transactions above the cursor
// that are only `confirmed` are shown as `payment_seen` on INVOICE_STATUS, never credited from there.
// Policy: docs/settlement.md.
import { address, createSolanaRpc, getAddressEncoder, getProgramDerivedAddress, signature } from '@solana/kit';
import { put, type Op } from '../../store/store.ts';
import type { SolanaWatcherConfig } from '../config.ts';
import type { CoreContext } from '../context.ts';
import { referencedInvoice } from '../deposit-match.ts';
import { recordDeposit, type DepositRecord } from '../deposits.ts';
import { invoiceHoldingAmount } from '../invoices.ts';
import {
  PollingWatcher, RpcBehind, type PendingPayment, type WatchLog, type WatcherStatus,
} from './poll-loop.ts';
import { parseDeposits, referenceCandidates, type SolanaTransaction } from './solana-parse.ts';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
/** transactions read per pass: a watcher far behind catches up over several passes, never blocking stop() */
const TX_PER_PASS = 100;
const RPC_TIMEOUT_MS = 15_000;
/** confirmed (not yet finalized) transactions read per pass for `payment_seen` */
const PENDING_PER_PASS = 20;

/** The associated token account of `owner` for `mint` (classic SPL Token program), as wallets pay to it. */
export async function associatedTokenAccount(owner: string, mint: string): Promise<string> {
  const enc = getAddressEncoder();
  const [ata] = await getProgramDerivedAddress({
    programAddress: address(ASSOCIATED_TOKEN_PROGRAM),
    seeds: [enc.encode(address(owner)), enc.encode(address(TOKEN_PROGRAM)), enc.encode(address(mint))],
  });
  return ata;
}

/** The persisted cursor (sublevel watcher_cursors, key = rail). */
interface Cursor {
  /** the cluster's genesis hash: an RPC on another cluster stops the watcher */
  genesis: string;
  /** per token account: the newest signature read (null: none yet) and, until there is one, the first slot */
  accounts: Record<string, { until: string | null; min_slot: number }>;
  /** the finalized slot every account had been read through at the end of the last complete pass */
  scanned_slot: number | null;
}

type Rpc = ReturnType<typeof createSolanaRpc>;

export class SolanaWatcher extends PollingWatcher {
  readonly #cfg: SolanaWatcherConfig;
  readonly #rpc: Rpc;
  #accounts: string[] | null = null;

  constructor(ctx: CoreContext, cfg: SolanaWatcherConfig, log: WatchLog) {
    super(ctx, cfg, log, {
      rail: cfg.rail, family: 'solana', state: 'starting', finality: 'finalized', confirmations: 0,
      chain: null, cursor: null, head: null, tip: null, lag_blocks: null, last_pass_at: null, last_error: null,
      last_error_at: null, errors_in_a_row: 0, credited: 0, unmatched: 0, reorged_after_credit: [], accounts: [],
    });
    this.#cfg = cfg;
    this.#rpc = createSolanaRpc(cfg.rpcUrl);
  }

  status(): WatcherStatus {
    const s = this.state;
    return { ...s, reorged_after_credit: [], accounts: (s.accounts ?? []).map((a) => ({ ...a })) };
  }

  #opts() {
    return { abortSignal: AbortSignal.timeout(RPC_TIMEOUT_MS) };
  }

  /** One pass over every watched account: returns true when there is more to read right away. */
  protected async pass(): Promise<boolean> {
    const cfg = this.#cfg, rpc = this.#rpc, s = this.state;
    this.#accounts ??= cfg.tokenAccounts ?? [await associatedTokenAccount(cfg.owner, cfg.mint)];
    const genesis = await rpc.getGenesisHash().send(this.#opts());
    const head = Number(await rpc.getSlot({ commitment: 'finalized' }).send(this.#opts()));
    const tip = Number(await rpc.getSlot({ commitment: 'confirmed' }).send(this.#opts()));
    Object.assign(s, { chain: genesis, head, tip });
    const cur = await this.#rescanned(await this.#cursor(genesis, head));
    if (cur.scanned_slot !== null && head < cur.scanned_slot) throw new RpcBehind(head, cur.scanned_slot);
    const watched = new Set(this.#accounts);
    let budget = TX_PER_PASS, more = false;
    for (const acct of this.#accounts) {
      if (budget <= 0 || this.stopped) { more = true; break; }
      const entry = cur.accounts[acct] ??= { until: null, min_slot: cfg.fromSlot ?? head + 1 };
      const sigs = await this.#newSignatures(acct, entry);
      for (const sig of sigs.reverse()) {
        if (budget-- <= 0 || this.stopped) { more = true; break; }
        if (sig.err === null) {
          const tx = await rpc.getTransaction(signature(sig.signature), {
            encoding: 'json', commitment: 'finalized', maxSupportedTransactionVersion: 0,
          }).send(this.#opts());
          if (!tx) throw new Error(`the node has no finalized transaction ${sig.signature} it listed`);
          const parsed = tx as unknown as SolanaTransaction;
          const seen = parseDeposits(parsed, cfg.rail, cfg.mint, watched, head);
          const refs = seen.length ? referenceCandidates(parsed) : [];
          for (const d of seen) {
            const { deposit, fresh } = await recordDeposit(this.ctx, d, refs);
            if (fresh) this.#recorded(deposit);
          }
        }
        entry.until = sig.signature;
        await this.#save(cur);
      }
    }
    if (!more) {
      cur.scanned_slot = head;
      await this.#save(cur);
    }
    s.cursor = cur.scanned_slot;
    s.lag_blocks = s.cursor === null ? null : Math.max(0, tip - s.cursor);
    s.accounts = this.#accounts.map((a) => ({ address: a, last_signature: cur.accounts[a]?.until ?? null }));
    if (!more) await this.#scanPending(cur, watched, head, tip);
    return more;
  }

  /** Confirmed transactions above the finalized cursor that pay an open invoice: shown while they wait. */
  async #scanPending(cur: Cursor, watched: Set<string>, head: number, tip: number): Promise<void> {
    const pending = new Map<string, PendingPayment>();
    let budget = PENDING_PER_PASS;
    for (const acct of this.#accounts ?? []) {
      const until = cur.accounts[acct]?.until;
      const sigs = await this.#rpc.getSignaturesForAddress(address(acct), {
        commitment: 'confirmed', limit: PENDING_PER_PASS, ...(until ? { until: signature(until) } : {}),
      }).send(this.#opts());
      for (const sig of sigs) {
        if (Number(sig.slot) <= head || sig.err !== null || budget-- <= 0) continue;
        const tx = await this.#rpc.getTransaction(sig.signature, {
          encoding: 'json', commitment: 'confirmed', maxSupportedTransactionVersion: 0,
        }).send(this.#opts());
        if (!tx) continue;
        const parsed = tx as unknown as SolanaTransaction;
        const seen = parseDeposits(parsed, this.#cfg.rail, this.#cfg.mint, watched, tip);
        const named = seen.length
          ? await referencedInvoice(this.ctx, this.#cfg.rail, referenceCandidates(parsed))
          : null;
        for (const d of seen) {
          const inv = named?.inv ?? await invoiceHoldingAmount(this.ctx, this.#cfg.rail, d.amount);
          if (!inv || inv.state !== 'pending') continue;
          pending.set(inv.invoice_id, {
            tx_id: d.tx_id, log_index: d.log_index, block_number: d.block_number, confirmations: d.confirmations,
            finality: 'finalized',
          });
        }
      }
    }
    this.pending = pending;
  }

  /**
   * The account's finalized signatures newer than its cursor (newest first), every page of them: a
   * partial list would move the cursor past signatures never read, so stopping midway yields none.
   */
  async #newSignatures(acct: string, entry: Cursor['accounts'][string]) {
    type Sig = { signature: string; slot: bigint; err: unknown };
    const out: Sig[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await this.#rpc.getSignaturesForAddress(address(acct), {
        commitment: 'finalized', limit: this.#cfg.pageSize,
        ...(entry.until ? { until: signature(entry.until) } : {}), ...(before ? { before: signature(before) } : {}),
      }).send(this.#opts()) as readonly Sig[];
      for (const p of page) {
        // with no signature read yet, history before the first slot is not this watcher's
        if (entry.until === null && Number(p.slot) < entry.min_slot) return out;
        out.push(p);
      }
      if (page.length < this.#cfg.pageSize) return out;
      if (this.stopped) return [];
      before = page.at(-1)!.signature;
    }
  }

  async #cursor(genesis: string, head: number): Promise<Cursor> {
    const stored = await this.ctx.store.get<Cursor>('watcher_cursors', this.#cfg.rail);
    if (stored) {
      if (stored.genesis !== genesis) {
        throw new Error(`the RPC serves the cluster with genesis ${genesis}; the cursor is for ${stored.genesis}`);
      }
      return structuredClone(stored);
    }
    const cur: Cursor = { genesis, accounts: {}, scanned_slot: null };
    await this.#save(cur);
    const from = this.#cfg.fromSlot ?? head + 1;
    this.log.info({ rail: this.#cfg.rail, genesis, from_slot: from }, 'watcher cursor created');
    return cur;
  }

  async #save(cur: Cursor, also: Op[] = []): Promise<void> {
    const record = put('watcher_cursors', this.#cfg.rail, cur);
    await this.ctx.store.write([record, ...also]);
  }

  /** An operator's RESCAN: every watched account listed again down to its slot, from the newest signature. */
  #rescanned(cur: Cursor): Promise<Cursor> {
    return this.rescanned(cur, (from) => ({
      ...cur, accounts: Object.fromEntries(Object.keys(cur.accounts).map((a) => [a, { until: null, min_slot: from }])),
      scanned_slot: null,
    }), (next, also) => this.#save(next, also));
  }

  #recorded(d: DepositRecord): void {
    const fields = { rail: this.#cfg.rail, deposit_id: d.deposit_id, tx_id: d.tx_id, amount: d.amount };
    if (d.state === 'credited') {
      this.state.credited++;
      this.log.info({ ...fields, invoice_id: d.invoice_id }, 'deposit credited its invoice');
    } else {
      this.state.unmatched++;
      this.log.warn(fields, 'deposit matched no open invoice: in the unmatched queue (svc-admin unmatched)');
    }
  }
}
