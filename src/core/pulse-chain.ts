// The pulse chain (DESIGN.md §8): one chain per node; pulse k opens period k and carries
// commit = SHA-256(seed_k) (already promised as commit_next in pulse k-1), commit_next =
// SHA-256(seed_{k+1}), the revealed seed_{k-1} and the previous pulse's output hash. GET_PULSE in
// period k answers expand(HMAC-SHA256(seed_k, lp(quote_id) ‖ lp(machine_id)), bits): unpredictable
// until pulse k+1 reveals seed_k, then checkable offline by anyone (docs/verify.md).
// Seeds are stored before the pulse that commits them is published, so the chain survives
// restarts; a late pulse is marked status "gap". Pulses are public randomness, never key material.
// Each pulse names its signing key (key_id); node_id stays the node's across key rotations.
// On a shared store (several nodes, docs/scale-out.md) each node keeps its own chain under its node id,
// and each pulse is created, never overwritten: a second process writing one node's chain (its data dir
// copied, or a restart while the old process still runs) fails the next pulse of whichever is behind,
// and that one stops answering from its chain (service_unavailable) instead of forking it.
import { randomBytes } from 'node:crypto';
import type { Kernels } from '../kernels/index.ts';
import { ServiceError } from '../errors.ts';
import { key, numPart } from '../store/key-codec.ts';
import { create, isStoreConflict, put, type Store } from '../store/store.ts';
import { newId } from './ids.ts';
import { sha256Hex } from '../protocol/canonical.ts';
import {
  PULSE_FORMAT, outputHash, pulseKeyMessage, signedBytes, type PulseBody, type SignedPulse,
} from '../protocol/pulse-format.ts';
import type { NodeIdentity } from './node-identity.ts';

export { PULSE_FORMAT, type PulseBody, type SignedPulse };

/** HMAC-SHA256(seed, lp(quote_id) ‖ lp(machine_id)): the per-execution expansion seed. */
export function pulseKey(k: Kernels, seed: Uint8Array, quoteId: string, machineId: string): Uint8Array {
  return k.hmacSha256(seed, pulseKeyMessage(quoteId, machineId));
}

export class PulseChain {
  readonly #store: Store;
  readonly #id: NodeIdentity;
  readonly #periodMs: number;
  #chainId = '';
  #latest: SignedPulse | null = null;
  #seed: Buffer | null = null; // seed of the latest pulse's period
  #timer: NodeJS.Timeout | null = null;
  #emitting: Promise<void> = Promise.resolve();
  /** key prefix of this node's chain: '' on a store of its own (the keys as they always were) */
  readonly #prefix: string;
  /** another process extended this chain: this one no longer may */
  #lost = false;
  /** the last pulse whose write failed without saying whether it landed, with its seed */
  #unsure: { signed: SignedPulse; seed: Buffer } | null = null;

  readonly #now: () => Date;

  /** `now`: the core's clock (tests inject a manual one; pulses are timed by it, scheduled by timers). */
  constructor(store: Store, id: NodeIdentity, periodMs: number, now: () => Date = () => new Date()) {
    this.#store = store;
    this.#id = id;
    this.#periodMs = periodMs;
    this.#now = now;
    const scope = store.nodeScope(id.nodeId);
    this.#prefix = scope ? key(scope, '') : '';
  }

  #key(index: number): string {
    return this.#prefix + numPart(index);
  }

  get chainId(): string { return this.#chainId; }
  get periodMs(): number { return this.#periodMs; }
  get latest(): SignedPulse | null { return this.#latest; }

  async start(): Promise<void> {
    const meta = await this.#store.get('meta', this.#metaKey);
    if (meta) {
      this.#chainId = meta.chain_id as string;
      const range = { gte: this.#prefix, lt: `${this.#prefix}\uffff` };
      for await (const [, v] of this.#store.entries<SignedPulse>('pulses', range)) this.#latest = v;
      // a restart always opens a new period: seeds of the old one may already have been used
      await this.emit();
    } else {
      this.#chainId = newId('chain');
      await this.emit();
    }
    this.#schedule();
  }

  #schedule(): void {
    this.#timer = setTimeout(() => {
      this.#emitting = this.#emitting
        .then(async () => { await this.emit(); })
        .catch(() => { /* the next period retries (a lost chain has stopped) */ });
      if (!this.#lost) this.#schedule();
    }, this.#periodMs);
    this.#timer.unref();
  }

  /** Emits the next pulse (genesis when the chain is new). */
  async emit(now = this.#now()): Promise<SignedPulse> {
    if (this.#lost) throw this.#lostError();
    await this.#settleUnsure();
    // the key of the pulse's start time, taken before any await: a rotation meanwhile cannot give the
    // pulse a key whose window starts after time_start
    const signer = this.#id.signerAt(now);
    const prev = this.#latest;
    const index = prev ? prev.pulse.index + 1 : 0;
    let seed: Buffer;
    if (prev) {
      const stored = await this.#store.get('seeds', this.#key(index));
      if (!stored) throw new Error(`pulse chain: seed ${index} was committed but is missing`);
      seed = Buffer.from(stored.seed as string, 'hex');
    } else {
      seed = randomBytes(32);
    }
    const nextSeed = randomBytes(32);
    let revealed: string | null = null;
    if (prev) {
      const s = await this.#store.get('seeds', this.#key(prev.pulse.index));
      revealed = (s?.seed as string | undefined) ?? null;
    }
    const late = prev ? now.getTime() - Date.parse(prev.pulse.time_start) > this.#periodMs * 1.5 : false;
    const pulse: PulseBody = {
      format: PULSE_FORMAT, chain_id: this.#chainId, index, time_start: now.toISOString(), period_ms: this.#periodMs,
      status: prev ? (late ? 'gap' : 'ok') : 'genesis',
      commit: sha256Hex(seed), commit_next: sha256Hex(nextSeed),
      revealed_index: prev ? prev.pulse.index : null, revealed_seed: revealed,
      prev_output: prev ? prev.output_hash : null,
      node_id: this.#id.nodeId, key_id: signer.keyId,
    };
    const sig = signer.sign(signedBytes(pulse));
    const signed: SignedPulse = { pulse, signature: sig.toString('base64url'), output_hash: outputHash(pulse, sig) };
    const ops = [
      create('pulses', this.#key(index), signed),
      put('seeds', this.#key(index + 1), { seed: nextSeed.toString('hex') }),
    ];
    if (!prev) {
      ops.push(
        put('seeds', this.#key(index), { seed: seed.toString('hex') }),
        put('meta', this.#metaKey, { chain_id: this.#chainId, created_at: now.toISOString() }),
      );
    }
    try {
      await this.#store.write(ops);
    } catch (e) {
      if (!isStoreConflict(e)) {
        this.#unsure = { signed, seed }; // it may have landed (a connection broken after the commit)
        throw e;
      }
      // another process published this index: its seed is the one promised, so this one stops for good
      this.#lost = true;
      this.#seed = null;
      if (this.#timer) clearTimeout(this.#timer);
      throw this.#lostError();
    }
    this.#latest = signed;
    this.#seed = seed;
    return signed;
  }

  /**
   * A pulse whose write failed without an answer: if it is stored, exactly as signed, it landed and the
   * chain goes on from it (its seed is the one its successor's record promised); if nothing is stored at
   * its index, it did not, and is forgotten. Another pulse there is another process's: the write of the
   * next one fails and this chain stops, as for any fork.
   */
  async #settleUnsure(): Promise<void> {
    const unsure = this.#unsure;
    if (!unsure) return;
    const stored = await this.get(unsure.signed.pulse.index);
    this.#unsure = null;
    if (stored?.output_hash !== unsure.signed.output_hash || stored.signature !== unsure.signed.signature) return;
    this.#latest = unsure.signed;
    this.#seed = unsure.seed;
  }

  /** Emits a pulse now, after any emission under way (a key rotation opens a period under its new key). */
  async next(): Promise<SignedPulse> {
    const p = this.#emitting.then(() => this.emit());
    this.#emitting = p.then(() => undefined, () => undefined);
    return p;
  }

  /** The period in force now: its index, commitment and (secret) seed. */
  current(): { index: number; commit: string; seed: Buffer } {
    if (this.#lost) throw this.#lostError();
    if (!this.#latest || !this.#seed) throw new Error('pulse chain not started');
    return { index: this.#latest.pulse.index, commit: this.#latest.pulse.commit, seed: this.#seed };
  }

  async get(index: number): Promise<SignedPulse | undefined> {
    return this.#store.get<SignedPulse>('pulses', this.#key(index));
  }

  get #metaKey(): string {
    return this.#prefix ? `pulse_chain!${this.#id.nodeId}` : 'pulse_chain';
  }

  #lostError(): ServiceError {
    const msg = 'another process extends this node\'s pulse chain (same node key on the shared ledger); ' +
      'this one has stopped';
    return new ServiceError('service_unavailable', msg);
  }

  async stop(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#emitting;
  }
}
