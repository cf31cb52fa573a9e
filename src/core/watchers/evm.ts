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
import { put } from '../../store/store.ts';
import type { EvmWatcherConfig, WatcherConfig } from '../config.ts';
import type { CoreContext } from '../context.ts';
import { markReorged, recordDeposit, type Deposit } from '../deposits.ts';
import { invoiceHoldingAmount } from '../invoices.ts';
import { leaseFor, type Lease } from '../leases.ts';
import { hexToTron } from './tron-address.ts';

export interface WatchLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A payment seen above the trusted head: shown on INVOICE_STATUS while it waits for finality. */
export interface PendingPayment {
  tx_id: string;
  log_index: number;
  block_number: number;
  confirmations: number;
  /** what it waits for: `finality` tag and blocks on top of it */
  finality: string;
}

/** What /api/v1/status shows of one watcher: public facts only (never the RPC URL). */
export interface WatcherStatus {
  rail: string;
  family: WatcherConfig['family'];
  /** standby: another node of a shared store watches this rail (it holds the rail's watcher lease) */
  state: 'starting' | 'ok' | 'error' | 'stopped' | 'standby';
  finality: string;
  confirmations: number;
  /** EVM, TRON: the node's chain id; Solana: the cluster's genesis hash */
  chain: number | string | null;
  /** the last block (Solana: slot) scanned and recorded */
  cursor: number | null;
  /** the trusted head: the finality tag's block less `confirmations` */
  head: number | null;
  /** the node's latest block */
  tip: number | null;
  lag_blocks: number | null;
  last_pass_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  errors_in_a_row: number;
  credited: number;
  unmatched: number;
  /** deposits whose block was replaced after they were recorded: the operator looks at them */
  reorged_after_credit: string[];
  /** Solana: each watched token account and the newest signature read from it */
  accounts?: { address: string; last_signature: string | null }[];
}

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

/**
 * A rail's watcher lease (shared store): held a while past a few polls, so a long pass keeps it, and a
 * stopped node's rail is taken over by another node within it.
 */
export const watcherLeaseMs = (pollMs: number): number => Math.max(30_000, 3 * pollMs);

/** A message safe to publish: no URL (an RPC URL may carry a provider key), one line, bounded. */
export function publicError(e: unknown, rpcUrl: string): string {
  const err = e as { shortMessage?: unknown; message?: unknown } | null;
  const raw = typeof err?.shortMessage === 'string' ? err.shortMessage : String(err?.message ?? e);
  return raw.split(rpcUrl).join('<rpc>').replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>')
    .replace(/\s+/g, ' ').trim().slice(0, 300);
}

export class EvmWatcher {
  readonly #ctx: CoreContext;
  readonly #cfg: EvmWatcherConfig;
  readonly #log: WatchLog;
  readonly #client: PublicClient;
  /** how deposits write an address and a transaction id: TRON's own forms on the TRON rail */
  readonly #addr: (hex: string) => string;
  readonly #tx: (hash: string) => string;
  readonly #status: WatcherStatus;
  #pending = new Map<string, PendingPayment>();
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #stopped = false;
  /** one watcher per rail across the nodes of a shared store (always held on a store one process owns) */
  readonly #lease: Lease;

  constructor(ctx: CoreContext, cfg: EvmWatcherConfig, log: WatchLog) {
    this.#ctx = ctx;
    this.#cfg = cfg;
    this.#log = log;
    this.#lease = leaseFor(ctx, `watcher:${cfg.rail}`, watcherLeaseMs(cfg.pollMs));
    const tron = cfg.family === 'tron';
    this.#addr = tron ? (a) => hexToTron(a) : (a) => a.toLowerCase();
    this.#tx = tron ? (h) => h.toLowerCase().replace(/^0x/, '') : (h) => h.toLowerCase();
    this.#client = createPublicClient({
      transport: http(cfg.rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 0, batch: false }),
      cacheTime: 0,
    });
    this.#status = {
      rail: cfg.rail, family: cfg.family, state: 'starting', finality: cfg.finality, confirmations: cfg.confirmations,
      chain: null, cursor: null, head: null, tip: null, lag_blocks: null, last_pass_at: null, last_error: null,
      last_error_at: null, errors_in_a_row: 0, credited: 0, unmatched: 0, reorged_after_credit: [],
    };
  }

  get rail(): string { return this.#cfg.rail; }

  status(): WatcherStatus {
    return { ...this.#status, reorged_after_credit: [...this.#status.reorged_after_credit] };
  }

  pendingFor(invoiceId: string): PendingPayment | undefined {
    return this.#pending.get(invoiceId);
  }

  start(): void {
    this.#schedule(0);
  }

  /** Stops polling; waits for a pass in flight (bounded by the RPC timeout). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running;
    this.#status.state = 'stopped';
    await this.#lease.release().catch(() => {}); // another node takes the rail over at once
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#running = this.#tick().finally(() => { this.#running = null; });
    }, ms);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    let next = this.#cfg.pollMs;
    try {
      if (!(await this.#lease.hold())) {
        this.#status.state = 'standby';
      } else {
        const more = await this.#pass();
        this.#status.state = 'ok';
        this.#status.errors_in_a_row = 0;
        if (more) next = 0;
      }
    } catch (e) {
      const s = this.#status;
      s.state = 'error';
      s.errors_in_a_row++;
      s.last_error = publicError(e, this.#cfg.rpcUrl);
      s.last_error_at = this.#ctx.now().toISOString();
      // exponential backoff with jitter: a down or rate-limiting RPC is asked less and less often
      const cap = Math.min(this.#cfg.maxBackoffMs, this.#cfg.pollMs * 2 ** Math.min(s.errors_in_a_row, 20));
      next = Math.round(cap * (0.5 + Math.random() / 2));
      const fields = { rail: this.#cfg.rail, errors_in_a_row: s.errors_in_a_row, retry_in_ms: next };
      this.#log.warn({ ...fields, error: s.last_error }, 'watcher pass failed');
    }
    this.#schedule(next);
  }

  /** One pass: returns true when there is more to scan right away. */
  async #pass(): Promise<boolean> {
    const c = this.#client, cfg = this.#cfg;
    const chain = await c.getChainId();
    const tip = Number(await c.getBlockNumber({ cacheTime: 0 }));
    const tagged = cfg.finality === 'latest' ? tip : Number((await c.getBlock({ blockTag: cfg.finality })).number);
    const head = tagged - cfg.confirmations;
    const cur = await this.#cursor(chain, head);
    const s = this.#status;
    Object.assign(s, { chain, tip, head, last_pass_at: this.#ctx.now().toISOString() });
    const start = Math.max(cur.first_block, cur.next_block - cfg.reorgWindow);
    const seen = new Map<string, string>();
    let from = start, chunks = 0;
    while (from <= head && chunks < CHUNKS_PER_PASS && !this.#stopped) {
      const to = Math.min(head, from + cfg.maxRange - 1);
      for (const d of await this.#deposits(from, to, tip)) {
        const { deposit, fresh } = await recordDeposit(this.#ctx, d);
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
    const stored = (await this.#ctx.store.get('watcher_cursors', this.#cfg.rail)) as unknown as Cursor | undefined;
    if (stored) {
      if (stored.chain !== chain) {
        throw new Error(`the RPC serves chain ${chain} but this rail's cursor is for chain ${stored.chain}`);
      }
      return structuredClone(stored);
    }
    const first = this.#cfg.fromBlock ?? Math.max(0, head + 1);
    const cur: Cursor = { next_block: first, first_block: first, chain, recent: [] };
    await this.#save(cur);
    this.#log.info({ rail: this.#cfg.rail, chain, from_block: first }, 'watcher cursor created');
    return cur;
  }

  async #save(cur: Cursor): Promise<void> {
    const floor = cur.next_block - this.#cfg.reorgWindow;
    cur.recent = cur.recent.filter((r) => r.block_number >= floor);
    await this.#ctx.store.write([put('watcher_cursors', this.#cfg.rail, cur as unknown as Record<string, unknown>)]);
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
      this.#status.credited++;
      this.#log.info({ ...fields, invoice_id: d.invoice_id }, 'deposit credited its invoice');
    } else {
      this.#status.unmatched++;
      this.#log.warn(fields, 'deposit matched no open invoice: in the unmatched queue (svc-admin unmatched)');
    }
  }

  /** A recorded deposit in the re-read range that the chain no longer has: reported, never reversed. */
  async #checkReorgs(cur: Cursor, from: number, to: number, seen: Map<string, string>): Promise<void> {
    const kept: Cursor['recent'] = [];
    for (const r of cur.recent) {
      if (r.block_number < from || r.block_number > to) { kept.push(r); continue; }
      const hash = seen.get(r.deposit_id);
      if (hash) { kept.push({ ...r, block_hash: hash }); continue; }
      const dep = await markReorged(this.#ctx, r.deposit_id);
      const list = this.#status.reorged_after_credit;
      list.push(r.deposit_id);
      if (list.length > REORG_REPORTS_KEPT) list.shift();
      this.#log.error({
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
        const inv = await invoiceHoldingAmount(this.#ctx, this.#cfg.rail, l.args.value.toString());
        if (!inv || inv.state !== 'pending') continue;
        pending.set(inv.invoice_id, {
          tx_id: this.#tx(l.transactionHash), log_index: l.logIndex, block_number: Number(l.blockNumber),
          confirmations: tip - Number(l.blockNumber) + 1,
          finality: `${this.#cfg.finality}${this.#cfg.confirmations ? ` + ${this.#cfg.confirmations} blocks` : ''}`,
        });
      }
    }
    this.#pending = pending;
  }
}
