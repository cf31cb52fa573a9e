// x402 over MCP (x402's MCP transport, version 2, tool-result binding) against svcd with x402 on, anvil and the
// USDC port, with the real MCP SDK clients of both eras: the paid tools are listed; a call without a payment
// answers isError with the PaymentRequired; the same call with the PaymentPayload in _meta["x402/payment"]
// runs, with the settlement in the result's _meta["x402/payment-response"]; the money moves once; a refused
// payment answers fresh requirements with x402's reason, and a claimed machine_id wants its token.
import test from 'ava';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { MCP_PAID_TOOLS, MCP_TOOLS, X402_PAYMENT_META, X402_PAYMENT_RESPONSE_META } from '../../src/gateway/mcp.ts';
import { commandSpec } from '../../src/protocol/registry.ts';
import { MCP_PAID_TOOL_NAMES } from '../../src/protocol/services.ts';
import type { PaymentPayload, PaymentRequired } from '../../src/protocol/x402.ts';
import { fundMachine } from '../support/svcd.ts';
import { HELD, NETWORK, PAYERS, auditOf, signPayment, startChain, startSvcd } from './harness.ts';

const CLIENTS = [
  ['1.x SDK (2025 revisions)', async (url: URL) => {
    const c = new ClientV1({ name: 'x402-v1', version: '1.0.0' });
    await c.connect(new TransportV1(url));
    return c as any;
  }],
  ['v2 client (2026-07-28)', async (url: URL) => {
    const c = new ClientV2({ name: 'x402-v2', version: '2.0.0' });
    await c.connect(new TransportV2(url));
    return c as any;
  }],
] as const;

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** The PaymentPayload an x402 client sends over MCP: the object the PAYMENT-SIGNATURE header is base64 of. */
const payloadOf = (header: string) => JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PaymentPayload;

test('x402 over MCP, both eras: 402-shaped result, then the paid result with its settlement; money moved once',
  async (t) => {
    const chain = await startChain(t);
    const s = await startSvcd(t, chain);
    const url = new URL(`${s.ready.http}/mcp`);
    const payer = chain.anvil.account(PAYERS[0]!).address;
    let spent = 0n;
    for (const [era, make] of CLIENTS) {
      const c = await make(url);
      t.teardown(() => c.close());
      const tools = (await c.listTools()).tools as any[];
      t.deepEqual(tools.map((x) => x.name), [...MCP_TOOLS, ...MCP_PAID_TOOLS], `${era}: the paid tools, x402 on`);
      t.deepEqual(MCP_PAID_TOOLS, MCP_PAID_TOOL_NAMES, 'the names the discovery documents publish');
      const exec = tools.find((x) => x.name === 'svc_execute_get_pulse');
      const args = commandSpec('GET_PULSE')!.args.properties as Record<string, unknown>;
      t.deepEqual(Object.keys(exec.inputSchema.properties).sort(),
        Object.keys(args).filter((k) => k !== 'idempotency_key').sort(), 'the registry\'s execution arguments');

      const machine = `mcp-x402-${CLIENTS.findIndex(([e]) => e === era)}`;
      const quote = await c.callTool({
        name: 'svc_quote_get_pulse', arguments: { machine_id: machine, bits: 256, max_output: 64 },
      });
      const q = quote.structuredContent as { quote_id: string; quote_units: number };
      const call = { name: 'svc_execute_get_pulse', arguments: { machine_id: machine, quote_id: q.quote_id } };

      // unpaid: the PaymentRequired, as structuredContent and as the JSON text of content[0]
      const unpaid = await c.callTool(call);
      t.true(unpaid.isError, era);
      const required = unpaid.structuredContent as PaymentRequired;
      t.deepEqual(JSON.parse(unpaid.content[0].text), required, 'content[0].text is the same PaymentRequired');
      const amount = BigInt(Math.ceil(q.quote_units / 100));
      t.like(required, { x402Version: 2, resource: { url: 'mcp://tool/svc_execute_get_pulse' } });
      t.like(required.accepts[0], {
        scheme: 'exact', network: NETWORK, amount: amount.toString(), payTo: chain.payTo.toLowerCase(),
        extra: { quote_id: q.quote_id },
      });
      t.is(unpaid._meta?.[X402_PAYMENT_RESPONSE_META], undefined, 'nothing settled');

      // paid: the PaymentPayload as a plain object in _meta; the settlement in the result's _meta
      const payment = payloadOf(await signPayment(chain, PAYERS[0]!, required.accepts[0]!));
      const paid = await c.callTool({ ...call, _meta: { [X402_PAYMENT_META]: payment } });
      t.falsy(paid.isError, JSON.stringify(paid.content));
      const result = paid.structuredContent as Record<string, any>;
      t.like(result, { quote_id: q.quote_id, units_charged: q.quote_units, service: 'get-pulse' });
      t.is(result.output_hex.length, 64);
      const settled = paid._meta?.[X402_PAYMENT_RESPONSE_META];
      t.like(settled, { success: true, network: NETWORK, payer: payer.toLowerCase() });
      t.regex(settled.transaction, /^0x[0-9a-f]{64}$/);
      t.is(result.payment.transaction, settled.transaction, 'the result names the payment it settled');
      spent += amount;
      t.is(await chain.anvil.balanceOf(payer), HELD - spent, `${era}: paid once`);

      // the same payment again: the first result, nothing moved again
      const again = await c.callTool({ ...call, _meta: { [X402_PAYMENT_META]: payment } });
      t.falsy(again.isError);
      t.is((again.structuredContent as Record<string, unknown>).receipt_id, result.receipt_id);
      t.is(again._meta?.[X402_PAYMENT_RESPONSE_META]?.transaction, settled.transaction);
      t.is(await chain.anvil.balanceOf(payer), HELD - spent, `${era}: a replay pays nothing`);
    }
    t.is(await chain.anvil.balanceOf(chain.payTo), spent);

    // a payment that does not pay the quote: fresh requirements with x402's reason; nothing moved
    const c = await CLIENTS[1][1](url);
    t.teardown(() => c.close());
    const quote = await c.callTool({
      name: 'svc_quote_get_pulse', arguments: { machine_id: 'mcp-x402-poor', bits: 256, max_output: 64 },
    });
    const quoteId = (quote.structuredContent as { quote_id: string }).quote_id;
    const call = { name: 'svc_execute_get_pulse', arguments: { machine_id: 'mcp-x402-poor', quote_id: quoteId } };
    const req = ((await c.callTool(call)).structuredContent as PaymentRequired).accepts[0]!;
    const unfunded = payloadOf(await signPayment(chain, 6, req)); // account 6 holds no token
    const broke = await c.callTool({ ...call, _meta: { [X402_PAYMENT_META]: unfunded } });
    t.true(broke.isError);
    t.like(broke.structuredContent, { x402Version: 2, error: 'insufficient_funds', accepts: [{ amount: req.amount }] });
    const junk = await c.callTool({ ...call, _meta: { [X402_PAYMENT_META]: 'not a payment' } });
    t.like(junk.structuredContent, { error: 'invalid_payload' }, 'the core judges what came');
    // as an x402 client without an MCP SDK sends it: raw JSON-RPC, 2026-07-28
    const raw = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json', accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': call.name,
      },
      body: JSON.stringify({
        jsonrpc: '2.0', id: 7, method: 'tools/call', params: { ...call, _meta: MODERN_META },
      }),
    });
    const rpc = await raw.json() as { result: Record<string, any> };
    t.like(rpc.result, { isError: true, resultType: 'complete', structuredContent: { x402Version: 2 } });
    t.deepEqual(JSON.parse(rpc.result.content[0].text), rpc.result.structuredContent);

    // a machine_id claimed by a token is not anyone's to pay for over MCP (no token here): the contract's 401
    await fundMachine(s, 'mcp-funded', 1_000_000);
    const funded = await c.callTool({
      name: 'svc_quote_get_pulse', arguments: { machine_id: 'mcp-funded', bits: 256, max_output: 64 },
    });
    const claimed = await c.callTool({
      name: 'svc_execute_get_pulse',
      arguments: { machine_id: 'mcp-funded', quote_id: (funded.structuredContent as { quote_id: string }).quote_id },
    });
    t.true(claimed.isError);
    t.regex(claimed.content[0].text, /^error unauthorized: .*claimed/);

    // discoverable: /.well-known/mcp lists the paid tools and how they are paid; the agent card names x402
    const meta = await (await fetch(`${s.ready.http}/.well-known/mcp`)).json() as Record<string, any>;
    t.deepEqual(meta.tools, [...MCP_TOOLS, ...MCP_PAID_TOOLS]);
    t.like(meta.x402, { paid_tools: [...MCP_PAID_TOOLS], scheme: 'exact', networks: [NETWORK] });
    const card = await (await fetch(`${s.ready.http}/.well-known/agent-card.json`)).json() as Record<string, any>;
    t.deepEqual(card.authentication.schemes, ['bearer', 'x402']);
    t.like(card.payments.x402, { scheme: 'exact' });
    t.like(card.payments.x402.networks[0], { network: NETWORK, pay_to: chain.payTo.toLowerCase() });
    t.is(card.payments.x402.paid_executions.length, 10);

    const audit = await auditOf(s);
    t.true(audit.clean, audit.discrepancies.join('; '));
    t.deepEqual(audit.x402, [{ state: 'executed', network: NETWORK, count: 2, amount: spent.toString() }]);
  });
