// One command as the core answers it: where it came in, who sent it, and what a handler may reach.
// Types only: the pieces of the core (the gate, idempotency, the command handlers) share them.
import type { StoreHealth } from './store-health.ts';
import type { ExecutionCommand } from '../protocol/services.ts';
import type { Op } from '../store/store.ts';
import type { CoreContext } from './context.ts';
import type { Sandbox } from './sandbox.ts';
import type { ExecutionArgs } from './executors/index.ts';
import type { Watchers } from './watchers/watchers.ts';

/**
 * Where a request came in. `gateway`: the HTTP gateway in this process, which limited its caller's
 * address itself (the label also counts the free quotes a gateway worker makes itself, quote-desk.ts);
 * `backend`: a gateway in another process (svcd gateway, or a worker of SVC_GATEWAY_PROCESSES), whose
 * per-address windows are only its own share, so the core keeps the node-wide ones, as for the edge.
 */
export type Listener = 'edge' | 'backend' | 'gateway' | 'admin';

/** payment: an x402 payment, the PAYMENT-SIGNATURE header's text (docs/x402.md) */
export interface Auth { machine_id?: string; token?: string; payment?: string }

export type Reply = Record<string, unknown>;

/** The ops that record an idempotent request's reply (the reply as the caller will see it). */
export type Seal = (result: Reply) => Op[];

/** A keyed request: its idempotency record's key, and the ops that record its reply (idempotent.ts). */
export interface Idem { record: string; seal: Seal }

/** A command's arguments (validated, defaults applied) and the caller that sent them. */
export interface Call {
  args: Record<string, unknown>;
  auth?: Auth;
  /** the caller's network address as the listener saw it (the gateway passes its HTTP client's) */
  client?: string;
  /** where the call came in (absent in handler tests: none) */
  listener?: Listener;
  /** set when the request carries an idempotency_key: the handler writes the seal in its own batch */
  idem?: Idem;
}

/** What a command handler reaches of the node beyond its context. */
export interface NodeState {
  readonly ctx: CoreContext;
  /** the anonymous sandbox's state, kept in the core so every gateway process in front of it shares it */
  readonly sandbox: Sandbox;
  /** the chain watchers, once started (null before, and without rails to watch) */
  readonly watchers: Watchers | null;
  /** the core refuses new requests and is finishing those in flight */
  readonly stopping: boolean;
  /** whether the store answers (HEALTH) */
  readonly storeHealth: StoreHealth;
  /** x402 at the paid executions (SVC_X402=on, x402/desk.ts), else null */
  readonly x402: PaymentDesk | null;
}

/** Where a paid execution goes on a node that takes x402 payments (x402/desk.ts X402Desk). */
export interface PaymentDesk {
  execute(command: ExecutionCommand, args: ExecutionArgs, auth: Auth | undefined, seal?: Seal): Promise<Reply>;
  /** the fee account's native balance on the family's network (wei, lamports) for its gauge; null: not offered */
  feeBalance(family: 'eip155' | 'solana'): Promise<bigint> | null;
}

/** One command's handler, found through the table keyed by registry name (commands/index.ts). */
export type Handler = (node: NodeState, call: Call) => Reply | Promise<Reply>;

/**
 * A command's arguments as the type its handler works with. They were checked against the command's
 * registry schema (the gate, or the in-process gateway) before any handler runs: the one place this
 * is taken on trust.
 */
export function argsAs<T>(args: Record<string, unknown>): T {
  return args as unknown as T;
}
