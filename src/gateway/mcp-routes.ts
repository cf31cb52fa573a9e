// MCP over HTTP: POST /mcp is the stateless JSON-RPC endpoint (mcp.ts) with its free tools (and, where x402
// is on, its paid ones), GET /mcp is 405 (no streams), and the MCP metadata documents at the paths of the
// public route table.
import type Router from '@koa/router';
import { PUBLIC_ROUTES, publicRoute } from '../discovery/routes.ts';
import { ServiceError } from '../errors.ts';
import { addressWindowKey } from '../protocol/rate-limit.ts';
import { readJsonBody } from './body.ts';
import type { McpDocs, PaidCalls } from './mcp.ts';

type McpModule = typeof import('./mcp.ts');
import type { GatewayParts, State } from './parts.ts';

/** Mounts the MCP routes; the function returned closes the endpoint. */
export function mountMcpRoutes(
  router: Router<State>, { core, free, limiter, limit, baseUrl, log }: GatewayParts, docs: McpDocs,
): () => void {
  // a paid tool call is a paid execution: counted in its class against the caller's address, as the HTTP
  // route counts a caller without a token, and passed to the core with its payment as that route passes it
  const paid: PaidCalls = {
    call: (cmd, args, auth, client) => core.call(cmd, args, auth, client),
    limit: (client) => { limiter.check('paid_execution', addressWindowKey(client), 'per address'); },
  };
  const onerror = (e: Error) => log.warn({ err: e }, 'mcp request rejected');
  // the MCP server and its schema library load on the first MCP request, not at every start (about 0.3 s)
  let loaded: Promise<{ mod: McpModule; mcp: ReturnType<McpModule['createMcpEndpoint']> }> | null = null;
  const mcpModule = () => {
    loaded ??= import('./mcp.ts').then((mod) => ({ mod, mcp: mod.createMcpEndpoint(free, onerror, docs, paid) }));
    return loaded;
  };
  const endpoint = publicRoute('mcp').path;
  router.get(publicRoute('mcpStream').path, (ctx) => {
    ctx.set('Allow', 'POST');
    const msg = `GET ${endpoint}: streams are not supported (stateless server); POST JSON-RPC requests`;
    throw new ServiceError('method_not_allowed', msg);
  });
  router.post(endpoint, async (ctx) => {
    limit(ctx, 'public_low');
    const body = await readJsonBody(ctx.req, ctx.state.client);
    const { mod, mcp } = await mcpModule();
    const headers = new Headers();
    for (const [k, v] of Object.entries(ctx.req.headers)) if (typeof v === 'string') headers.set(k, v);
    headers.set('content-type', 'application/json');
    // the tools' per-address quotas (sandbox) and the core's QUOTE idempotency scope key on this;
    // a client cannot set it (overwritten here)
    headers.set(mod.MCP_CLIENT_HEADER, ctx.state.client);
    const req = new Request(`http://gateway${ctx.path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const res = await mcp.fetch(req, { parsedBody: body });
    // a notification is 202 with no body (MCP Streamable HTTP): an empty body, not Koa's null → 204
    ctx.body = Buffer.from(await res.arrayBuffer());
    ctx.status = res.status;
    ctx.remove('Content-Type');
    res.headers.forEach((v, k) => { if (k !== 'content-length' && k !== 'transfer-encoding') ctx.set(k, v); });
  });
  const metadata = publicRoute('mcpMetadata');
  for (const r of PUBLIC_ROUTES.filter((x) => x.id === metadata.id || x.aliasOf === metadata.id)) {
    router.get(r.path, async (ctx) => {
      limit(ctx, 'public_low'); // CORS: embed-routes.ts, like every public document's
      // the paid tools are listed where the endpoint offers them (x402 on), read from the same facts
      const x402 = await docs.facts().then((f) => f.x402, () => null);
      const { mod } = await mcpModule();
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = mod.mcpMetadata(baseUrl().replace(/\/+$/, ''), x402);
    });
  }
  return () => { void loaded?.then(({ mcp }) => mcp.close()); };
}
