// The core: one node's parts (open-node.ts) and the one door every svc/1 command comes through,
// whichever listener it came in on. handle() runs the gate (listener, limits, arguments, token:
// gate.ts), idempotency keys (keyed-requests.ts) and then the command's handler from the table
// (commands/). The core also owns the sweeper, the watchers and an orderly shutdown.
import { ServiceError } from '../errors.ts';
import { RateLimiter, addressWindowKey, type WindowGrant } from '../protocol/rate-limit.ts';
import { commandSpec, type RateClass } from '../protocol/registry.ts';
import type { Auth, Handler, Idem, Listener, NodeState, Reply } from './call.ts';
import { HANDLERS } from './commands/index.ts';
import type { Config } from './config.ts';
import type { CoreContext } from './context.ts';
import { commandDone } from './core-metrics.ts';
import { Gate } from './gate.ts';
import { KeyedRequests } from './keyed-requests.ts';
import type { Lease } from './leases.ts';
import { openNode } from './open-node.ts';
import { Sandbox } from './sandbox.ts';
import { StoreHealth } from './store-health.ts';
import { sweepLease, sweepRound } from './sweeps.ts';
import { WebhookDeliverer } from './webhook-deliverer.ts';
import type { TlsMaterial } from './tls-material.ts';
import type { WatchLog } from './watchers/poll-loop.ts';
import type { Watchers } from './watchers/watchers.ts';
import type { X402Desk } from './x402/desk.ts';

export class Core implements NodeState {
  readonly ctx: CoreContext;
  readonly tls: TlsMaterial;
  readonly sandbox: Sandbox;
  readonly storeHealth: StoreHealth;
  readonly #limits: RateLimiter;
  readonly #keyed: KeyedRequests;
  readonly #gate: Gate;
  /** one node of a shared store sweeps at a time (a store one process owns: that process always does) */
  readonly #sweepLease: Lease;
  #sweeper: NodeJS.Timeout | null = null;
  /** sends the webhook deliveries due (null: no endpoint configured) */
  #webhooks: WebhookDeliverer | null = null;
  #watchers: Watchers | null = null;
  /** the watchers' modules (and the chain clients they bring) load only where a watcher is configured */
  #watchersLoading: Promise<void> | null = null;
  /** x402 at the paid executions (SVC_X402=on), and its timer resuming settlements left unfinished */
  readonly x402: X402Desk | null;
  #x402Resume: NodeJS.Timeout | null = null;
  #closed = false;
  #active = 0;
  #drained: (() => void) | null = null;
  #shutDown: Promise<void> | null = null;

  private constructor(ctx: CoreContext, tls: TlsMaterial, x402: X402Desk | null) {
    this.ctx = ctx;
    this.tls = tls;
    this.#limits = new RateLimiter(ctx.config.rates);
    this.#keyed = new KeyedRequests(ctx);
    this.x402 = x402;
    this.#gate = new Gate(ctx, this.#limits, this.#keyed, this.x402 !== null);
    this.sandbox = new Sandbox({ maxPerClient: ctx.config.sandboxMaxPerClient, kernels: ctx.kernels });
    this.#sweepLease = sweepLease(ctx);
    this.storeHealth = new StoreHealth(ctx.store);
  }

  /**
   * Opens everything; throws (and svcd refuses to start) when the ledger invariant is broken.
   * `opts.clock` replaces the wall clock for every expiry, window and pulse time the core decides
   * (tests move it by hand instead of sleeping); svcd never passes one, and no command can set it.
   */
  /**
   * `onBackgroundError`: told when work the core does on its own (the sweep of expired quotes and invoices,
   * x402 settlements driven on) failed; the next round tries again, the operator's log says why.
   */
  static async open(
    config: Config, opts: { clock?: () => Date; onBackgroundError?: (what: string, e: unknown) => void } = {},
  ): Promise<Core> {
    const told = opts.onBackgroundError ?? (() => {});
    const { ctx, tls } = await openNode(config, opts.clock ?? (() => new Date()));
    // x402's modules (viem: a third of a second to load) only where it is on
    const x402 = config.x402 ? await (await import('./x402/desk.ts')).X402Desk.open(ctx, config.x402) : null;
    const core = new Core(ctx, tls, x402);
    await sweepRound(ctx, core.#sweepLease);
    core.#sweeper = setInterval(() => {
      sweepRound(ctx, core.#sweepLease).catch((e: unknown) => told('sweep', e)); // the next tick retries
    }, ctx.config.sweepIntervalMs);
    core.#sweeper.unref();
    core.#webhooks = WebhookDeliverer.start(ctx);
    core.#startX402(told);
    return core;
  }

  get watchers(): Watchers | null { return this.#watchers; }

  /** Settlements a restart (or a request that stopped waiting) left unfinished are driven on, now and then. */
  #startX402(told: (what: string, e: unknown) => void): void {
    const desk = this.x402;
    if (!desk) return;
    const every = Math.max(1000, desk.pollMs * 4);
    // the chain or the store is down: the next pass retries
    const pass = () => { desk.resume().catch((e: unknown) => told('x402 settlements', e)); };
    pass();
    this.#x402Resume = setInterval(pass, every);
    this.#x402Resume.unref();
  }
  get stopping(): boolean { return this.#closed; }

  /**
   * Answers one command. `client` is the caller's network address as the listener saw it (the gateway
   * passes the HTTP client's). `args` is the caller's to give away: defaults are applied to it in
   * place. `validated`: the in-process gateway checked it against the same registry schema already.
   * Throws ServiceError (or anything else, which surfaces as internal).
   */
  async handle(
    cmd: string, args: Record<string, unknown>, auth: Auth | undefined, listener: Listener, client?: string,
    validated = false,
  ): Promise<Reply> {
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

  async #handle(
    cmd: string, args: Record<string, unknown>, auth: Auth | undefined, listener: Listener,
    client: string | undefined, validated: boolean,
  ): Promise<Reply> {
    const spec = commandSpec(cmd);
    if (!spec) throw new ServiceError('unknown_command', `unknown command ${cmd}`);
    const admitted = await this.#gate.admit({ spec, args, auth, listener, client, validated });
    if ('replay' in admitted) return admitted.replay;
    const handler = HANDLERS.get(spec.name) as Handler;
    const idemKey = args.idempotency_key as string | undefined;
    if (idemKey === undefined) return handler(this, { args, auth, client, listener });
    const run = async (idem: Idem) => handler(this, { args, auth, client, listener, idem });
    return this.#keyed.run(spec, args, idemKey, admitted.scope, run);
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

  /** Starts a chain watcher per configured rail (docs/settlement.md); svcd calls it once its listeners are up. */
  startWatchers(log: WatchLog): void {
    if (this.#watchersLoading || this.#closed || !this.ctx.config.watchers?.length) return;
    this.#watchersLoading = import('./watchers/watchers.ts').then(({ Watchers }) => {
      if (!this.#closed) this.#watchers = Watchers.start(this.ctx, log);
    });
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

  close(): Promise<void> {
    this.#shutDown ??= this.#shutdown();
    return this.#shutDown;
  }

  async #shutdown(): Promise<void> {
    await this.drain();
    await this.#watchersLoading;
    await this.#watchers?.stop();
    await this.#webhooks?.stop();
    if (this.#sweeper) clearInterval(this.#sweeper);
    this.#sweeper = null;
    if (this.#x402Resume) clearInterval(this.#x402Resume);
    // another node sweeps at once instead of after the lease runs out
    await this.#sweepLease.release().catch(() => {});
    await this.ctx.chain.stop();
    await this.ctx.pool.close();
    await this.ctx.store.close();
  }
}
