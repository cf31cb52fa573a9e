// The MCP endpoint (DESIGN.md §9): stateless MCP over Streamable HTTP that answers plain JSON in
// both protocol eras — 2026-07-28 (per-request _meta, no session, server/discover) through the v2
// server package's createMcpHandler, and the 2025 revisions (the 1.x SDK's initialize) through a
// per-request stateless transport in JSON mode. A whitelist of free tools whose input and output
// schemas are the registry's own and, on a node with x402 on, one paid execution tool per service, paid
// per call by x402's MCP transport (version 2, its tool-result binding). GET /mcp (405) and the HTTP limits
// are mcp-routes.ts's.
import {
  McpServer, WebStandardStreamableHTTPServerTransport, createMcpHandler, fromJsonSchema, isLegacyRequest,
  type JsonSchemaType, type JsonSchemaValidatorResult, type jsonSchemaValidator,
} from '@modelcontextprotocol/server';
import type { Auth } from '../client/client.ts';
import { ServiceError } from '../errors.ts';
import { manifestBytes, nodeDocument } from '../discovery/documents.ts';
import type { X402Info } from '../discovery/node-info.ts';
import { publicRoute } from '../discovery/routes.ts';
import { pricebookText } from '../protocol/pricing.ts';
import { commandSpec } from '../protocol/registry.ts';
import { SERVICES, mcpExecuteTool, mcpQuoteTool } from '../protocol/services.ts';
import { SANDBOX_LIMITS, SANDBOX_RESULTS, SANDBOX_SCHEMAS } from '../protocol/sandbox.ts';
import { obj, quoteBodySchema, result, type Schema } from '../protocol/schemas.ts';
import { compileValidator } from '../protocol/validate.ts';
import { VERSIONS } from '../protocol/versions.ts';
import {
  MAX_PAYMENT_CHARS, X402_VERSION, encodeHeader, settleResponseOf, type PaymentRequired,
} from '../protocol/x402.ts';
import type { CoreCall } from './core-call.ts';
import type { DiscoveryFacts, Facts } from './discovery-facts.ts';

/** Every revision served: the modern one first, then the 2025 ones an initialize can negotiate. */
export const MCP_PROTOCOL_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'] as const;
/** What the tool descriptions suggest for an agent's pulse: 32 bytes of output, small for its context. */
const SMALL_PULSE_BITS = 256;
const MAX_BODY = 1 << 20;

/** Tool arguments and results are checked by the same compiled Ajv validators as HTTP and svc/1 (defaults applied). */
const compiled = new WeakMap<object, (v: Record<string, unknown>) => void>();
const registryValidator: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType) {
    let check = compiled.get(schema);
    if (!check) {
      check = compileValidator(schema as Schema);
      compiled.set(schema, check);
    }
    const run = check;
    return (input: unknown): JsonSchemaValidatorResult<T> => {
      if (!input || typeof input !== 'object' || Array.isArray(input)) {
        return { valid: false, data: undefined, errorMessage: 'expected a JSON object' };
      }
      const data = structuredClone(input) as Record<string, unknown>;
      try {
        run(data);
        return { valid: true, data: data as T, errorMessage: undefined };
      } catch (e) {
        return { valid: false, data: undefined, errorMessage: e instanceof Error ? e.message : String(e) };
      }
    };
  },
};

const argsOf = (command: string) => commandSpec(command)!.args;
const resultOf = (command: string) => commandSpec(command)!.result;

/** A registry schema without the fields MCP does not take. */
function without(schema: Schema, fields: string[]): Schema {
  const properties = Object.fromEntries(Object.entries(schema.properties as Record<string, Schema>)
    .filter(([k]) => !fields.includes(k)));
  return { ...schema, properties, required: ((schema.required ?? []) as string[]).filter((r) => !fields.includes(r)) };
}

/** `client`: the caller's address, on which the sandbox's and the core's per-address quotas are counted. */
interface Deps { core: CoreCall; client: string }
interface ToolDef {
  name: string;
  title: string;
  description: string;
  input: Schema;
  output: Schema;
  readOnly: boolean;
  run: (args: Record<string, unknown>, deps: Deps) => Promise<Record<string, unknown>> | Record<string, unknown>;
}

// idempotency keys are for HTTP and svc/1 retries; an MCP tool call is a single exchange
const TOOL_DEFS: readonly ToolDef[] = [
  {
    name: 'svc_hello', title: 'Protocol greeting',
    description: `${commandSpec('HELLO')!.purpose}: the node's identity and its signed edge proof over your nonce.`,
    input: argsOf('HELLO'), output: resultOf('HELLO'), readOnly: true,
    run: (a, d) => d.core('HELLO', a, d.client),
  },
  {
    name: 'svc_caps', title: 'Capabilities',
    description: `${commandSpec('CAPS')!.purpose}: the ${VERSIONS.capabilityCount} commands`
      + ' with their billing, auth and rate class.',
    input: argsOf('CAPS'), output: resultOf('CAPS'), readOnly: true,
    run: (a, d) => d.core('CAPS', a, d.client),
  },
  {
    name: 'svc_pricebook', title: 'Pricebook',
    description: 'The public pricebook (every coefficient and a price example per service) as key=value lines.',
    input: obj({}), output: result({ pricebook: { type: 'string' } }, ['pricebook']), readOnly: true,
    run: () => ({ pricebook: pricebookText() }),
  },
  ...SERVICES.map((svc): ToolDef => ({
    name: mcpQuoteTool(svc.service), title: `Quote ${svc.service}`,
    description: `${commandSpec('QUOTE')!.purpose} for ${svc.service} (${commandSpec(svc.command)!.purpose}): free`
      + ' and limited, no account needed; accepting and executing it are paid calls on the HTTP API or svc/1.'
      + (svc.service === 'get-pulse' ? ` Ask for few bits (e.g. ${SMALL_PULSE_BITS}) for a small pulse.` : ''),
    // the service's own quote body: flat, every field typed, as the HTTP route /api/v1/quotes/{service} takes it
    input: without(quoteBodySchema(svc.service), ['idempotency_key']), output: resultOf('QUOTE'), readOnly: false,
    run: (a, d) => d.core('QUOTE', { ...a, service: svc.service }, d.client),
  })),
  {
    name: 'svc_verify_receipt', title: 'Verify a receipt',
    description: `${commandSpec('VERIFY_RECEIPT')!.purpose}: the signed receipt, its signature and the node key.`,
    input: argsOf('VERIFY_RECEIPT'), output: resultOf('VERIFY_RECEIPT'), readOnly: true,
    run: (a, d) => d.core('VERIFY_RECEIPT', a, d.client),
  },
  {
    name: 'svc_sandbox_pulse', title: 'Sandbox pulse',
    description: 'Anonymous sandbox GET_PULSE: quote, accept and execute in one call, no account, no settlement.'
      + ` bits as the HTTP sandbox takes them (default ${sandboxBitsDefault()}, up to ${SANDBOX_LIMITS.maxBits});`
      + ` ask for ${SMALL_PULSE_BITS} for a small answer. Returns output_hex and a sandbox receipt_id.`,
    input: SANDBOX_SCHEMAS.quote, output: SANDBOX_RESULTS.execute, readOnly: false,
    run: async (a, d) => {
      const m = a.machine_id as string;
      const req = { machine_id: m, bits: a.bits as number, max_output: a.max_output as number };
      const q = await d.core('SANDBOX_QUOTE', req, d.client);
      const step = { machine_id: m, quote_id: q.quote_id as string };
      await d.core('SANDBOX_ACCEPT', { ...step }, d.client);
      return d.core('SANDBOX_EXECUTE', step, d.client);
    },
  },
];

export const MCP_TOOLS: readonly string[] = TOOL_DEFS.map((t) => t.name);
export const quoteTool = mcpQuoteTool;

/** x402's MCP transport (version 2): the PaymentPayload a tools/call carries, as a JSON object, in params._meta. */
export const X402_PAYMENT_META = 'x402/payment';
/** ...and the SettleResponse a paid result carries in its _meta. */
export const X402_PAYMENT_RESPONSE_META = 'x402/payment-response';

/**
 * What the paid tools reach beyond the free ones: the core with an x402 payment as its auth (the path the
 * HTTP route takes), and the paid_execution window of the caller's address, counted as HTTP counts a caller
 * without a token (throws rate_limited).
 */
export interface PaidCalls {
  call(
    cmd: string, args: Record<string, unknown>, auth: Auth | undefined, client: string,
  ): Promise<Record<string, unknown>>;
  limit(client: string): void;
}

interface PaidToolDef {
  name: string;
  title: string;
  description: string;
  command: string;
  input: Schema;
  output: Schema;
}

/** x402's PaymentRequired (version 2): the fields an x402 client reads from a paid tool's isError answer. */
const PAYMENT_REQUIRED_SCHEMA: Schema = result({
  x402Version: { type: 'integer', const: X402_VERSION }, error: { type: 'string' }, resource: { type: 'object' },
  accepts: { type: 'array', items: { type: 'object' } },
}, ['x402Version', 'resource', 'accepts']);

/**
 * A paid tool's outputSchema: its execution's result, or the PaymentRequired. MCP clients that check
 * structuredContent against the outputSchema on isError answers too (the 1.x SDK's does) would otherwise
 * refuse the very answer x402's MCP transport asks for.
 */
const paidOutput = (command: string): Schema => ({
  type: 'object', anyOf: [resultOf(command), PAYMENT_REQUIRED_SCHEMA],
  description: 'the execution\'s result; with isError, x402\'s PaymentRequired: what to pay for it',
});

// One per service, each its registry execution's arguments (less the idempotency key: a paid execution sent
// again with the same payment answers its first result anyway) and result. There is no token to send over MCP:
// these pay per call, for a machine_id no token has claimed.
const PAID_TOOL_DEFS: readonly PaidToolDef[] = SERVICES.map((svc) => {
  const spec = commandSpec(svc.command)!;
  return {
    name: mcpExecuteTool(svc.service), title: `Execute ${svc.service} (paid with x402)`, command: spec.name,
    description: `${spec.purpose}: the paid execution of a quote from ${mcpQuoteTool(svc.service)}, paid per call`
      + ' with x402 version 2. Called without a payment it answers isError with the PaymentRequired (the price'
      + ' of the quote) as structuredContent; call it again with the signed PaymentPayload in'
      + ` _meta["${X402_PAYMENT_META}"] and the result carries the settlement in`
      + ` _meta["${X402_PAYMENT_RESPONSE_META}"]. Use a machine_id of your own: one claimed by a machine token`
      + ' is paid with that token, over HTTP or svc/1.',
    input: without(argsOf(svc.command), ['idempotency_key']), output: paidOutput(svc.command),
  };
});

export const MCP_PAID_TOOLS: readonly string[] = PAID_TOOL_DEFS.map((t) => t.name);

function sandboxBitsDefault(): number {
  return ((SANDBOX_SCHEMAS.quote.properties as Record<string, Schema>).bits as { default: number }).default;
}

// converted once: the validators compile once per schema object
const withSchemas = <T extends { input: Schema; output: Schema }>(t: T) => ({
  ...t,
  inputSchema: fromJsonSchema<Record<string, unknown>>(t.input as JsonSchemaType, registryValidator),
  outputSchema: fromJsonSchema<Record<string, unknown>>(t.output as JsonSchemaType, registryValidator),
});
const TOOLS = TOOL_DEFS.map(withSchemas);
const PAID_TOOLS = PAID_TOOL_DEFS.map(withSchemas);

const failure = (e: unknown) => {
  const err = e instanceof Error ? e : new Error(String(e));
  const tagged = e as { inner?: ServiceError; code?: string };
  const code = tagged.inner?.code ?? tagged.code ?? 'internal';
  return { content: [{ type: 'text' as const, text: `error ${code}: ${err.message}` }], isError: true };
};

/** What the resources are read from: the discovery documents' facts, and where they are published. */
export type McpDocs = Pick<DiscoveryFacts, 'site' | 'facts'>;

interface ResourceDef {
  name: string;
  /** the public route the same document is served at: its URL is the resource's URI */
  route: string;
  title: string;
  description: string;
  mimeType: string;
  read: (f: Facts) => string;
}

const RESOURCES: readonly ResourceDef[] = [
  {
    name: 'manifest', route: 'manifest', title: 'Public manifest', mimeType: 'application/json',
    description: 'The node\'s signed-off public facts: keys, edge certificate, versions, limits, payment rails.',
    read: (f) => manifestBytes(f.node, f.site).toString('utf8'),
  },
  {
    name: 'pricebook', route: 'pricebookText', title: 'Pricebook', mimeType: 'text/plain',
    description: 'Every price coefficient and an example per service, as key=value lines.',
    read: () => pricebookText(),
  },
  {
    name: 'node-keys', route: 'node', title: 'Node keys', mimeType: 'application/json',
    description: 'The node id and its Ed25519 keys (current and past, with their windows): what receipts verify by.',
    read: (f) => `${JSON.stringify(nodeDocument(f.node, f.site), null, 2)}\n`, // the bytes its route serves
  },
];

export const MCP_RESOURCES: readonly string[] = RESOURCES.map((r) => r.name);

function registerResources(server: McpServer, docs: McpDocs): void {
  const base = docs.site().base_url;
  for (const r of RESOURCES) {
    const uri = `${base}${publicRoute(r.route).path}`;
    server.registerResource(r.name, uri, { title: r.title, description: r.description, mimeType: r.mimeType },
      async (u) => ({ contents: [{ uri: u.href, mimeType: r.mimeType, text: r.read(await docs.facts()) }] }));
  }
}

/** The paid tools, when offered: how to call the core for them, and the node's x402 (PAYMENT_INFO's). */
export interface PaidTools { calls: PaidCalls; x402: X402Info }

const INSTRUCTIONS = 'svc: metered computation and proof. These tools are free: discovery, quotes, receipt verification'
  + ' and an anonymous sandbox pulse. Paid executions go through the HTTP API (/openapi.json) or svc/1 with a'
  + ' machine token.';

export function buildMcpServer(core: CoreCall, client = 'unknown', docs?: McpDocs, paid?: PaidTools | null): McpServer {
  const server = new McpServer({ name: 'svc', version: VERSIONS.mcpServer }, {
    instructions: paid ? `${INSTRUCTIONS} The svc_execute_* tools run them here too, each call paid with x402`
      + ` (${paid.x402.scheme} on ${paid.x402.networks.map((n) => n.network).join(' or ')}): quote first, call`
      + ' without a payment to learn its price.'
      : INSTRUCTIONS,
    // stateless: every request meets a fresh server, so there is never a list change to announce
    capabilities: { tools: { listChanged: false }, ...(docs ? { resources: { listChanged: false } } : {}) },
    supportedProtocolVersions: [...MCP_PROTOCOL_VERSIONS],
  });
  if (docs) registerResources(server, docs);
  for (const t of TOOLS) {
    server.registerTool(t.name, {
      title: t.title, description: t.description, inputSchema: t.inputSchema, outputSchema: t.outputSchema,
      annotations: { title: t.title, readOnlyHint: t.readOnly, idempotentHint: t.readOnly, openWorldHint: false },
    }, async (args) => {
      try {
        const v = await t.run(args, { core, client });
        return { content: [{ type: 'text' as const, text: JSON.stringify(v, null, 2) }], structuredContent: v };
      } catch (e) {
        return failure(e);
      }
    });
  }
  if (paid) registerPaidTools(server, paid.calls, client);
  return server;
}

function registerPaidTools(server: McpServer, calls: PaidCalls, client: string): void {
  for (const t of PAID_TOOLS) {
    server.registerTool(t.name, {
      title: t.title, description: t.description, inputSchema: t.inputSchema, outputSchema: t.outputSchema,
      // not idempotent: a call with a new payment pays again (the same payment sent again answers its first result)
      annotations: { title: t.title, readOnlyHint: false, idempotentHint: false, openWorldHint: true },
    }, async (args, ctx) => {
      try {
        calls.limit(client);
        const payment = (ctx.mcpReq._meta as Record<string, unknown> | undefined)?.[X402_PAYMENT_META];
        const auth: Auth | undefined = payment === undefined ? undefined
          : { machine_id: args.machine_id as string, payment: asHeader(payment) };
        const v = await calls.call(t.command, args, auth, client);
        const settled = settleResponseOf(v);
        return {
          content: [{ type: 'text' as const, text: JSON.stringify(v, null, 2) }], structuredContent: v,
          ...(settled ? { _meta: { [X402_PAYMENT_RESPONSE_META]: settled } } : {}),
        };
      } catch (e) {
        const required = paymentRequiredOf(e, t.name);
        // x402's MCP transport: the requirements (fresh, with the reason when a payment was refused) as the result
        if (required) {
          const text = JSON.stringify(required);
          return { isError: true, structuredContent: { ...required }, content: [{ type: 'text' as const, text }] };
        }
        return failure(e);
      }
    });
  }
}

/**
 * The payment as the HTTP route passes it on: the PAYMENT-SIGNATURE header's base64 of JSON. Whatever came is
 * encoded as it is: the core decides whether it is a payment (a refusal comes back as a 402 with its reason).
 */
function asHeader(payment: unknown): string {
  const encoded = encodeHeader(payment as object);
  if (encoded.length > MAX_PAYMENT_CHARS) {
    throw new ServiceError('invalid_request', `_meta["${X402_PAYMENT_META}"] exceeds ${MAX_PAYMENT_CHARS} characters`);
  }
  return encoded;
}

/** The core's 402 (payment_required, payment_invalid, payment_failed): its PaymentRequired, for this tool. */
function paymentRequiredOf(e: unknown, tool: string): PaymentRequired | null {
  const pr = (e as { inner?: ServiceError }).inner?.details?.payment_required as PaymentRequired | undefined;
  // the core names the HTTP route; here the resource is the tool (x402's MCP transport names it so)
  return pr ? { ...pr, resource: { ...pr.resource, url: `mcp://tool/${tool}` } } : null;
}

/** RFC 9110 §12.5.1: does Accept allow application/json? The most specific matching range decides; none means any. */
export function acceptsJson(accept: string | null): boolean {
  if (!accept?.trim()) return true;
  let best: { rank: number; q: number } | null = null;
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    const rank = range === 'application/json' ? 3 : range === 'application/*' ? 2 : range === '*/*' ? 1 : 0;
    if (!rank || (best && best.rank >= rank)) continue;
    const q = params.find((p) => p.startsWith('q='));
    best = { rank, q: q ? Number(q.slice(2)) : 1 };
  }
  return best !== null && best.q > 0;
}

const jsonRpcError = (status: number, message: string) => Response.json(
  { jsonrpc: '2.0', error: { code: -32000, message }, id: null }, { status },
);

/** The header mcp-routes.ts sets on the requests it forwards: the client's address (never what the client wrote). */
export const MCP_CLIENT_HEADER = 'x-svc-client';

/** The endpoint mcp-routes.ts mounts: fetch(Request, { parsedBody }) → Response, and close(). */
export interface McpEndpoint {
  fetch(request: Request, options?: { parsedBody?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

/**
 * `paid`: the paid tools' calls. They are offered only where the node facts show x402 on (PAYMENT_INFO's x402,
 * cached a minute by discovery-facts.ts), rather than always listed and refused elsewhere: a tool an agent
 * sees should be one it can call, and the x402 transport's first answer (the PaymentRequired) exists only on
 * such a node. Facts that cannot be had (the core down) offer the free tools alone.
 */
export function createMcpEndpoint(
  core: CoreCall, onerror: (e: Error) => void, docs?: McpDocs, paid?: PaidCalls,
): McpEndpoint {
  // the gateway sets this header (the caller's rate-limit key) on every request it forwards
  const clientOf = (r: Request | undefined) => r?.headers.get(MCP_CLIENT_HEADER) ?? 'unknown';
  const paidTools = async (): Promise<PaidTools | null> => {
    if (!paid || !docs) return null;
    const x402 = await docs.facts().then((f) => f.x402, () => null);
    return x402 ? { calls: paid, x402 } : null;
  };
  const factory = async (c: { requestInfo?: Request }) =>
    buildMcpServer(core, clientOf(c.requestInfo), docs, await paidTools());
  // 2026-07-28 with responseMode 'auto' answers one JSON body unless a tool emits a message before
  // its result, which ours never do; 'json' would say the same and print a warning at every start
  const modern = createMcpHandler(factory, { legacy: 'reject', maxRequestBodySize: MAX_BODY, onerror });

  // 2025 revisions: the SDK's stateless fallback always streams (SSE); the same transport in JSON
  // mode answers one JSON body. Content negotiation happened above, so its Accept check is satisfied.
  const legacy = async (request: Request, parsedBody: unknown): Promise<Response> => {
    const server = buildMcpServer(core, clientOf(request), docs, await paidTools());
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: MAX_BODY,
    });
    transport.onerror = onerror;
    await server.connect(transport);
    const headers = new Headers(request.headers);
    headers.set('accept', 'application/json, text/event-stream');
    const body = parsedBody === undefined ? await request.text() : null;
    try {
      const forwarded = new Request(request.url, { method: request.method, headers, body });
      return await transport.handleRequest(forwarded, parsedBody === undefined ? {} : { parsedBody });
    } finally {
      void transport.close();
      void server.close();
    }
  };

  return {
    async fetch(request, options = {}) {
      if (!acceptsJson(request.headers.get('accept'))) {
        return jsonRpcError(406, 'Not Acceptable: this stateless endpoint answers application/json only');
      }
      const { parsedBody } = options;
      const isLegacy = await isLegacyRequest(request, parsedBody, { maxRequestBodySize: MAX_BODY });
      if (isLegacy) return legacy(request, parsedBody);
      const res = await modern.fetch(request, parsedBody === undefined ? {} : { parsedBody });
      return isDiscover(parsedBody) ? listEveryVersion(res) : res;
    },
    close: () => modern.close(),
  };
}

const isDiscover = (body: unknown) =>
  typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'server/discover';

/**
 * server/discover names every revision this endpoint serves. The SDK lists only the modern ones
 * (2025 revisions are negotiated by initialize), but a client reading discovery should learn that
 * 2025 clients are served here too.
 */
async function listEveryVersion(res: Response): Promise<Response> {
  if (res.status !== 200 || res.headers.get('content-type')?.split(';')[0] !== 'application/json') return res;
  const body = await res.json() as { result?: { supportedVersions?: string[] } };
  if (body.result?.supportedVersions) body.result.supportedVersions = [...MCP_PROTOCOL_VERSIONS];
  const headers = new Headers(res.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify(body), { status: res.status, headers });
}

/**
 * /.well-known/mcp (and aliases): where the endpoint is and what it offers. `x402`: the node's (null: off);
 * with it on, the paid tools are listed too, with how they are paid.
 */
export function mcpMetadata(baseUrl: string, x402: X402Info | null = null): Record<string, unknown> {
  return {
    name: 'svc', version: VERSIONS.mcpServer, endpoint: `${baseUrl}/mcp`, transport: 'streamable-http',
    stateless: true,
    response_mode: 'json', get: '405 (streams are not supported)', protocol_versions: MCP_PROTOCOL_VERSIONS,
    tools: x402 ? [...MCP_TOOLS, ...MCP_PAID_TOOLS] : MCP_TOOLS, resources: MCP_RESOURCES, billing: 'free_limited',
    auth: 'none', rate_class: 'public_low',
    ...(x402 ? {
      x402: {
        paid_tools: MCP_PAID_TOOLS, x402_version: x402.x402_version, scheme: x402.scheme,
        networks: x402.networks.map((n) => n.network),
        transport: `x402 MCP transport: PaymentPayload in params._meta["${X402_PAYMENT_META}"], SettleResponse in`
          + ` result._meta["${X402_PAYMENT_RESPONSE_META}"]`,
        payment: `${baseUrl}${publicRoute('apiPayment').path}`,
      },
    } : {}),
  };
}
