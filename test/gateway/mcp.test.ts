// The MCP endpoint with real clients of both eras: the 1.x SDK (initialize handshake, 2025
// revisions) and the v2 client (2026-07-28, stateless), over real HTTP to svcd. Both list the same
// whitelisted tools and call them; GET /mcp is 405.
import test from 'ava';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Svcd } from '../support/svcd.ts';
import { MCP_TOOLS } from '../../src/gateway/mcp.ts';

let s: Svcd;
let base: string;
test.before(async () => { s = await Svcd.start({ SVC_RATE_PUBLIC_LOW: '10000/60' }, ['start']); base = s.ready.http!; });
test.after.always(async () => { await s?.stop(); s?.cleanup(); });

const structured = (r: any) => r.structuredContent ?? JSON.parse(r.content[0].text);

for (const [era, make] of [
  ['1.x SDK (2025 revisions, initialize)', async () => { const c = new ClientV1({ name: 'test-v1', version: '1.0.0' }); await c.connect(new TransportV1(new URL(`${base}/mcp`))); return c as any; }],
  ['v2 client (2026-07-28, stateless)', async () => { const c = new ClientV2({ name: 'test-v2', version: '2.0.0' }); await c.connect(new TransportV2(new URL(`${base}/mcp`))); return c as any; }],
] as const) {
  test.serial(`MCP ${era}: lists the whitelisted tools and calls them`, async (t) => {
    const c = await make();
    t.teardown(() => c.close());
    const tools = (await c.listTools()).tools.map((x: { name: string }) => x.name).sort();
    t.deepEqual(tools, [...MCP_TOOLS].sort());
    const caps = structured(await c.callTool({ name: 'svc_caps', arguments: {} }));
    t.is(caps.capability_count, 21);
    const hello = structured(await c.callTool({ name: 'svc_hello', arguments: { nonce: 'mcp-nonce-1' } }));
    t.is(hello.edge_proof.statement.nonce, 'mcp-nonce-1');
    const quote = structured(await c.callTool({ name: 'svc_quote', arguments: { service: 'get-pulse', machine_id: 'mcp-agent', bits: 256 } }));
    t.is(quote.state, 'issued');
    t.regex(structured(await c.callTool({ name: 'svc_pricebook', arguments: {} })).pricebook, /price_book=competitive_v6/);
    const pulse = structured(await c.callTool({ name: 'svc_sandbox_pulse', arguments: { bits: 64 } }));
    t.is(pulse.output_hex.length, 16);
    t.true(pulse.sandbox);
    const bad = await c.callTool({ name: 'svc_verify_receipt', arguments: { machine_id: 'mcp-agent', receipt_id: 'rcpt_missing' } });
    t.true(bad.isError);
    t.regex(bad.content[0].text, /not_found/);
  });
}

test('GET /mcp is 405 with Allow; /.well-known/mcp describes the endpoint', async (t) => {
  const r = await fetch(`${base}/mcp`);
  t.is(r.status, 405);
  t.is(r.headers.get('allow'), 'POST');
  t.is(((await r.json()) as any).error.code, 'method_not_allowed');
  for (const p of ['/.well-known/mcp', '/.well-known/mcp.json', '/.well-known/svc/mcp.json']) {
    const m = await (await fetch(base + p)).json() as any;
    t.is(m.endpoint, `${base}/mcp`);
    t.deepEqual(m.tools, [...MCP_TOOLS]);
    t.true(m.stateless);
  }
});

test('a raw 2026-07-28 request (per-request _meta envelope, no initialize, no session) is served', async (t) => {
  const r = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'svc_caps' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'svc_caps', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
  });
  t.is(r.status, 200);
  t.is(r.headers.get('mcp-session-id'), null, 'stateless: no session');
  const body = await r.json() as any;
  t.is(body.result.structuredContent.capability_count, 21);
});
