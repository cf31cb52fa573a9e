// The MCP endpoint driven by the MCP Inspector's CLI, unmodified (its own process, on Node 24: it needs
// 22.19 or later), as a person tries a server: list the tools and resources, call every tool with
// `--tool-arg key=value` pairs the Inspector types from each tool's input schema (no JSON written by
// hand), read every resource.
import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { MCP_RESOURCES, MCP_TOOLS } from '../../src/gateway/mcp.ts';
import { INSPECTOR, INSPECTOR_NEED, ltsNode } from '../support/lts-tools.ts';
import { testNeeding } from '../support/needs.ts';
import { startSvcd } from '../support/start-svcd.ts';

const run = promisify(execFile);

/** What each tool is called with: the pairs a person types, taken from the tool's required fields. */
function toolArgs(name: string, schema: { properties: Record<string, { maximum?: number; minimum?: number }> }) {
  const pairs: string[] = [];
  const props = schema.properties;
  if ('machine_id' in props) pairs.push('machine_id=inspector-agent');
  if (name === 'svc_hello') pairs.push('nonce=inspector-nonce-1');
  if ('bits' in props) pairs.push('bits=256');
  if (name === 'svc_verify_receipt') pairs.push('receipt_id=rcpt_missing');
  // a quote of a service that reads input names its size (the schema's anyOf: bytes or the input itself)
  const bytes = props.bytes;
  if (name.startsWith('svc_quote_') && bytes && (bytes.maximum ?? 0) > 0) pairs.push(`bytes=${bytes.minimum ?? 0}`);
  return pairs;
}

testNeeding(test, 'the MCP Inspector CLI lists, calls every tool and reads every resource', INSPECTOR_NEED,
  async (t) => {
    const s = await startSvcd(t);
    const url = `${s.ready.http!}/mcp`;
    // the CLI prints the result as JSON, and exits 5 when a tool answered isError (the result still printed)
    const inspector = async (...args: string[]) => {
      const out = await run(ltsNode(24), [INSPECTOR, '--cli', url, ...args], { timeout: 60_000 })
        .catch((e: { code?: number; stdout?: string }) => {
          if (e.code === 5 && e.stdout) return { stdout: e.stdout };
          throw e;
        });
      return JSON.parse(out.stdout) as Record<string, any>;
    };
    const { tools } = await inspector('--method', 'tools/list');
    t.deepEqual(tools.map((x: any) => x.name).sort(), [...MCP_TOOLS].sort());
    for (const tool of tools) {
      const pairs = toolArgs(tool.name, tool.inputSchema);
      const r = await inspector('--method', 'tools/call', '--tool-name', tool.name,
        ...(pairs.length ? ['--tool-arg', ...pairs] : []));
      const text = r.content[0].text as string;
      if (tool.name === 'svc_verify_receipt') {
        t.true(r.isError, 'a receipt that does not exist');
        t.regex(text, /not_found/);
        continue;
      }
      t.falsy(r.isError, `${tool.name} ${pairs.join(' ')}: ${text}`);
      const v = r.structuredContent ?? JSON.parse(text);
      if (tool.name === 'svc_quote_get_pulse') t.like(v, { state: 'issued', bits: 256 }, 'bits typed as an integer');
      if (tool.name === 'svc_sandbox_pulse') t.is(v.output_hex.length, 64);
    }
    const { resources } = await inspector('--method', 'resources/list');
    t.deepEqual(resources.map((r: any) => r.name).sort(), [...MCP_RESOURCES].sort());
    for (const r of resources) {
      const read = await inspector('--method', 'resources/read', '--uri', r.uri);
      t.is(read.contents[0].text, await (await fetch(r.uri)).text(), `${r.name}: the bytes its URI serves`);
    }
  });
