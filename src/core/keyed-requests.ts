// Requests with an idempotency_key (idempotency.ts holds the records): one runs at a time per key, a
// repeat with the same body replays the recorded reply with the present state of what it names, and
// the reply's record is written in the batch of the command's own effects. A node marks the keys it
// runs in the store (an unsynced write), so another node of a shared store refuses them too
// (docs/scale-out.md); where one process owns the store, the mark is written all the same.
import { ServiceError } from '../errors.ts';
import { canonicalDigest } from '../protocol/canonical.ts';
import type { CommandSpec } from '../protocol/registry.ts';
import { create, delIf, isStoreConflict, put, replace, type Json } from '../store/store.ts';
import type { Idem, Reply, Seal } from './call.ts';
import { currentView } from './commands/money.ts';
import type { CoreContext } from './context.ts';
import { loadRecord, openToken, recordKey, recordOps, sealToken, type IdempotencyRecord } from './idempotency.ts';
import { holderId } from './leases.ts';
import { authenticate, getMachine, machineOps } from './machines.ts';

/**
 * How long a node's mark on an idempotency key it is running holds off the other nodes
 * (docs/scale-out.md). Past it (the node stopped mid-request) another node may take the key over; the
 * first node's reply then cannot be recorded (its batch compares the mark) and it answers busy.
 */
const RUNNING_LEASE_MS = 60_000;

const inProgress = () =>
  new ServiceError('idempotency_in_progress', 'a request with this idempotency_key is still running');

export class KeyedRequests {
  readonly #ctx: CoreContext;
  readonly #inProgress = new Set<string>();

  constructor(ctx: CoreContext) {
    this.#ctx = ctx;
  }

  /**
   * Runs a keyed request once: `run` gets the record's key and seal, and writes the seal in its own
   * batch; a command without effects to batch with (QUOTE) has its record written here.
   */
  async run(
    spec: CommandSpec, args: Record<string, unknown>, idemKey: string, scope: string,
    run: (idem: Idem) => Promise<Reply>,
  ): Promise<Reply> {
    const { idempotency_key: _k, ...body } = args;
    const k = recordKey(scope, spec.name, idemKey);
    const digest = canonicalDigest({ cmd: spec.name, body });
    // claim the key before the first await: two concurrent requests with one key cannot both run
    if (this.#inProgress.has(k)) throw inProgress();
    this.#inProgress.add(k);
    // this node's mark on the key in the store, for the other nodes; deleted by the batch that records the
    // reply, or else when the request ends
    let running: Json | null = null;
    let recorded = false;
    try {
      const nowMs = this.#ctx.now().getTime();
      running = await this.#markRunning(k, nowMs);
      const prior = await loadRecord(this.#ctx.store, k, nowMs);
      if (prior) {
        if (prior.digest !== digest) {
          throw new ServiceError('idempotency_key_reused', 'idempotency_key was used with a different request');
        }
        return { ...(await currentView(this.#ctx, spec.name, prior.result)), idempotent_replayed: true };
      }
      let sealed = false;
      const seal: Seal = (result) => {
        sealed = true;
        return this.#recordOps(spec.name, { k, idemKey, digest, nowMs, running }, result);
      };
      const result = await run({ record: k, seal });
      // a QUOTE's record may be lost in a crash like the quote itself (a retry then gets a new quote)
      if (!sealed) await this.#ctx.store.write(seal(result), { sync: spec.name !== 'QUOTE' });
      recorded = true;
      return result;
    } finally {
      this.#inProgress.delete(k);
      // a replay, or a request that failed: nothing recorded the reply, so the mark goes alone (if it
      // cannot, it expires)
      if (running && !recorded) {
        await this.#ctx.store.write([delIf('idempotency_running', k, running)], { sync: false }).catch(() => {});
      }
    }
  }

  /**
   * The record of a reply, for the command to write in the batch of its own effects (a crash cannot leave
   * one without the other); a token is kept only sealed under the key, until first used.
   */
  #recordOps(
    command: string, r: { k: string; idemKey: string; digest: string; nowMs: number; running: Json | null },
    result: Reply,
  ) {
    const { machine_token: token, ...stored } = result;
    const rec: IdempotencyRecord = {
      digest: r.digest, command, result: stored,
      at_ms: r.nowMs, expires_ms: r.nowMs + this.#ctx.config.idempotencyTtlMs,
    };
    if (typeof token === 'string') rec.sealed_token = sealToken(token, r.idemKey, r.k);
    const ops = recordOps(r.k, rec);
    // compared: if another node took the key over (this node's lease ended), this reply is not recorded
    if (r.running) ops.push(delIf('idempotency_running', r.k, r.running));
    return ops;
  }

  /**
   * Marks the key running on this node (a create, unsynced: a crash takes the request with it, and the
   * restart clears the node's own marks), or takes over a mark whose node's lease ended, or one this process
   * left (its write or delete went unanswered: no request of this process runs the key, the caller holds
   * it); another node's live mark is idempotency_in_progress, as a key running here is.
   */
  async #markRunning(k: string, nowMs: number): Promise<Json> {
    const store = this.#ctx.store;
    const mine = { holder: holderId(this.#ctx.identity.nodeId), expires_ms: nowMs + RUNNING_LEASE_MS };
    let cur: Json | undefined;
    for (let run = 1; run <= 2; run++) {
      try {
        const mark = cur ? replace('idempotency_running', k, mine, cur) : create('idempotency_running', k, mine);
        await store.write([mark], { sync: false });
        return mine;
      } catch (e) {
        if (!isStoreConflict(e)) throw e;
      }
      cur = await store.get('idempotency_running', k);
      if (cur && cur.holder !== mine.holder && (cur.expires_ms as number) > nowMs) break;
    }
    throw inProgress();
  }

  /**
   * A claiming FUND_ACCOUNT whose reply was lost: the same key and body, before the token was first
   * used, get the same reply with the same token. Anything else: null (the caller then needs its token).
   */
  async claimReplay(spec: CommandSpec, args: Record<string, unknown>, idemKey: string): Promise<Reply | null> {
    const { idempotency_key: _k, ...body } = args;
    const k = recordKey(`m:${args.machine_id as string}`, spec.name, idemKey);
    const prior = await loadRecord(this.#ctx.store, k, this.#ctx.now().getTime());
    if (!prior?.sealed_token || prior.digest !== canonicalDigest({ cmd: spec.name, body })) return null;
    const token = openToken(prior.sealed_token, idemKey, k);
    if (!token) return null;
    // a rotated token is not handed out again
    try { await authenticate(this.#ctx.store, args.machine_id as string, token); } catch { return null; }
    const view = await currentView(this.#ctx, spec.name, prior.result);
    return { ...view, machine_token: token, idempotent_replayed: true };
  }

  /** The first use of a token ends its replay: the sealed copy is erased. */
  async tokenFirstUsed(machineId: string): Promise<void> {
    const { store, ledger } = this.#ctx;
    await ledger.withMachine(machineId, async () => {
      const cur = await getMachine(store, machineId);
      if (!cur?.replay_record) return;
      const { replay_record: k, ...rest } = cur;
      const ops = machineOps(machineId, rest, cur);
      const r = await store.get<IdempotencyRecord>('idempotency', k);
      if (r?.sealed_token) {
        const { sealed_token: _s, ...kept } = r;
        ops.push(put('idempotency', k, kept));
      }
      await store.write(ops);
    });
  }
}
