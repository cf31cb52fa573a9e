// The EVM chain watcher (USDC on Base; USDT on TRON through TRON's Ethereum-style JSON-RPC): reads the
// token's Transfer events to the rail's address with eth_getLogs in bounded block ranges up to a
// trusted head (the node's `finalized`/`safe`/`latest` tag less N confirmations), hands each one to
// deposits.ts (which credits at most once), and keeps a persisted cursor. Every pass re-reads a
// window behind the cursor: a recorded deposit missing from it was reorged out after being recorded,
// which is reported (logged, status), never reversed. It never writes the ledger itself and never
// runs on the request path. Policy: docs/settlement.md.
// TRON (family `tron`): the same requests; its configured `T…` addresses arrive here as hex
// (config.ts), and deposits name the payer as `T…` and the transaction as TRON writes it (64 hex).
import { createPublicClient, http, parseAbiItem, type PublicClient } from 'viem';
import { put, type Op } from '../../store/store.ts';
import type { EvmWatcherConfig } from '../config.ts';
import type { CoreContext } from '../context.ts';
import { listReorged, markReorged, recordDeposit, txKey, type Deposit } from '../deposits.ts';
import { invoiceHoldingAmount } from '../invoices.ts';
import {
  PollingWatcher, RpcBehind, type PendingPayment, type WatchLog, type WatcherStatus,
} from './poll-loop.ts';
import { hexToTron } from './tron-address.ts';

/** The persisted cursor (sublevel watcher_cursors, key = rail). */
interface Cursor {
  /** the next block to scan */
  next_block: number;
  /** the first block ever scanned: re-scans never go below it */
  first_block: number;
  chain: number;
  /** deposits recorded in the re-scan window, to notice one that disappears */
  recent: { deposit_id: string; block_number: number; block_hash: string }[];
}

const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
/** eth_getLogs requests per pass: a watcher far behind catches up over several passes, never blocking stop(). */
const CHUNKS_PER_PASS = 20;
const RPC_TIMEOUT_MS = 15_000;
const REORG_REPORTS_KEPT = 20;

export class EvmWatcher extends PollingWatcher {
  readonly #cfg: EvmWatcherConfig;
  readonly #client: PublicClient;
  /** how deposits write an address and a transaction id: TRON's own forms on the TRON rail */
  readonly #addr: (hex: string) => string;
  readonly #tx: (hash: string) => string;
  #reorgsLoaded = false;

  constructor(ctx: CoreContext, cfg: EvmWatcherConfig, log: WatchLog) {
    super(ctx, cfg, log, {
      rail: cfg.rail, family: cfg.family, state: 'starting', finality: cfg.finality, confirmations: cfg.confirmations,
      chain: null, cursor: null, head: null, tip: null, lag_blocks: null, last_pass_at: null, last_error: null,
      last_error_at: null, errors_in_a_row: 0, credited: 0, unmatched: 0, reorged_after_credit: [],
    });
    this.#cfg = cfg;
    const tron = cfg.family === 'tron';
    this.#addr = tron ? (a) => hexToTron(a) : (a) => a.toLowerCase();
    this.#tx = tron ? (h) => h.toLowerCase().replace(/^0x/, '') : (h) => h.toLowerCase();
    this.#client = createPublicClient({
      transport: http(cfg.rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 0, batch: false }),
      cacheTime: 0,
    });
  }

  status(): WatcherStatus {
    return { ...this.state, reorged_after_credit: [...this.state.reorged_after_credit] };
  }

  protected async pass(): Promise<boolean> {
    const c = this.#client, cfg = this.#cfg;
    // the reorgs reported before a restart are listed again (the deposits carry them)
    if (!this.#reorgsLoaded) {
      const known = (await listReorged(this.ctx, cfg.rail)).map((d) => d.deposit_id);
      this.state.reorged_after_credit = known.slice(-REORG_REPORTS_KEPT);
      this.#reorgsLoaded = true;
    }
    const chain = await c.getChainId();
    const tip = Number(await c.getBlockNumber({ cacheTime: 0 }));
    const tagged = cfg.finality === 'latest' ? tip : Number((await c.getBlock({ blockTag: cfg.finality })).number);
    const head = tagged - cfg.confirmations;
    const cur = await this.#rescanned(await this.#cursor(chain, head));
    const s = this.state;
    Object.assign(s, { chain, tip, head });
    // blocks were scanned up to next_block - 1 (not merely a FROM_BLOCK ahead of a head still coming)
    if (cur.next_block > cur.first_block && head < cur.next_block - 1) throw new RpcBehind(head, cur.next_block - 1);
    const start = Math.max(cur.first_block, cur.next_block - cfg.reorgWindow);
    const seen = new Map<string, string>();
    let from = start, chunks = 0;
    while (from <= head && chunks < CHUNKS_PER_PASS && !this.stopped) {
      const to = Math.min(head, from + cfg.maxRange - 1);
      for (const d of await this.#deposits(from, to, tip)) {
        // an x402 settlement to the same wallet is its payment's money (x402/desk.ts), no invoice's
        if (await this.ctx.store.get('x402_txs', txKey(d.tx_id))) continue;
        const { deposit, fresh } = await recordDeposit(this.ctx, d);
        seen.set(deposit.deposit_id, d.block_hash);
        if (!cur.recent.some((r) => r.deposit_id === deposit.deposit_id)) {
          cur.recent.push({ deposit_id: deposit.deposit_id, block_number: d.block_number, block_hash: d.block_hash });
        }
        if (fresh) this.#recorded(deposit);
      }
      cur.next_block = Math.max(cur.next_block, to + 1);
      await this.#save(cur);
      from = to + 1;
      chunks++;
    }
    const scannedTo = from - 1;
    if (scannedTo >= start) await this.#checkReorgs(cur, start, scannedTo, seen);
    s.cursor = cur.next_block - 1;
    s.lag_blocks = Math.max(0, tip - s.cursor);
    if (from > head) await this.#scanPending(head, tip);
    return from <= head;
  }

  /** The stored cursor, or a new one at FROM_BLOCK (default: just after the trusted head). */
  async #cursor(chain: number, head: number): Promise<Cursor> {
    const stored = await this.ctx.store.get<Cursor>('watcher_cursors', this.#cfg.rail);
    if (stored) {
      if (stored.chain !== chain) {
        throw new Error(`the RPC serves chain ${chain} but this rail's cursor is for chain ${stored.chain}`);
      }
      return structuredClone(stored);
    }
    const first = this.#cfg.fromBlock ?? Math.max(0, head + 1);
    const cur: Cursor = { next_block: first, first_block: first, chain, recent: [] };
    await this.#save(cur);
    this.log.info({ rail: this.#cfg.rail, chain, from_block: first }, 'watcher cursor created');
    return cur;
  }

  async #save(cur: Cursor, also: Op[] = []): Promise<void> {
    const floor = cur.next_block - this.#cfg.reorgWindow;
    cur.recent = cur.recent.filter((r) => r.block_number >= floor);
    const record = put('watcher_cursors', this.#cfg.rail, cur);
    await this.ctx.store.write([record, ...also]);
  }

  /** An operator's RESCAN: the cursor moved back to its block. */
  #rescanned(cur: Cursor): Promise<Cursor> {
    return this.rescanned(cur, (from) => ({
      ...cur, next_block: Math.min(cur.next_block, from), first_block: Math.min(cur.first_block, from),
    }), (next, also) => this.#save(next, also));
  }

  /** Transfers to the rail address in [from, to], each checked against its block's canonical hash. */
  async #deposits(from: number, to: number, tip: number): Promise<Deposit[]> {
    const logs = await this.#client.getLogs({
      address: this.#cfg.token as `0x${string}`, event: TRANSFER, args: { to: this.#cfg.address as `0x${string}` },
      fromBlock: BigInt(from), toBlock: BigInt(to), strict: true,
    });
    const live = logs.filter((l) => !l.removed).sort((a, b) =>
      Number(a.blockNumber - b.blockNumber) || a.logIndex - b.logIndex);
    const times = new Map<bigint, string>();
    const out: Deposit[] = [];
    for (const l of live) {
      if (!times.has(l.blockNumber)) {
        // the node may answer getLogs from a view a reorg already replaced: the block must agree
        const b = await this.#client.getBlock({ blockNumber: l.blockNumber });
        if (b.hash !== l.blockHash) throw new Error(`block ${l.blockNumber} changed while reading it (reorg)`);
        times.set(l.blockNumber, new Date(Number(b.timestamp) * 1000).toISOString());
      }
      out.push({
        rail: this.#cfg.rail, tx_id: this.#tx(l.transactionHash), log_index: l.logIndex,
        amount: l.args.value.toString(), from: this.#addr(l.args.from), to: this.#addr(l.args.to),
        block_number: Number(l.blockNumber), block_hash: l.blockHash.toLowerCase(),
        block_time: times.get(l.blockNumber)!, confirmations: tip - Number(l.blockNumber) + 1,
      });
    }
    return out;
  }

  #recorded(d: { deposit_id: string; state: string; invoice_id?: string; amount: string; tx_id: string }): void {
    const fields = { rail: this.#cfg.rail, deposit_id: d.deposit_id, tx_id: d.tx_id, amount: d.amount };
    if (d.state === 'credited') {
      this.state.credited++;
      this.log.info({ ...fields, invoice_id: d.invoice_id }, 'deposit credited its invoice');
    } else {
      this.state.unmatched++;
      this.log.warn(fields, 'deposit matched no open invoice: in the unmatched queue (svc-admin unmatched)');
    }
  }

  /** A recorded deposit in the re-read range that the chain no longer has: reported, never reversed. */
  async #checkReorgs(cur: Cursor, from: number, to: number, seen: Map<string, string>): Promise<void> {
    const kept: Cursor['recent'] = [];
    for (const r of cur.recent) {
      if (r.block_number < from || r.block_number > to) { kept.push(r); continue; }
      const hash = seen.get(r.deposit_id);
      if (hash) { kept.push({ ...r, block_hash: hash }); continue; }
      const dep = await markReorged(this.ctx, r.deposit_id);
      const list = this.state.reorged_after_credit;
      list.push(r.deposit_id);
      if (list.length > REORG_REPORTS_KEPT) list.shift();
      this.log.error({
        rail: this.#cfg.rail, deposit_id: r.deposit_id, block_number: r.block_number, state: dep?.state,
        invoice_id: dep?.invoice_id,
      }, 'a recorded deposit was reorged out: its credit stands; check it (docs/settlement.md)');
    }
    if (kept.length !== cur.recent.length) {
      cur.recent = kept;
      await this.#save(cur);
    }
  }

  /** Transfers above the trusted head that pay an open invoice: INVOICE_STATUS shows them while they wait. */
  async #scanPending(head: number, tip: number): Promise<void> {
    const pending = new Map<string, PendingPayment>();
    if (tip > head && tip - head <= this.#cfg.maxRange) {
      const logs = await this.#client.getLogs({
        address: this.#cfg.token as `0x${string}`, event: TRANSFER, args: { to: this.#cfg.address as `0x${string}` },
        fromBlock: BigInt(Math.max(0, head + 1)), toBlock: BigInt(tip), strict: true,
      });
      for (const l of logs) {
        if (l.removed) continue;
        const inv = await invoiceHoldingAmount(this.ctx, this.#cfg.rail, l.args.value.toString());
        if (!inv || inv.state !== 'pending') continue;
        pending.set(inv.invoice_id, {
          tx_id: this.#tx(l.transactionHash), log_index: l.logIndex, block_number: Number(l.blockNumber),
          confirmations: tip - Number(l.blockNumber) + 1,
          finality: `${this.#cfg.finality}${this.#cfg.confirmations ? ` + ${this.#cfg.confirmations} blocks` : ''}`,
        });
      }
    }
    this.pending = pending;
  }
}
