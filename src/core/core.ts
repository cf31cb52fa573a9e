// The core: opens the data dir (node keys, LevelDB, kernels, pulse chain), refuses to serve a
// broken ledger, and answers every svc/1 command through handle(). Authentication, argument
// validation and idempotency keys are applied here, once, for every listener.
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceError } from '../errors.ts';
import { Kernels, KernelPool } from '../kernels/index.ts';
import { selfCheck } from '../kernels/self-check.ts';
import {
  AUXILIARY, CAPABILITIES, COMMANDS, commandSpec, type CommandSpec, type RateClass,
} from '../protocol/registry.ts';
import { SERVICES, type ExecutionCommand } from '../protocol/services.ts';
import { PROTOCOL } from '../protocol/wire.ts';
import { CORE_VERSION as VERSION } from '../protocol/versions.ts';
import { create, delIf, isStoreConflict, openStore, put, replace, type Json, type Op } from '../store/store.ts';
import type { Config, Rail } from './config.ts';
import type { CoreContext } from './context.ts';
import { execute, isOffered, type ExecutionArgs } from './executions.ts';
import { audit, auditCsv } from './audit.ts';
import { MANIFEST_FILE, takeBackup } from './backup.ts';
import { canonicalDigest, canonicalJson } from '../protocol/canonical.ts';
import {
  fundAccount, indexSettlementReferences, invoiceView, listInvoices, loadInvoice, refreshInvoice, settleInvoice,
  takesPayments,
  type InvoiceRecord,
} from './invoices.ts';
import {
  claimDeposit, depositView, dismissDeposit, listReorged, listUnmatched, type DepositFilter, type Dismissal,
} from './deposits.ts';
import { indexRecordedTransfers } from './transfers.ts';
import { requestRescan } from './watchers/rescan.ts';
import { Ledger } from './ledger.ts';
import { authenticate, checkToken, getMachine, machineOps, newToken, rotateOps } from './machines.ts';
import { loadRecord, openToken, recordKey, recordOps, sealToken, type IdempotencyRecord } from './idempotency.ts';
import { RateLimiter, addressWindowKey, clientKey, type WindowGrant } from '../protocol/rate-limit.ts';
import { Sandbox } from './sandbox.ts';
import { NodeIdentity } from './node-identity.ts';
import { PRICE_BOOK, PRICE_VERSION, QUOTE_TERMS_VERSION, UNIT_SCALE, usdString } from '../protocol/pricing.ts';
import { PulseChain } from './pulse-chain.ts';
import { TransparencyLog } from './tlog.ts';
import { acceptQuote, createQuote, findQuote, quoteView, sweepExpired, type QuoteRecord } from './quotes.ts';
import { publishNodeKeys, signerKeys, verifyReceipt, type SignedReceipt } from './receipts.ts';
import { holderId, type Lease } from './leases.ts';
import { clearOwnStaleMarks, sweepLease, sweepRound } from './sweeps.ts';
import { rotateNodeKey } from './key-rotation.ts';
import { loadTlsMaterial, type TlsMaterial } from './tls-material.ts';
import { validateArgs } from '../protocol/validate.ts';
import { Watchers } from './watchers/watchers.ts';
import type { WatchLog } from './watchers/poll-loop.ts';
import { commandDone } from './core-metrics.ts';

/**
 * Where a request came in. `gateway`: the HTTP gateway in this process, which limited its caller's
 * address itself (the label also counts the free quotes a gateway worker makes itself, quote-desk.ts);
 * `backend`: a gateway in another process (svcd gateway, or a worker of SVC_GATEWAY_PROCESSES), whose
 * per-address windows are only its own share, so the core keeps the node-wide ones, as for the edge.
 */
export type Listener = 'edge' | 'backend' | 'gateway' | 'admin';
/** The ops that record an idempotent request's reply (the reply as the caller will see it). */
type Seal = (result: Record<string, unknown>) => Op[];
interface Idem { record: string; seal: Seal }
export interface Auth { machine_id?: string; token?: string }
/**
 * Shared store: how long a node's mark on an idempotency key it is running holds off the other nodes
 * (docs/scale-out.md). Past it (the node stopped mid-request) another node may take the key over; the
 * first node's reply then cannot be recorded (its batch compares the mark) and it answers busy.
 */
const RUNNING_LEASE_MS = 60_000;

/**
 * The data dir holds the ledger, the node keys and the admin socket: only the service's user may
 * enter it. A pre-existing dir with group/other access is tightened to 0700 when it is ours; one
 * that is not ours (or a shared sticky dir such as /tmp) is refused rather than changed.
 */
function secureDataDir(dir: string): void {
  const st = statSync(dir);
  if ((st.mode & 0o7077) === 0) return;
  const uid = process.getuid?.();
  if ((st.mode & 0o1000) !== 0 || (uid !== undefined && st.uid !== uid)) {
    const mode = (st.mode & 0o7777).toString(8);
    throw new Error(`data dir ${dir} (mode ${mode}) is shared or not owned by this user; use a private dir (0700)`);
  }
  chmodSync(dir, 0o700);
}

export class Core {
  readonly ctx: CoreContext;
  readonly tls: TlsMaterial;
  #sweeper: NodeJS.Timeout | null = null;
  /** shared store: one node sweeps at a time (null: this process owns its store and always sweeps) */
  readonly #sweepLease: Lease | null;
  #inProgress = new Set<string>();
  readonly #limits: RateLimiter;
  /** the anonymous sandbox's state: here, so every gateway process in front of this core shares it */
  readonly sandbox: Sandbox;
  #closed = false;
  #active = 0;
  #drained: (() => void) | null = null;
  #shutDown: Promise<void> | null = null;
  #watchers: Watchers | null = null;

  private constructor(ctx: CoreContext, tls: TlsMaterial) {
    this.ctx = ctx;
    this.tls = tls;
    this.#limits = new RateLimiter(ctx.config.rates);
    this.sandbox = new Sandbox({ maxPerClient: ctx.config.sandboxMaxPerClient, kernels: ctx.kernels });
    this.#sweepLease = sweepLease(ctx);
  }

  /**
   * Opens everything; throws (and svcd refuses to start) when the ledger invariant is broken.
   * `opts.clock` replaces the wall clock for every expiry, window and pulse time the core decides
   * (tests move it by hand instead of sleeping); svcd never passes one, and no command can set it.
   */
  static async open(config: Config, opts: { clock?: () => Date } = {}): Promise<Core> {
    const now = opts.clock ?? (() => new Date());
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    secureDataDir(config.dataDir);
    const identity = NodeIdentity.loadOrCreate(config.dataDir);
    const tls = await loadTlsMaterial({
      dataDir: config.dataDir,
      certFile: config.tlsCert,
      keyFile: config.tlsKey,
      hosts: [config.edgeHost],
    });
    const kernels = Kernels.create();
    const failed = selfCheck(kernels).filter((r) => !r.ok);
    if (failed.length) throw new Error(`kernel self-check failed: ${failed.map((f) => f.name).join(', ')}`);
    const store = await openStore(config.dataDir, config.store);
    // shared store: one process per node id (its pulse chain and logs have one writer); a second process
    // with this node key stops here, before it writes anything, instead of at its first pulse
    if (store.shared && !(await store.lockSession(`node:${identity.nodeId}`))) {
      await store.close();
      throw new Error(`another svcd process runs node ${identity.nodeId} on this database: each node needs a node `
        + 'key of its own (copy only quote-key.bin, result-key.bin and bct-key.bin between nodes, docs/scale-out.md)');
    }
    if (store.shared) await clearOwnStaleMarks(store, identity.nodeId, holderId(identity.nodeId));
    const ledger = new Ledger(store);
    const check = await ledger.verify();
    if (!check.ok) {
      await store.close();
      throw new Error(`ledger invariant broken, refusing to serve:\n  ${check.problems.join('\n  ')}`);
    }
    // one payment reference credits one invoice: transfers recorded and references settled before their
    // indexes existed join them
    await indexRecordedTransfers(store);
    await indexSettlementReferences(store);
    const pool = new KernelPool({ threads: config.kernelThreads });
    const chain = new PulseChain(store, identity, config.pulsePeriodMs, now);
    const logs = {
      timestamps: new TransparencyLog(store, kernels, identity, 'timestamps', `svc/${identity.nodeId}/timestamps`),
      events: new TransparencyLog(store, kernels, identity, 'machine-events', `svc/${identity.nodeId}/machine-events`),
    };
    const ctx: CoreContext = {
      store, ledger, identity, kernels, pool, chain, logs, config,
      edgeFingerprint: tls.fingerprint256,
      now,
    };
    await chain.start();
    // the other nodes of a shared store verify this node's receipts with the keys it publishes
    if (store.shared) await publishNodeKeys(store, identity, now());
    const core = new Core(ctx, tls);
    if (core.#sweepLease) await sweepRound(ctx, core.#sweepLease);
    else await sweepExpired(ctx);
    core.#startSweeper();
    return core;
  }

  #startSweeper(): void {
    this.#sweeper = setInterval(() => {
      sweepRound(this.ctx, this.#sweepLease).catch(() => { /* next tick retries */ });
    }, this.ctx.config.sweepIntervalMs);
    this.#sweeper.unref();
  }

  /**
   * Shared store: marks the idempotency key `k` running on this node (a create), or takes over a mark whose
   * node's lease ended; another node's live mark is idempotency_in_progress, as a key running here is.
   */
  async #markRunning(k: string, nowMs: number): Promise<Json> {
    const store = this.ctx.store;
    const mine = { holder: holderId(this.ctx.identity.nodeId), expires_ms: nowMs + RUNNING_LEASE_MS };
    let cur: Json | undefined;
    for (let run = 1; run <= 2; run++) {
      try {
        const op = cur ? replace('idempotency_running', k, mine, cur) : create('idempotency_running', k, mine);
        await store.write([op]);
        return mine;
      } catch (e) {
        if (!isStoreConflict(e)) throw e;
      }
      cur = await store.get('idempotency_running', k);
      if (cur && (cur.expires_ms as number) > nowMs) break;
    }
    throw new ServiceError('idempotency_in_progress', 'a request with this idempotency_key is still running');
  }

  /**
   * Answers one command. `client` is the caller's network address as the listener saw it (the gateway
   * passes the HTTP client's). `args` is the caller's to give away: defaults are applied to it in
   * place. `validated`: the in-process gateway checked it against the same registry schema already.
   * Throws ServiceError (or anything else, which surfaces as internal).
   */
  async handle(
    cmd: string, args: Record<string, unknown>, auth: Auth | undefined, listener: Listener, client?: string,
    validated = false,
  ): Promise<Record<string, unknown>> {
    const t0 = performance.now();
    if (this.#closed) {
      commandDone(cmd, listener, 'shutting_down', t0);
      throw new ServiceError('shutting_down', 'the core is shutting down and did not run the request; '
        + 'send it again (another node, or later)');
    }
    this.#active++;
    try {
      const result = await this.#handle(cmd, args, auth, listener, client, validated);
      commandDone(cmd, listener, 'ok', t0);
      return result;
    } catch (e) {
      commandDone(cmd, listener, e, t0);
      throw e;
    } finally {
      this.#active--;
      if (this.#active === 0 && this.#drained) this.#drained();
    }
  }

  /**
   * Counts requests of `klass` from `client` ahead in the node's per-address window, the one a call
   * that came in on the backend listener for that client is counted in: for the gateway workers of
   * `svcd start`, which answer free quotes themselves (quote-desk.ts) and admit what they were granted
   * (gateway/node-windows.ts, RateLimiter.grant).
   */
  grantWindow(klass: RateClass, client: string, share: number, max: number): WindowGrant {
    return this.#limits.grant(klass, addressWindowKey(client), share, max, this.ctx.now().getTime());
  }

  /** Uncounts requests granted and never admitted (a worker gave them back on a recall). */
  giveBackWindow(klass: RateClass, client: string, start: number, n: number): void {
    this.#limits.giveBack(klass, addressWindowKey(client), start, n);
  }

  // Order matters : address limits before anything is parsed, authentication before
  // anything is keyed on a caller's identity, and the machine's own limits only after its token checked.
  async #handle(
    cmd: string, args: Record<string, unknown>, auth: Auth | undefined, listener: Listener,
    client: string | undefined, validated: boolean,
  ): Promise<Record<string, unknown>> {
    const spec = commandSpec(cmd);
    if (!spec) throw new ServiceError('unknown_command', `unknown command ${cmd}`);
    if (spec.auth === 'admin' && listener !== 'admin') {
      throw new ServiceError('forbidden', `${cmd} is only available on the admin socket`);
    }
    if (spec.access === 'gateway' && listener !== 'backend' && listener !== 'gateway') {
      throw new ServiceError('forbidden', `${cmd} is the HTTP gateway's own call (use the /api/v1/sandbox routes)`);
    }
    const needsAuth = spec.auth === 'machine_context' || spec.auth === 'required';
    // edge and remote gateways' callers are limited here by address (a remote gateway's own calls,
    // which name no client, are nobody's); the in-process gateway limits its HTTP callers itself
    const counted = listener === 'edge' || (listener === 'backend' && client !== undefined);
    const address = counted ? addressWindowKey(client) : null;
    const nowMs = this.ctx.now().getTime();
    if (address && !needsAuth) this.#limits.check(spec.rateClass, address, 'per address', nowMs);
    if (address && needsAuth) this.#limits.assertOpen(spec.rateClass, address, 'per address', nowMs);
    if (!validated) validateArgs(spec, args);
    const idemKey = args.idempotency_key as string | undefined;
    if (needsAuth) {
      const machineId = args.machine_id as string;
      if (auth?.machine_id !== undefined && auth.machine_id !== machineId) {
        throw new ServiceError('unauthorized', 'auth.machine_id differs from args.machine_id');
      }
      const claimed = await getMachine(this.ctx.store, machineId);
      // FUND_ACCOUNT for an unclaimed machine is the one call that needs no token: it claims it (the
      // claim itself is decided again under the machine lock)
      if (claimed || spec.name !== 'FUND_ACCOUNT') {
        if (claimed && !auth?.token && idemKey !== undefined && spec.name === 'FUND_ACCOUNT') {
          const replay = await this.#claimReplay(spec, args, idemKey);
          if (replay) return replay;
        }
        try {
          const rec = checkToken(claimed, auth?.token);
          if (rec.replay_record) await this.#tokenFirstUsed(machineId);
        } catch (e) {
          if (address) this.#limits.check(spec.rateClass, address, 'per address', nowMs);
          throw e;
        }
        if (listener !== 'admin') this.#limits.check(spec.rateClass, `m:${machineId}`, 'per machine', nowMs);
      } else if (address) {
        this.#limits.check(spec.rateClass, address, 'per address', nowMs);
      }
    }
    const scope = needsAuth
      ? `m:${args.machine_id as string}`
      : `a:${clientKey(client)}|m:${String(args.machine_id)}`;
    if (idemKey === undefined) return this.#dispatch(spec, args, auth, client);
    return this.#idempotent(spec, args, idemKey, scope, auth, client);
  }

  async #idempotent(
    spec: CommandSpec, args: Record<string, unknown>, idemKey: string, scope: string, auth: Auth | undefined,
    client?: string,
  ): Promise<Record<string, unknown>> {
    const { idempotency_key: _k, ...body } = args;
    const k = recordKey(scope, spec.name, idemKey);
    const digest = canonicalDigest({ cmd: spec.name, body });
    // claim the key before the first await: two concurrent requests with one key cannot both run
    if (this.#inProgress.has(k)) {
      throw new ServiceError('idempotency_in_progress', 'a request with this idempotency_key is still running');
    }
    this.#inProgress.add(k);
    // shared store: this node's mark on the key in the database, for the other nodes; deleted by the
    // batch that records the reply, or else when the request ends
    let running: Json | null = null;
    let cleared = false;
    try {
      const nowMs = this.ctx.now().getTime();
      if (this.ctx.store.shared) running = await this.#markRunning(k, nowMs);
      const prior = await loadRecord(this.ctx.store, k, nowMs);
      if (prior) {
        if (prior.digest !== digest) {
          throw new ServiceError('idempotency_key_reused', 'idempotency_key was used with a different request');
        }
        return { ...(await this.#currentView(spec, prior.result)), idempotent_replayed: true };
      }
      const expires = nowMs + this.ctx.config.idempotencyTtlMs;
      let sealed = false;
      // the record of the reply, for the command to write in the batch of its own effects (a crash
      // cannot leave one without the other); a token is kept only sealed under the key, until first used
      const seal: Seal = (result) => {
        sealed = true;
        const { machine_token: token, ...stored } = result;
        const rec: IdempotencyRecord = {
          digest,
          command: spec.name,
          result: stored,
          at_ms: nowMs,
          expires_ms: expires,
        };
        if (typeof token === 'string') rec.sealed_token = sealToken(token, idemKey, k);
        const ops = recordOps(k, rec);
        // compared: if another node took the key over (this node's lease ended), this reply is not recorded
        if (running) ops.push(delIf('idempotency_running', k, running));
        return ops;
      };
      // a claim also names this record in the machine record it writes
      const result = await this.#dispatch(spec, args, auth, client, { record: k, seal });
      // commands without effects of their own to batch with (QUOTE) write the record alone; a QUOTE's
      // may be lost in a crash like the quote itself (a retry then gets a new quote)
      if (!sealed) await this.ctx.store.write(seal(result), { sync: spec.name !== 'QUOTE' });
      cleared = true;
      return result;
    } finally {
      this.#inProgress.delete(k);
      if (running && !cleared) {
        // a replay, or a request that failed: nothing recorded the reply, so the mark goes alone (if it
        // cannot, it expires)
        await this.ctx.store.write([delIf('idempotency_running', k, running)]).catch(() => {});
      }
    }
  }

  /**
   * A claiming FUND_ACCOUNT whose reply was lost: the same key and body, before the token was first
   * used, get the same reply with the same token. Anything else: null (the caller then needs its token).
   */
  async #claimReplay(
    spec: CommandSpec, args: Record<string, unknown>, idemKey: string,
  ): Promise<Record<string, unknown> | null> {
    const { idempotency_key: _k, ...body } = args;
    const k = recordKey(`m:${args.machine_id as string}`, spec.name, idemKey);
    const prior = await loadRecord(this.ctx.store, k, this.ctx.now().getTime());
    if (!prior?.sealed_token || prior.digest !== canonicalDigest({ cmd: spec.name, body })) return null;
    const token = openToken(prior.sealed_token, idemKey, k);
    if (!token) return null;
    // a rotated token is not handed out again
    try { await authenticate(this.ctx.store, args.machine_id as string, token); } catch { return null; }
    const view = await this.#currentView(spec, prior.result);
    return { ...view, machine_token: token, idempotent_replayed: true };
  }

  /** The first use of a token ends its replay: the sealed copy is erased. */
  async #tokenFirstUsed(machineId: string): Promise<void> {
    await this.ctx.ledger.withMachine(machineId, async () => {
      const cur = await getMachine(this.ctx.store, machineId);
      if (!cur?.replay_record) return;
      const { replay_record: k, ...rest } = cur;
      const ops = machineOps(machineId, rest, cur);
      const r = (await this.ctx.store.get('idempotency', k)) as unknown as IdempotencyRecord | undefined;
      if (r?.sealed_token) {
        const { sealed_token: _s, ...kept } = r;
        ops.push(put('idempotency', k, kept as unknown as Record<string, unknown>));
      }
      await this.ctx.store.write(ops);
    });
  }

  /** A replay shows the stored reply with the present state of what it names. */
  async #currentView(spec: CommandSpec, stored: Record<string, unknown>): Promise<Record<string, unknown>> {
    const quoteId = stored.quote_id, machineId = stored.machine_id;
    if ((spec.name === 'QUOTE' || spec.name === 'ACCEPT_QUOTE') && typeof quoteId === 'string'
      && typeof machineId === 'string') {
      const found = await findQuote(this.ctx, quoteId, machineId).catch(() => null);
      if (found) return { ...stored, ...quoteView(found.q) };
    }
    if (spec.name === 'FUND_ACCOUNT' && typeof stored.invoice_id === 'string') {
      const inv = (await this.ctx.store.get('invoices', stored.invoice_id)) as unknown as
        InvoiceRecord | undefined;
      if (inv) return { ...stored, ...invoiceView(await refreshInvoice(this.ctx, inv)) };
    }
    return stored;
  }

  /** `idem`: an idempotent request's record key and the ops that record its reply (see #idempotent). */
  async #dispatch(
    spec: CommandSpec, a: Record<string, unknown>, auth: Auth | undefined, client?: string, idem?: Idem,
  ): Promise<Record<string, unknown>> {
    const ctx = this.ctx;
    switch (spec.name) {
      case 'SANDBOX_QUOTE': {
        const q = a as { machine_id: string; bits: number; max_output: number };
        return this.sandbox.quote(q, clientKey(client), ctx.now().getTime());
      }
      case 'SANDBOX_ACCEPT':
        return this.sandbox.accept(a.quote_id as string, a.machine_id as string, ctx.now().getTime());
      case 'SANDBOX_EXECUTE': {
        const [q, m] = [a.quote_id as string, a.machine_id as string];
        return this.sandbox.execute(q, m, clientKey(client), ctx.now().getTime());
      }
      case 'SANDBOX_VERIFY':
        return this.sandbox.verify(a.receipt_id as string, a.machine_id as string, ctx.now().getTime());
      case 'HELLO': return this.#hello(a.nonce as string | undefined);
      case 'CAPS': return this.caps();
      case 'HEALTH': return this.health();
      case 'PAYMENT_INFO':
        return {
          rails: ctx.config.rails.map((r) => ({
            ...r, takes_payments: takesPayments(ctx, r),
            // a watcher credits payments on its own; else the operator settles them by hand
            settled_by: ctx.config.watchers.some((w) => w.rail === r.rail) ? 'watcher' : 'operator',
          })),
          payments: ctx.config.payments ?? 'live',
          settlement: 'crypto only',
          reference_value_usd_per_svcC: '1.00',
        };
      case 'PULSE': {
        const p = a.index === undefined ? ctx.chain.latest : await ctx.chain.get(a.index as number);
        if (!p) throw new ServiceError('not_found', `no pulse ${String(a.index)}`);
        // the key that signed this pulse (a pulse from before a key rotation names the retired key)
        return {
          ...p, public_key: ctx.identity.signingKey(p.pulse.key_id)?.public_key ?? ctx.identity.signer().publicKey,
          node_keys: ctx.identity.publishedKeys(),
        };
      }
      case 'BALANCE': {
        const acct = await ctx.ledger.account(a.machine_id as string);
        return {
          machine_id: a.machine_id,
          available_units: acct.available.toString(),
          reserved_units: acct.reserved.toString(),
          unit_scale: Number(UNIT_SCALE),
          available_svcC: usdString(acct.available),
          reserved_svcC: usdString(acct.reserved),
        };
      }
      case 'QUOTE': return quoteView(await createQuote(ctx, a));
      case 'ACCEPT_QUOTE': {
        const seal = idem && ((q: QuoteRecord) => idem.seal(quoteView(q)));
        return quoteView(await acceptQuote(ctx, a.quote_id as string, a.machine_id as string, seal));
      }
      case 'FUND_ACCOUNT': {
        // the claim-or-authenticate decision is fundAccount's, under the machine lock
        const args = a as { machine_id: string; units: number; network: string; asset: string };
        const view = (r: { invoice: InvoiceRecord; machine_token?: string }) => (r.machine_token
          ? { ...invoiceView(r.invoice), machine_token: r.machine_token }
          : invoiceView(r.invoice));
        return view(await fundAccount(ctx, args, auth?.token, idem && {
          record: idem.record,
          seal: (r) => idem.seal(view(r)),
        }, client === undefined ? undefined : clientKey(client)));
      }
      case 'INVOICE_STATUS': {
        const inv = await loadInvoice(ctx, a.invoice_id as string);
        if (inv.machine_id !== a.machine_id) {
          throw new ServiceError('not_found', `no invoice ${a.invoice_id as string} for this machine`);
        }
        const cur = await refreshInvoice(ctx, inv);
        const seen = cur.state === 'pending' ? this.#watchers?.pendingFor(cur.rail, cur.invoice_id) : undefined;
        return { ...invoiceView(cur), ...(seen ? { payment_seen: seen } : {}) };
      }
      case 'SETTLE_INVOICE':
        return invoiceView(await settleInvoice(ctx, a.invoice_id as string, a.reference as string));
      case 'CREDIT_LATE_PAYMENT':
        return invoiceView(await settleInvoice(ctx, a.invoice_id as string, a.reference as string, 'late'));
      case 'UNMATCHED': {
        const { deposits, more } = await listUnmatched(ctx, a as unknown as DepositFilter);
        return { deposits: deposits.map(depositView), more };
      }
      case 'RESCAN':
        return requestRescan(ctx, a.rail as Rail['rail'], a.from_block as number);
      case 'REORGS':
        return { deposits: (await listReorged(ctx, a.rail as Rail['rail'] | undefined)).map(depositView) };
      case 'DISMISS': {
        const d = a as { deposit_id: string; outcome: Dismissal['outcome']; note: string; refund_reference?: string };
        const { deposit_id, ...dismissal } = d;
        return { deposit: depositView(await dismissDeposit(ctx, deposit_id, dismissal)) };
      }
      case 'CLAIM': {
        const r = await claimDeposit(ctx, a.deposit_id as string, a.invoice_id as string);
        return { deposit: depositView(r.deposit), invoice: invoiceView(r.invoice) };
      }
      case 'GET_RECEIPT':
      case 'VERIFY_RECEIPT': {
        const r = (await ctx.store.get('receipts', a.receipt_id as string)) as unknown as SignedReceipt | undefined;
        if (!r || r.receipt.machine_id !== a.machine_id) {
          throw new ServiceError('not_found', `no receipt ${a.receipt_id as string} for this machine`);
        }
        // signed here or by another node of a shared store (its published keys)
        const v = verifyReceipt(await signerKeys(ctx.store, ctx.identity, r.receipt.node_id), r);
        // the key the receipt names, with its window: after a key rotation, not the current one (a key
        // the set does not hold: the current one, and valid false with unknown_key)
        const key = v.key;
        return {
          receipt_id: r.receipt.receipt_id, receipt: r.receipt, signature: r.signature, alg: 'Ed25519',
          public_key: key?.public_key ?? ctx.identity.signer().publicKey, key_id: key?.key_id ?? ctx.identity.keyId,
          valid: v.valid,
          ...(key ? { key_valid_from: key.valid_from, key_valid_until: key.valid_until } : {}),
          ...(v.reason ? { reason: v.reason } : {}),
          signed_bytes: 'RFC 8785 canonical JSON of `receipt` (UTF-8); signature is base64url Ed25519 over those bytes',
        };
      }
      case 'RECOVER_RUNTIME': return this.#recover();
      case 'ROTATE_NODE_KEY': return rotateNodeKey(ctx);
      case 'LIST_INVOICES': return listInvoices(ctx, a);
      case 'AUDIT': {
        const report = await audit(ctx.store, ctx.identity, ctx.now());
        return { ...report, ...(a.csv === true ? { csv: auditCsv(report) } : {}) };
      }
      case 'BACKUP': {
        const dir = a.dir as string;
        const m = await takeBackup(ctx.store, ctx.config.dataDir, dir, ctx.identity, ctx.now());
        const manifest_sha256 = createHash('sha256').update(readFileSync(join(dir, MANIFEST_FILE))).digest('hex');
        return { dir, manifest_sha256, ...m };
      }
      case 'ROTATE_TOKEN': {
        const m = a.machine_id as string;
        return ctx.ledger.withMachine(m, async () => {
          const rec = await getMachine(ctx.store, m);
          if (!rec) throw new ServiceError('not_found', `machine ${m} is not claimed`);
          const token = newToken();
          await ctx.store.write(rotateOps(m, rec, token, ctx.now()));
          return { machine_id: m, machine_token: token, rotated_at: ctx.now().toISOString() };
        });
      }
      default:
        if (spec.execution) return execute(ctx, spec.name as ExecutionCommand, a as unknown as ExecutionArgs);
        throw new ServiceError('internal', `no handler for ${spec.name}`);
    }
  }

  #hello(nonce: string | undefined): Record<string, unknown> {
    const id = this.ctx.identity;
    const statement = {
      type: 'svc/edge-proof/v1', protocol: PROTOCOL, node_id: id.nodeId, key_id: id.keyId,
      edge_cert_sha256: this.tls.fingerprint256, nonce: nonce ?? null, time: this.ctx.now().toISOString(),
    };
    const signature = id.sign(Buffer.from(canonicalJson(statement), 'utf8')).toString('base64url');
    return {
      protocol: PROTOCOL, version: VERSION, node_id: id.nodeId, time: statement.time,
      edge_proof: {
        alg: 'Ed25519',
        key_id: id.keyId,
        public_key: id.public.public_key,
        statement,
        signature,
        signed_bytes: 'RFC 8785 canonical JSON of statement',
      },
      pulse: { chain_id: this.ctx.chain.chainId, latest_index: this.ctx.chain.latest?.pulse.index ?? null },
      node_keys: id.publishedKeys(),
    };
  }

  caps(): Record<string, unknown> {
    return {
      protocol: PROTOCOL, version: VERSION, capability_count: CAPABILITIES.length, capabilities: CAPABILITIES,
      commands: COMMANDS.map((c) => ({
        name: c.name, group: c.group, access: c.access, http: c.http, cli: c.cli, billing: c.billing, auth: c.auth,
        rate_class: c.rateClass, execution: c.execution, purpose: c.purpose,
        ...(c.execution ? { offered: isOffered(c.name) } : {}),
      })),
      auxiliary: AUXILIARY.filter((c) => c.access !== 'admin' && c.access !== 'gateway').map((c) => c.name),
      services: SERVICES.map((s) => ({
        service: s.service, command: s.command, quote_billing: s.quoteBilling, offered: isOffered(s.command),
      })),
      price_book: PRICE_BOOK, price_version: PRICE_VERSION, quote_terms_version: QUOTE_TERMS_VERSION,
    };
  }

  async health(): Promise<Record<string, unknown>> {
    return {
      status: this.#closed ? 'stopping' : 'ok', version: VERSION, node_id: this.ctx.identity.nodeId,
      pool: { threads: this.ctx.pool.threads, in_flight: this.ctx.pool.inFlight },
      pulse: { chain_id: this.ctx.chain.chainId, latest_index: this.ctx.chain.latest?.pulse.index ?? null },
      ...(this.#watchers?.size ? { watchers: this.#watchers.status() } : {}),
    };
  }

  /** Starts a chain watcher per configured rail (docs/settlement.md); svcd calls it once its listeners are up. */
  startWatchers(log: WatchLog): void {
    if (!this.#watchers && !this.#closed) this.#watchers = Watchers.start(this.ctx, log);
  }

  async #recover(): Promise<Record<string, unknown>> {
    const old = this.ctx.pool;
    this.ctx.pool = new KernelPool({ threads: this.ctx.config.kernelThreads });
    await old.close();
    const released = await sweepExpired(this.ctx);
    // the same check as AUDIT, from one snapshot (the ledger part is its `ledger`)
    const report = await audit(this.ctx.store, this.ctx.identity, this.ctx.now());
    return {
      pool_restarted: true, threads: this.ctx.pool.threads, released_quotes: released, ledger: report.ledger,
      audit: { clean: report.clean, discrepancies: report.discrepancies },
    };
  }

  /** Refuses new requests and waits (up to timeoutMs) for the ones in flight to finish. */
  async drain(timeoutMs = 10_000): Promise<void> {
    this.#closed = true;
    if (this.#active === 0) return;
    await Promise.race([
      new Promise<void>((r) => { this.#drained = r; }),
      new Promise<void>((r) => setTimeout(r, timeoutMs).unref()),
    ]);
  }

  async close(): Promise<void> {
    if (this.#shutDown) return this.#shutDown;
    this.#shutDown = this.#shutdown();
    return this.#shutDown;
  }

  async #shutdown(): Promise<void> {
    await this.drain();
    await this.#watchers?.stop();
    if (this.#sweeper) clearInterval(this.#sweeper);
    this.#sweeper = null;
    // another node sweeps at once instead of after the lease runs out
    await this.#sweepLease?.release().catch(() => {});
    await this.ctx.chain.stop();
    await this.ctx.pool.close();
    await this.ctx.store.close();
  }
}
