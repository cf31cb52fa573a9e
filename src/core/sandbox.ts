// The anonymous sandbox (SPEC "Sandbox"): GET_PULSE quote → accept → execute → verify, free, with
// no real settlement. Its state lives in the core (the gateway's SANDBOX_* calls reach it), so every
// gateway process in front of one core shares it: bounded in-memory tables with the 300 s lifetime,
// shared out per client address (a quota each, and when full the heaviest holders lose their oldest
// entries first, never an accepted quote: fair-table.ts), an Ed25519 key made at start for sandbox
// receipts, and a random sandbox seed for the pulse kernel. Nothing here touches money or the store.
import { generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import { ServiceError } from '../errors.ts';
import { Kernels } from '../kernels/index.ts';
import { canonicalJson, sha256Hex } from '../protocol/canonical.ts';
import { keyIdOf } from '../protocol/ed25519.ts';
import { pulseKeyMessage } from '../protocol/pulse-format.ts';
import { LiveQuota } from './client-quota.ts';
import { FairTable, type Owned } from './fair-table.ts';
import { SANDBOX_LIMITS } from '../protocol/sandbox.ts';
import { assertPulseFits } from '../protocol/services.ts';

interface SandboxQuote extends Owned {
  quote_id: string; machine_id: string; bits: number; max_output: number;
  state: 'issued' | 'accepted' | 'executed'; result?: Record<string, unknown>;
}
interface SandboxReceipt { receipt: Record<string, unknown>; signature: string }
type StoredReceipt = SandboxReceipt & Owned;

/** Entries held at once (quotes and receipts each); past it the heaviest holders' oldest go first. */
const MAX_ENTRIES = 20_000;
const id = (p: string) => `${p}_${randomBytes(15).toString('base64url')}`;

export class Sandbox {
  // an accepted quote is the one a caller is about to execute: a flood never takes it
  readonly #quotes = new FairTable<SandboxQuote>(MAX_ENTRIES, (q) => q.state === 'accepted');
  readonly #receipts = new FairTable<StoredReceipt>(MAX_ENTRIES);
  readonly #perClient: LiveQuota;
  readonly #seed = randomBytes(32);
  readonly #key = generateKeyPairSync('ed25519');
  readonly #k: Kernels;
  readonly publicKey = this.#key.publicKey.export({ format: 'der', type: 'spki' })
    .subarray(-32).toString('base64url');
  readonly keyId = keyIdOf(Buffer.from(this.publicKey, 'base64url'));

  /**
   * `maxPerClient`: live entries one address may hold, so a few addresses cannot fill it for everyone.
   * `kernels`: the core's own instance (default: a new one).
   */
  constructor(opts: { maxPerClient: number; kernels?: Kernels }) {
    this.#perClient = new LiveQuota(opts.maxPerClient, 'live sandbox entries');
    this.#k = opts.kernels ?? Kernels.create();
  }

  get size(): { quotes: number; receipts: number } {
    return { quotes: this.#quotes.size, receipts: this.#receipts.size };
  }

  /** Room for one more entry in `table`, or 503 busy: it is full of accepted quotes. */
  #makeRoom(table: FairTable<SandboxQuote> | FairTable<StoredReceipt>, now: number): void {
    if (table.makeRoom(now)) return;
    throw new ServiceError('busy', 'the sandbox is full of accepted quotes; retry after 5 s', { retry_after_s: 5 });
  }

  #quote(quoteId: string, machineId: string, now: number): SandboxQuote {
    const q = this.#quotes.get(quoteId, now);
    if (!q) {
      const ttl = SANDBOX_LIMITS.ttlSeconds;
      throw new ServiceError('not_found', `no sandbox quote ${quoteId} (sandbox quotes live ${ttl} s)`);
    }
    if (q.machine_id !== machineId) {
      throw new ServiceError('quote_wrong_machine', 'the sandbox quote was issued to another machine_id');
    }
    return q;
  }

  quote(
    a: { machine_id: string; bits: number; max_output: number }, client: string, now = Date.now(),
  ): Record<string, unknown> {
    assertPulseFits(a.bits, a.max_output); // the same rule as a paid GET_PULSE quote
    this.#makeRoom(this.#quotes, now);
    const expires = now + SANDBOX_LIMITS.ttlSeconds * 1000;
    const release = this.#perClient.take(client, expires, now);
    const q: SandboxQuote = {
      quote_id: id('sbx_q'), machine_id: a.machine_id, bits: a.bits, max_output: a.max_output, state: 'issued',
      owner: client, expires_ms: expires, release,
    };
    this.#quotes.set(q.quote_id, q);
    return {
      sandbox: true, quote_id: q.quote_id, service: 'get-pulse', machine_id: q.machine_id, state: q.state,
      bits: q.bits, max_output: q.max_output, quote_units: 0, settlement: 'none',
      expires_at: new Date(q.expires_ms).toISOString(), ttl_seconds: SANDBOX_LIMITS.ttlSeconds,
    };
  }

  accept(quoteId: string, machineId: string, now = Date.now()): Record<string, unknown> {
    const q = this.#quote(quoteId, machineId, now);
    if (q.state === 'executed') throw new ServiceError('quote_not_issued', 'the sandbox quote was already executed');
    q.state = 'accepted';
    const expires_at = new Date(q.expires_ms).toISOString();
    return { sandbox: true, quote_id: q.quote_id, machine_id: q.machine_id, state: q.state, expires_at };
  }

  execute(quoteId: string, machineId: string, client: string, now = Date.now()): Record<string, unknown> {
    const q = this.#quote(quoteId, machineId, now);
    if (q.state === 'executed') return { ...q.result!, replayed: true };
    if (q.state !== 'accepted') throw new ServiceError('quote_not_accepted', 'accept the sandbox quote first');
    this.#makeRoom(this.#receipts, now);
    const expires = now + SANDBOX_LIMITS.ttlSeconds * 1000;
    const release = this.#perClient.take(client, expires, now);
    const key = this.#k.hmacSha256(this.#seed, pulseKeyMessage(q.quote_id, q.machine_id));
    const out = this.#k.pulseExpand(key, new Uint8Array(0), q.bits);
    const receipt = {
      format: 'svc_sandbox_receipt_v1', receipt_id: id('sbx_rcpt'), service: 'get-pulse', quote_id: q.quote_id,
      machine_id: q.machine_id, bits: q.bits, units_charged: '0', settlement: 'none (sandbox)',
      output_digest: sha256Hex(out), issued_at: new Date(now).toISOString(), key_id: this.keyId,
    };
    const signature = sign(null, Buffer.from(canonicalJson(receipt)), this.#key.privateKey).toString('base64url');
    this.#receipts.set(receipt.receipt_id, { receipt, signature, owner: client, expires_ms: expires, release });
    q.state = 'executed';
    q.result = {
      sandbox: true, quote_id: q.quote_id, machine_id: q.machine_id, bits: q.bits,
      output_hex: Buffer.from(out).toString('hex'), receipt_id: receipt.receipt_id, units_charged: 0,
    };
    return q.result;
  }

  verify(receiptId: string, machineId: string, now = Date.now()): Record<string, unknown> {
    const r = this.#receipts.get(receiptId, now);
    if (!r || r.receipt.machine_id !== machineId) {
      throw new ServiceError('not_found', `no sandbox receipt ${receiptId} for this machine`);
    }
    const signed = Buffer.from(canonicalJson(r.receipt));
    const valid = verify(null, signed, this.#key.publicKey, Buffer.from(r.signature, 'base64url'));
    return {
      sandbox: true, receipt_id: receiptId, valid, receipt: r.receipt, signature: r.signature, alg: 'Ed25519',
      public_key: this.publicKey, key_id: this.keyId, issuer: 'this service (sandbox key, made at start)',
    };
  }
}
