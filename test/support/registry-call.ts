// Calls a registry command over HTTP (its own route, path parameters filled from the args, the rest as
// body or query) or over svc/1, and reports both in one shape: the HTTP status (svc/1 errors mapped
// through the error catalogue), the error code, the body. Lets one test drive both surfaces alike.
import { ERRORS, isErrorCode } from '../../src/errors.ts';
import type { SvcClient } from '../../src/client/client.ts';
import { commandSpec, type CommandSpec } from '../../src/protocol/registry.ts';
import { httpFrom } from './http-from.ts';

export interface Outcome { status: number; code: string | null; body: any; replayed: boolean }

/** The HTTP request that carries `args` to `spec`'s route; throws when the command has none. */
export function routeOf(spec: CommandSpec, args: Record<string, unknown>): {
  method: 'GET' | 'POST'; path: string; body: Record<string, unknown> | undefined;
} {
  if (!spec.http) throw new Error(`${spec.name} has no HTTP route`);
  const rest = { ...args };
  const path = spec.http.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = rest[name];
    delete rest[name];
    return encodeURIComponent(String(v));
  });
  if (spec.http.method === 'POST') return { method: 'POST', path, body: rest };
  const query = new URLSearchParams(Object.entries(rest).map(([k, v]) => [k, String(v)])).toString();
  return { method: 'GET', path: query ? `${path}?${query}` : path, body: undefined };
}

export async function viaHttp(
  base: string, from: string, cmd: string, args: Record<string, unknown>, headers: Record<string, string> = {},
): Promise<Outcome> {
  const { method, path, body } = routeOf(commandSpec(cmd)!, args);
  const r = await httpFrom(from, base, method, path, body, headers);
  const code = r.status >= 400 ? (r.body?.error?.code ?? null) : null;
  return { status: r.status, code, body: r.body, replayed: r.headers['idempotent-replayed'] === 'true' };
}

export async function viaEdge(
  client: SvcClient, cmd: string, args: Record<string, unknown>, auth?: { machine_id?: string; token?: string },
): Promise<Outcome> {
  try {
    const body = await client.request(cmd, args, auth);
    return { status: 200, code: null, body, replayed: body.idempotent_replayed === true };
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    // a ConnectionError has no catalogue code: status 0 fails every assertion on a status
    if (!isErrorCode(code)) return { status: 0, code: String(e), body: null, replayed: false };
    const body = { error: { code, message: (e as Error).message } };
    return { status: ERRORS[code].status, code, body, replayed: false };
  }
}
