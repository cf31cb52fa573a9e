// The MCP endpoint (DESIGN.md §9): stateless MCP over Streamable HTTP with JSON responses,
// exposing a whitelist of free tools — hello, caps, pricebook, quotes, receipt verification and
// the sandbox pulse. One endpoint serves both protocol eras: 2026-07-28 (no initialize, no session,
// server/discover) and the 2025 revisions the 1.x SDK speaks, through the v2 server package's
// createMcpHandler. GET /mcp is 405 (no streams: stateless server).
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ServiceError } from '../errors.ts';
import { pricebookText } from '../protocol/pricing.ts';
import { SERVICE_NAMES } from '../protocol/services.ts';
import { SANDBOX_LIMITS } from '../protocol/sandbox.ts';
import { VERSIONS } from '../protocol/versions.ts';
import type { CoreCall } from './core-call.ts';
import type { Sandbox } from './sandbox.ts';

export const MCP_TOOLS = ['svc_hello', 'svc_caps', 'svc_pricebook', 'svc_quote', 'svc_verify_receipt', 'svc_sandbox_pulse'] as const;
export const MCP_PROTOCOL_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'] as const;

const text = (v: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(v, null, 2) }], structuredContent: v as Record<string, unknown> });
const failure = (e: unknown) => {
  const err = e instanceof Error ? e : new Error(String(e));
  const code = (e as { inner?: ServiceError; code?: string }).inner?.code ?? (e as { code?: string }).code ?? 'internal';
  return { content: [{ type: 'text' as const, text: `error ${code}: ${err.message}` }], isError: true };
};
const guard = async (fn: () => Promise<unknown> | unknown) => { try { return text(await fn()); } catch (e) { return failure(e); } };

export function buildMcpServer(core: CoreCall, sandbox: Sandbox, client = 'unknown'): McpServer {
  const server = new McpServer({ name: 'svc', version: VERSIONS.mcpServer }, { instructions: 'svc: metered computation and proof. These tools are free: discovery, quotes, receipt verification and an anonymous sandbox pulse. Paid executions go through the HTTP API (/openapi.json) or svc/1 with a machine token.' });
  server.registerTool('svc_hello', {
    description: 'Protocol greeting with the node\'s signed edge proof over your nonce.',
    inputSchema: z.object({ nonce: z.string().regex(/^[A-Za-z0-9_-]{8,128}$/).optional() }),
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, async ({ nonce }) => guard(() => core('HELLO', nonce ? { nonce } : {})));
  server.registerTool('svc_caps', {
    description: 'The 21 capabilities with their billing, auth and rate-limit annotations.',
    inputSchema: z.object({}),
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, async () => guard(() => core('CAPS', {})));
  server.registerTool('svc_pricebook', {
    description: 'The public pricebook (competitive_v6) as key=value lines.',
    inputSchema: z.object({}),
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, async () => guard(() => ({ pricebook: pricebookText() })));
  server.registerTool('svc_quote', {
    description: 'A free, limited price and reservation preview for one service (no account needed).',
    inputSchema: z.object({
      service: z.enum(SERVICE_NAMES as [string, ...string[]]),
      machine_id: z.string().min(1).max(128),
      bits: z.number().int().min(1).optional(), bytes: z.number().int().min(0).optional(), max_output: z.number().int().min(0).optional(),
      priority: z.enum(['low', 'normal', 'high']).optional(), quote_ttl_ms: z.number().int().min(1000).optional(),
      plain_hex: z.string().optional(), packet_hex: z.string().optional(),
    }),
    annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
  }, async (a) => guard(() => core('QUOTE', Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)))));
  server.registerTool('svc_verify_receipt', {
    description: 'Verify a receipt for free: returns the signed receipt, the signature and the node key.',
    inputSchema: z.object({ machine_id: z.string().min(1).max(128), receipt_id: z.string().min(1).max(128) }),
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, async (a) => guard(() => core('VERIFY_RECEIPT', a)));
  server.registerTool('svc_sandbox_pulse', {
    description: `Anonymous sandbox GET_PULSE: quote, accept and execute in one call, no settlement (bits 1..${SANDBOX_LIMITS.maxBits}).`,
    inputSchema: z.object({ bits: z.number().int().min(1).max(SANDBOX_LIMITS.maxBits).optional(), machine_id: z.string().min(1).max(128).optional() }),
    annotations: { readOnlyHint: false, openWorldHint: false },
  }, async ({ bits, machine_id }) => guard(() => {
    const m = machine_id ?? 'sandbox_machine';
    const q = sandbox.quote({ machine_id: m, bits: bits ?? SANDBOX_LIMITS.maxBits, max_output: SANDBOX_LIMITS.maxOutputBytes }, client);
    sandbox.accept(q.quote_id as string, m);
    return sandbox.execute(q.quote_id as string, m, client);
  }));
  return server;
}

export function createMcpEndpoint(core: CoreCall, sandbox: Sandbox, onerror: (e: Error) => void) {
  // the gateway sets x-svc-client (the caller's rate-limit key) on every request it forwards
  const factory = (c: { requestInfo?: Request }) =>
    buildMcpServer(core, sandbox, c.requestInfo?.headers.get('x-svc-client') ?? 'unknown');
  return createMcpHandler(factory, { legacy: 'stateless', responseMode: 'json', maxRequestBodySize: 1 << 20, onerror });
}

/** /.well-known/mcp (and aliases): where the endpoint is and what it offers. */
export function mcpMetadata(baseUrl: string): Record<string, unknown> {
  return {
    name: 'svc', version: VERSIONS.mcpServer, endpoint: `${baseUrl}/mcp`, transport: 'streamable-http', stateless: true,
    response_mode: 'json', get: '405 (streams are not supported)', protocol_versions: MCP_PROTOCOL_VERSIONS,
    tools: MCP_TOOLS, billing: 'free_limited', auth: 'none', rate_class: 'public_low',
  };
}
