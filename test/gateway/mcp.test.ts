// The MCP endpoint with real clients of both eras: the 1.x SDK (initialize handshake, 2025
// revisions) and the v2 client (2026-07-28, stateless), over real HTTP to svcd, plus raw JSON-RPC.
// Tools carry the registry's schemas; answers are plain JSON in both eras; GET /mcp is 405.
import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { MCP_PAID_TOOLS, MCP_PROTOCOL_VERSIONS, MCP_RESOURCES, MCP_TOOLS, quoteTool } from '../../src/gateway/mcp.ts';
import { quoteBodySchema } from '../../src/protocol/schemas.ts';
import { MCP_PAID_TOOL_NAMES, MCP_RESOURCE_NAMES, MCP_TOOL_NAMES, SERVICES } from '../../src/protocol/services.ts';
import { commandSpec } from '../../src/protocol/registry.ts';
import { sharedSvcd } from '../support/start-svcd.ts';

const s = sharedSvcd(test, { SVC_RATE_PUBLIC_LOW: '10000/60' });
let base: string;
test.before(() => { base = s.ready.http!; });

const structured = (r: any) => r.structuredContent ?? JSON.parse(r.content[0].text);
const propsOf = (name: string) => (commandSpec(name)!.args as { properties: Record<string, any> }).properties;

const CLIENTS = [
  ['1.x SDK (2025 revisions, initialize)', async () => {
    const c = new ClientV1({ name: 'test-v1', version: '1.0.0' });
    await c.connect(new TransportV1(new URL(`${base}/mcp`)));
    return c as any;
  }],
  ['v2 client (2026-07-28, stateless)', async () => {
    const c = new ClientV2({ name: 'test-v2', version: '2.0.0' });
    await c.connect(new TransportV2(new URL(`${base}/mcp`)));
    return c as any;
  }],
] as const;

for (const [era, make] of CLIENTS) {
  test.serial(`MCP ${era}: tools carry the registry's schemas; structuredContent matches outputSchema`, async (t) => {
    const c = await make();
    t.teardown(() => c.close());
    t.not(c.getServerCapabilities()?.tools?.listChanged, true, 'a stateless server never sends list_changed');
    const tools = (await c.listTools()).tools as any[];
    t.deepEqual(tools.map((x) => x.name).sort(), [...MCP_TOOLS].sort());
    t.deepEqual(MCP_TOOLS, MCP_TOOL_NAMES, 'the names the discovery documents publish');
    t.deepEqual(MCP_PAID_TOOLS, MCP_PAID_TOOL_NAMES);
    t.false(tools.some((x) => MCP_PAID_TOOLS.includes(x.name)), 'x402 off: no paid tool is offered');
    t.deepEqual(MCP_RESOURCES, MCP_RESOURCE_NAMES);
    const ajv = new Ajv2020({ strict: false });
    const outputs = new Map<string, (v: unknown) => boolean>();
    for (const tool of tools) {
      t.true(typeof tool.title === 'string' && tool.title.length > 3, `${tool.name} title`);
      t.true(typeof tool.description === 'string' && tool.description.length > 10, `${tool.name} description`);
      t.is(tool.inputSchema.type, 'object', `${tool.name} inputSchema`);
      t.is(tool.outputSchema?.type, 'object', `${tool.name} outputSchema`);
      outputs.set(tool.name, ajv.compile(tool.outputSchema));
    }
    const byName = new Map(tools.map((x) => [x.name, x]));
    // a generic client fills a form from the top-level properties: no tool hides a field in a branch
    for (const tool of tools) {
      for (const k of ['allOf', 'oneOf', 'if', 'then']) t.false(k in tool.inputSchema, `${tool.name} has ${k}`);
    }
    // one quote tool per service, its body the registry's own (the HTTP route's), without what MCP does not take
    for (const svc of SERVICES) {
      const quoteIn = byName.get(quoteTool(svc.service)).inputSchema;
      const body = quoteBodySchema(svc.service).properties as Record<string, unknown>;
      const taken = Object.keys(body).filter((k) => k !== 'idempotency_key');
      t.deepEqual(Object.keys(quoteIn.properties).sort(), taken.sort(), svc.service);
      for (const k of taken) t.deepEqual(quoteIn.properties[k], body[k], `${quoteTool(svc.service)}.${k}`);
    }
    t.deepEqual(byName.get('svc_verify_receipt').inputSchema.properties, propsOf('VERIFY_RECEIPT'));
    t.deepEqual(byName.get('svc_hello').inputSchema.properties, propsOf('HELLO'));
    t.is(byName.get('svc_sandbox_pulse').inputSchema.properties.bits.default, 65536, 'the sandbox\'s HTTP default');

    const call = async (name: string, args: Record<string, unknown>) => {
      const r = await c.callTool({ name, arguments: args });
      t.falsy(r.isError, `${name}: ${JSON.stringify(r.content)}`);
      const v = structured(r);
      t.true(outputs.get(name)!(v), `${name} structuredContent matches its outputSchema`);
      return v;
    };
    t.is((await call('svc_caps', {})).capability_count, 21);
    t.is((await call('svc_hello', { nonce: 'mcp-nonce-1' })).edge_proof.statement.nonce, 'mcp-nonce-1');
    const quoted = await call('svc_quote_get_pulse', { machine_id: 'mcp-agent', bits: 256 });
    t.like(quoted, { state: 'issued', service: 'get-pulse', bits: 256 });
    t.like(await call('svc_quote_make_bct', { machine_id: 'mcp-agent', plain_hex: 'aabb' }), { bytes: 2 });
    t.regex((await call('svc_pricebook', {})).pricebook, /price_book=competitive_v6/);
    const small = await call('svc_sandbox_pulse', { bits: 256 });
    t.is(small.output_hex.length, 64);
    t.true(small.sandbox);
    t.is((await call('svc_sandbox_pulse', {})).output_hex.length, 16384, 'unasked, the contract\'s 65,536 bits');

    // resources: the manifest, the pricebook and the node keys, each the document its URI serves
    const resources = (await c.listResources()).resources as any[];
    t.deepEqual(resources.map((r) => r.name).sort(), [...MCP_RESOURCES].sort());
    for (const r of resources) {
      t.true(r.uri.startsWith(base), r.uri);
      const read = await c.readResource({ uri: r.uri });
      const served = await (await fetch(r.uri)).text();
      const text = read.contents[0].text as string;
      t.is(read.contents[0].mimeType, r.mimeType);
      if (r.mimeType === 'application/json') t.deepEqual(JSON.parse(text), JSON.parse(served), r.name);
      else t.is(text, served, r.name);
    }
    const missing = { machine_id: 'mcp-agent', receipt_id: 'rcpt_missing' };
    const bad = await c.callTool({ name: 'svc_verify_receipt', arguments: missing });
    t.true(bad.isError);
    t.regex(bad.content[0].text, /not_found/);
    const tooBig = await c.callTool({ name: 'svc_sandbox_pulse', arguments: { bits: 65537 } }).catch((e: Error) => e);
    t.true(tooBig instanceof Error || tooBig.isError === true, 'the registry\'s bounds are enforced');
    const paid = { machine_id: 'mcp-agent', quote_id: quoted.quote_id };
    const unoffered = await c.callTool({ name: MCP_PAID_TOOLS[0], arguments: paid }).catch((e: Error) => e);
    t.true(unoffered instanceof Error || unoffered.isError === true, 'x402 off: a paid tool is not there to call');
  });
}

const rawPost = (headers: Record<string, string>, body: unknown) => fetch(`${base}/mcp`, {
  method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
});
const initialize = (id: number) => ({
  jsonrpc: '2.0', id, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

test.serial('2025 era, raw JSON-RPC: plain JSON whenever the client accepts it (never an SSE stream)', async (t) => {
  for (const accept of ['application/json, text/event-stream', 'application/json', '*/*']) {
    const r = await rawPost({ accept }, initialize(1));
    t.is(r.status, 200, accept);
    t.is(r.headers.get('content-type')?.split(';')[0], 'application/json', accept);
    const body = await r.json() as any;
    t.is(body.result.protocolVersion, '2025-11-25');
    t.not(body.result.capabilities.tools?.listChanged, true);
  }
  const sseOnly = await rawPost({ accept: 'text/event-stream' }, initialize(1));
  t.is(sseOnly.status, 406, 'an Accept without JSON is told the one form this endpoint answers in');
  t.is(sseOnly.headers.get('content-type')?.split(';')[0], 'application/json');
  const call = await rawPost({ accept: 'application/json', 'mcp-protocol-version': '2025-06-18' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'svc_caps', arguments: {} } });
  t.is(call.status, 200);
  t.is(call.headers.get('content-type')?.split(';')[0], 'application/json');
  t.is(((await call.json()) as any).result.structuredContent.capability_count, 21);
  const note = await rawPost({ accept: 'application/json', 'mcp-protocol-version': '2025-11-25' },
    { jsonrpc: '2.0', method: 'notifications/initialized' });
  t.is(note.status, 202, 'a notification is accepted with 202 (Streamable HTTP), not 204');
  t.is(await note.text(), '');
});

const modernMeta = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const modernHeaders = (method: string, name?: string) => ({
  accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method,
  ...(name ? { 'mcp-name': name } : {}),
});

test.serial('2026-07-28, raw JSON-RPC: per-request _meta, no session, plain JSON', async (t) => {
  const r = await rawPost(modernHeaders('tools/call', 'svc_caps'),
    { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'svc_caps', arguments: {}, _meta: modernMeta } });
  t.is(r.status, 200);
  t.is(r.headers.get('mcp-session-id'), null, 'stateless: no session');
  t.is(r.headers.get('content-type')?.split(';')[0], 'application/json');
  const body = await r.json() as any;
  t.is(body.result.structuredContent.capability_count, 21);
});

test.serial('server/discover lists every protocol version served and announces no listChanged', async (t) => {
  const r = await rawPost(modernHeaders('server/discover'),
    { jsonrpc: '2.0', id: 3, method: 'server/discover', params: { _meta: modernMeta } });
  t.is(r.status, 200);
  t.is(r.headers.get('content-type')?.split(';')[0], 'application/json');
  const body = await r.json() as any;
  t.deepEqual(body.result.supportedVersions, [...MCP_PROTOCOL_VERSIONS]);
  t.not(body.result.capabilities.tools?.listChanged, true);
  // each listed 2025 revision is really served: initialize with it is answered with it
  for (const v of MCP_PROTOCOL_VERSIONS.filter((x) => x < '2026')) {
    const init = await rawPost({ accept: 'application/json, text/event-stream' },
      { ...initialize(4), params: { ...initialize(4).params, protocolVersion: v } });
    t.is(((await init.json()) as any).result.protocolVersion, v);
  }
});

test.serial('GET /mcp is 405 with Allow; /.well-known/mcp describes the endpoint', async (t) => {
  const r = await fetch(`${base}/mcp`);
  t.is(r.status, 405);
  t.is(r.headers.get('allow'), 'POST');
  t.is(((await r.json()) as any).error.code, 'method_not_allowed');
  for (const p of ['/.well-known/mcp', '/.well-known/mcp.json', '/.well-known/svc/mcp.json']) {
    const m = await (await fetch(base + p)).json() as any;
    t.is(m.endpoint, `${base}/mcp`);
    t.deepEqual(m.tools, [...MCP_TOOLS]);
    t.deepEqual(m.protocol_versions, [...MCP_PROTOCOL_VERSIONS]);
    t.true(m.stateless);
    t.false('x402' in m, 'x402 off: no paid tools to describe');
  }
});

test.serial('svcd prints no library warnings on stderr (started, and after MCP calls in both eras)', (t) => {
  t.is(s.stderr, '');
});
