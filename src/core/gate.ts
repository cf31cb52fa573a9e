// What every command passes before its handler runs, in this order: where it may come in, the
// caller's address limits (before anything is parsed), its arguments, its token (before anything is
// keyed on a caller's identity), and the machine's own limits once the token checked out.
import { ServiceError } from '../errors.ts';
import { RateLimiter, addressWindowKey, clientKey } from '../protocol/rate-limit.ts';
import { isPaidExecution, needsToken, type CommandSpec } from '../protocol/registry.ts';
import { validateArgs } from '../protocol/validate.ts';
import type { Auth, Listener, Reply } from './call.ts';
import type { CoreContext } from './context.ts';
import type { KeyedRequests } from './keyed-requests.ts';
import { checkToken, type MachineRecord } from './machines.ts';
import { quoteIsLookedUp } from './quotes.ts';

/** Let through: the scope its idempotency key is recorded under. Or answered already: a claim's replay. */
export type Admission = { scope: string } | { replay: Reply };

export interface Arrival {
  spec: CommandSpec;
  args: Record<string, unknown>;
  auth: Auth | undefined;
  listener: Listener;
  client: string | undefined;
  /** the in-process gateway checked the arguments against the same registry schema already */
  validated: boolean;
}

export class Gate {
  readonly #ctx: CoreContext;
  readonly #limits: RateLimiter;
  readonly #keyed: KeyedRequests;
  /** x402 is on: a paid execution without a token is let through to be paid for (x402/desk.ts) */
  readonly #payable: boolean;

  constructor(ctx: CoreContext, limits: RateLimiter, keyed: KeyedRequests, payable = false) {
    this.#ctx = ctx;
    this.#limits = limits;
    this.#keyed = keyed;
    this.#payable = payable;
  }

  async admit({ spec, args, auth, listener, client, validated }: Arrival): Promise<Admission> {
    checkListener(spec, listener);
    // on an x402 node a paid execution without a token is the payment desk's (a 402, or a payment to check)
    const tokened = needsToken(spec) && !(this.#payable && !auth?.token && isPaidExecution(spec));
    // edge and remote gateways' callers are limited here by address (a remote gateway's own calls,
    // which name no client, are nobody's); the in-process gateway limits its HTTP callers itself
    const counted = listener === 'edge' || (listener === 'backend' && client !== undefined);
    const address = counted ? addressWindowKey(client) : null;
    const nowMs = this.#ctx.now().getTime();
    if (address && !tokened) this.#limits.check(spec.rateClass, address, 'per address', nowMs);
    if (address && tokened) this.#limits.assertOpen(spec.rateClass, address, 'per address', nowMs);
    if (!validated) validateArgs(spec, args);
    if (!tokened) return { scope: `a:${clientKey(client)}|m:${String(args.machine_id)}` };
    const replay = await this.#authenticate(spec, args, auth, listener, address, nowMs);
    return replay ? { replay } : { scope: `m:${args.machine_id as string}` };
  }

  /** Checks the caller's token and counts the call against its machine; a claim's lost reply is replayed. */
  async #authenticate(
    spec: CommandSpec, args: Record<string, unknown>, auth: Auth | undefined, listener: Listener,
    address: string | null, nowMs: number,
  ): Promise<Reply | null> {
    const machineId = args.machine_id as string;
    if (auth?.machine_id !== undefined && auth.machine_id !== machineId) {
      throw new ServiceError('unauthorized', 'auth.machine_id differs from args.machine_id');
    }
    // one statement: the machine record, and the account and quote the call's locked operation starts from
    const quoteId = args.quote_id;
    const looked = typeof quoteId === 'string' && quoteIsLookedUp(this.#ctx, quoteId, machineId);
    const more = looked ? [{ sub: 'quotes' as const, key: quoteId }] : [];
    const ahead = await this.#ctx.ledger.readAhead(machineId, more);
    const claimed = ahead.machine as MachineRecord | undefined;
    // FUND_ACCOUNT for an unclaimed machine is the one call that needs no token: it claims it (the
    // claim itself is decided again under the machine lock)
    if (!claimed && spec.name === 'FUND_ACCOUNT') {
      if (address) this.#limits.check(spec.rateClass, address, 'per address', nowMs);
      return null;
    }
    const idemKey = args.idempotency_key as string | undefined;
    if (claimed && !auth?.token && idemKey !== undefined && spec.name === 'FUND_ACCOUNT') {
      const replay = await this.#keyed.claimReplay(spec, args, idemKey);
      if (replay) return replay;
    }
    try {
      const rec = checkToken(claimed, auth?.token);
      ahead.keep();
      if (rec.replay_record) await this.#keyed.tokenFirstUsed(machineId);
    } catch (e) {
      if (address) this.#limits.check(spec.rateClass, address, 'per address', nowMs);
      throw e;
    }
    if (listener !== 'admin') this.#limits.check(spec.rateClass, `m:${machineId}`, 'per machine', nowMs);
    return null;
  }
}

function checkListener(spec: CommandSpec, listener: Listener): void {
  if (spec.auth === 'admin' && listener !== 'admin') {
    throw new ServiceError('forbidden', `${spec.name} is only available on the admin socket`);
  }
  if (spec.access === 'gateway' && listener !== 'backend' && listener !== 'gateway') {
    throw new ServiceError('forbidden', `${spec.name} is the HTTP gateway's own call (use the /api/v1/sandbox routes)`);
  }
}
