// How the gateway reaches the core: one small interface (DESIGN.md §1) with two implementations that
// main wires — a direct call into the core's handler when both run in one process (no serialisation,
// no socket), and svc/1 over the loopback backend when the gateway runs apart (`svcd gateway`).
// Errors the core raised come back as CoreError either way, so the HTTP mapper knows their source.
import { SvcClient, type Auth, type Endpoint } from '../client/client.ts';
import { ServiceError } from '../errors.ts';
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

/** The core in this process. Anything but a ServiceError is logged by `onInternal` and surfaces as internal. */
export function inProcessCaller(handle: CoreHandler, onInternal: (e: unknown) => void): CoreCaller {
  return {
    async call(cmd, args, auth, client, validated = false) {
      try {
        return await handle(cmd, args, auth, client, validated);
      } catch (e) {
        if (e instanceof ServiceError) throw new CoreError(e);
        onInternal(e);
        throw new CoreError(new ServiceError('internal', 'internal error'));
      }
    },
    close() { /* the core is closed by its owner */ },
  };
}

/** The core over svc/1: a few pipelined backend connections, opened lazily, reopened after a drop. */
export function svc1Caller(backend: Endpoint, connections = 4): CoreCaller {
  const clients: (Promise<SvcClient> | null)[] = Array.from({ length: connections }, () => null);
  let next = 0;
  const pick = (): Promise<SvcClient> => {
    const i = next++ % clients.length;
    return clients[i] ??= SvcClient.connect(backend).catch((e: unknown) => {
      clients[i] = null;
      throw e;
    });
  };
  return {
    async call(cmd, args, auth, client) {
      const c = await pick();
      try {
        return await c.request(cmd, args, auth, client ? { client } : undefined);
      } catch (e) {
        // anything else is the client kit's ConnectionError: the mapper answers 502 edge_unavailable
        if (e instanceof ServiceError) throw new CoreError(e);
        throw e;
      }
    },
    close() {
      for (const c of clients) void c?.then((x) => x.close(), () => undefined);
    },
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
