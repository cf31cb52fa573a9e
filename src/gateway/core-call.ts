// How the gateway reaches the core: one small interface (DESIGN.md §1) with two implementations that
// main wires — a direct call into the core's handler when both run in one process (no serialisation,
// no socket), and svc/1 to one or several core nodes when the gateway runs apart (core-nodes.ts).
// Errors the core raised come back as CoreError either way, so the HTTP mapper knows their source.
import type { Auth } from '../client/client.ts';
import { ServiceError, unavailableCause } from '../errors.ts';
import { CoreError } from './http-errors.ts';

/**
 * A free call with no machine identity (discovery documents, status, MCP's free tools). `client`:
 * the HTTP client's address the call is made for — the core keys QUOTE's idempotency scope on it and,
 * when this gateway runs apart, its per-address windows — or null for the gateway's own calls (the
 * cached discovery facts), which no caller asked for and no caller is charged.
 */
export type CoreCall = (
  cmd: string, args: Record<string, unknown>, client: string | null,
) => Promise<Record<string, unknown>>;

export interface CoreCaller {
  /**
   * `client` is the HTTP client's address (the core keys QUOTE idempotency on it). `validated`: the
   * gateway checked `args` against the registry's schema already; a core in this process then does
   * not check them again (one over svc/1 always does: the socket is a trust boundary).
   */
  call(
    cmd: string, args: Record<string, unknown>, auth?: Auth, client?: string, validated?: boolean,
  ): Promise<Record<string, unknown>>;
  close(): void;
}

export type CoreHandler = (
  cmd: string, args: Record<string, unknown>, auth: Auth | undefined, client: string | undefined, validated: boolean,
) => Promise<Record<string, unknown>>;

/** What a call answered in this process threw, as the core's error: anything but a ServiceError is internal. */
function asCoreError(e: unknown, onInternal: (e: unknown) => void): CoreError {
  if (e instanceof ServiceError) return new CoreError(e);
  onInternal(e);
  return new CoreError(new ServiceError('internal', 'internal error'));
}

/**
 * The core in this process. Anything but a ServiceError is logged by `onInternal` and surfaces as internal;
 * a `service_unavailable` with a cause (unavailableCause) is told to `onUnavailable` and surfaces as it is.
 */
export function inProcessCaller(
  handle: CoreHandler, onInternal: (e: unknown) => void, onUnavailable: (e: ServiceError) => void = () => {},
): CoreCaller {
  return {
    async call(cmd, args, auth, client, validated = false) {
      try {
        return await handle(cmd, args, auth, client, validated);
      } catch (e) {
        if (unavailableCause(e) !== undefined) onUnavailable(e as ServiceError);
        throw asCoreError(e, onInternal);
      }
    },
    close() { /* the core is closed by its owner */ },
  };
}

/**
 * A call this process answers without the core (a gateway worker's free quotes, core/quote-desk.ts), or
 * null for one the core must answer. `validated` as in CoreCaller.call.
 */
export type LocalAnswer = (
  cmd: string, args: Record<string, unknown>, client: string | undefined, validated: boolean,
) => Promise<Record<string, unknown>> | null;

/**
 * `caller` with the calls `local` answers taken off it. Their errors surface as the core's would (a
 * ServiceError as CoreError; anything else logged by `onInternal`, internal).
 */
export function answeringFirst(local: LocalAnswer, caller: CoreCaller, onInternal: (e: unknown) => void): CoreCaller {
  return {
    call(cmd, args, auth, client, validated = false) {
      const answer = local(cmd, args, client, validated);
      if (!answer) return caller.call(cmd, args, auth, client, validated);
      return answer.catch((e: unknown) => { throw asCoreError(e, onInternal); });
    },
    close: () => caller.close(),
  };
}

/** HEALTH via the edge, or `unavailable` with the reason: status pages never fail because the core did. */
export async function edgeStatus(core: CoreCall, client: string | null): Promise<Record<string, unknown>> {
  try {
    return { status: 'ok', ...(await core('HEALTH', {}, client)) };
  } catch (e) {
    return { status: 'unavailable', reason: e instanceof Error ? e.message : String(e) };
  }
}
