// Seeded fuzz of a real svcd: a few thousand malformed HTTP requests and about a thousand malformed svc/1 frames
// get 4xx answers or error frames — never a 5xx, an internal error or a hang — and leave it healthy, quiet (no
// error-level log lines) and its ledger whole. Also 50,000-deep JSON, lone surrogates in ids, clients that vanish.
import test, { type ExecutionContext } from 'ava';
import { ERRORS, isErrorCode } from '../../src/errors.ts';
import { DOCUMENT_PATHS } from '../../src/discovery/documents.ts';
import { ALL_COMMANDS, type CommandSpec } from '../../src/protocol/registry.ts';
import { SANDBOX_SCHEMAS } from '../../src/protocol/sandbox.ts';
import type { Schema } from '../../src/protocol/schemas.ts';
import { SERVICE_NAMES } from '../../src/protocol/services.ts';
import { prng, type Prng } from '../helpers.ts';
import { httpFrom } from '../support/http-from.ts';
import { buildHttpRequest, rawHttp, RawLines, sendAndVanish, type RawReply } from '../support/raw-wire.ts';
import { viaEdge } from '../support/registry-call.ts';
import type { Svcd } from '../support/svcd.ts';
import { startSvcd, stopCheckingLedger } from '../support/start-svcd.ts';
import { txRef } from '../support/references.ts';

// the same seed gives the same requests (prng, test/helpers.ts)
const SEED = Number(process.env.SVC_FUZZ_SEED ?? 0x5ec0_2026);
const LIMITS = { SVC_RATE_PUBLIC_LOW: '100000000/60', SVC_RATE_PAID_EXECUTION: '100000000/60' };

// ---- what a request or frame may carry instead of a field's proper value (JSON text, so that lone
// surrogates, 1e999 and 2^53+1 reach the server exactly as written)
const WRONG = [
  'null', 'true', 'false', '0', '-1', '1.5', '-0', '1e308', '-1e308', '1e999', '9007199254740993', '4294967296',
  '""', `"${'x'.repeat(300)}"`, '"\\ud800"', '"a\\udfffb"', '"\\u0000"', '"q_x\\u202e"', '"\\ufeff"', '[]', '[1,"a"]',
  '{}', '{"a":1}', '"1"', '"64"', '" normal"', '"TRON "', `"${'é'.repeat(70)}"`, '[[[[[[[[[[[]]]]]]]]]]]',
];

const nestedArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const nestedObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** what /mcp wants in Accept */
const STREAMS = 'application/json, text/event-stream';

/** A valid value for a field, from its schema (the registry's is the source of truth). */
function sample(name: string, s: Schema): unknown {
  if (Array.isArray(s.enum)) return s.enum[0];
  if (s.type === 'integer') return name === 'quote_ttl_ms' ? 60_000 : name === 'bits' ? 64 : (s.minimum as number) ?? 1;
  if (typeof s.pattern === 'string' && s.pattern.includes('0-9a-fA-F')) return '00';
  if (name === 'nonce') return 'nonce-fuzz-01';
  if (name === 'machine_id') return 'fuzz-m';
  return `${name}-fuzz`;
}

/** The required fields of a schema, each with a valid value. */
function validArgs(schema: Schema): Record<string, unknown> {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const required = (schema.required ?? []) as string[];
  return Object.fromEntries(required.map((k) => [k, sample(k, props[k]!)]));
}

/** JSON text of `args` with `field` set to the raw JSON text `value`. */
function withRaw(args: Record<string, unknown>, field: string, value: string): string {
  const marker = '\u0001raw\u0001';
  return JSON.stringify({ ...args, [field]: marker }).replace(JSON.stringify(marker), () => value);
}

// ---- the HTTP surface, from the registry and the route index
interface Target { method: 'GET' | 'POST'; path: string; schema: Schema | null; params: string[]; cmd?: CommandSpec }

function targets(): Target[] {
  const out: Target[] = [];
  for (const c of ALL_COMMANDS) {
    if (!c.http) continue;
    const params = [...c.http.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    out.push({ method: c.http.method, path: c.http.path, schema: c.args, params, cmd: c });
  }
  const sandbox: [string, keyof typeof SANDBOX_SCHEMAS][] = [
    ['/api/v1/sandbox/quotes/get-pulse', 'quote'], ['/api/v1/sandbox/quotes/{quote_id}/accept', 'accept'],
    ['/api/v1/sandbox/executions/get-pulse', 'execute'], ['/api/v1/sandbox/receipts/verify', 'verify'],
  ];
  for (const [path, kind] of sandbox) {
    out.push({ method: 'POST', path, schema: SANDBOX_SCHEMAS[kind], params: path.includes('{') ? ['quote_id'] : [] });
  }
  out.push({ method: 'POST', path: '/mcp', schema: null, params: [] });
  const pages = ['/', '/docs', '/.well-known/', '/api/v1', '/api/v1/status', '/mcp'];
  for (const p of [...Object.values(DOCUMENT_PATHS), ...pages]) {
    out.push({ method: 'GET', path: p, schema: null, params: [] });
  }
  return out;
}

const JUNK_SEGMENTS = [
  '..', '../..', '%2e%2e', '%2e%2e%2f%2e%2e', '..%2f..%2fadmin.sock', '%00', 'a%00b', '%', '%ZZ', '%E0%A4%A', '%C0%AE',
  '%ff%fe', '%u2603', '\u2603', 'h\u00e9llo', '\u202etxt.exe', '\ud83d\ude00', ';jsessionid=x', '.', '//', '\\..\\',
  'q_fuzz', 'inv_fuzz', 'get-pulse', 'GET-PULSE', '__proto__', 'constructor',
];

function fillPath(rng: Prng, t: Target, junk: boolean): string {
  return t.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (junk && rng.chance(0.3)) return rng.pick(JUNK_SEGMENTS);
    if (junk) return rng.chance(0.5) ? 'x'.repeat(rng.int(9000)) : rng.text(40);
    return name === 'service' ? rng.pick(SERVICE_NAMES) : `${name.split('_')[0]}_fuzz`;
  });
}

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND', 'MKCOL', 'PURGE',
  'SEARCH', 'LOCK', 'FOO', 'get', 'P0ST', 'G\u00c9T'];

const MCP_TOOLS = ['svc_quote_get_pulse', 'svc_quote_make_bct', 'svc_caps', 'svc_sandbox_pulse', 'nope'];

function bodyFor(rng: Prng, t: Target): string {
  if (t.path === '/mcp') {
    return JSON.stringify({
      jsonrpc: '2.0', id: rng.int(100), method: rng.pick(['tools/list', 'tools/call', 'initialize', 'x']),
      params: { name: rng.pick(MCP_TOOLS), arguments: { bits: rng.int(99) } },
    });
  }
  const args = t.schema ? validArgs(t.schema) : {};
  for (const p of t.params) delete args[p];
  return JSON.stringify(args);
}

/** `apiError`: a well-formed request to a route of the gateway, whose every 4xx must be an ApiError */
type Case = { label: string; req: Buffer; head?: boolean; connect?: boolean; apiError?: boolean };

function pathCase(rng: Prng, all: Target[]): Case {
  const t = rng.pick(all);
  const method = rng.chance(0.6) ? t.method : rng.pick(METHODS);
  let path = fillPath(rng, t, rng.chance(0.6));
  const mutate = rng.int(8);
  if (mutate === 0) path += `/${rng.pick(JUNK_SEGMENTS)}`;
  if (mutate === 1) path = path.replace(/\/[^/]*$/, `/${rng.pick(JUNK_SEGMENTS)}`);
  if (mutate === 2) path += `?${rng.text(60)}`;
  if (mutate === 3) path += `?machine_id=a&machine_id=b&invoice_id[]=x&__proto__[p]=1&resource=${rng.text(30)}`;
  if (mutate === 4) path = `/${'a/'.repeat(rng.int(2000))}`;
  if (mutate === 5) path = path.toUpperCase();
  if (mutate === 6) path = `${path}%00.json`;
  const target = rng.chance(0.15) ? Buffer.concat([Buffer.from(path), rng.bytes(3, [0x20, 0x0d, 0x0a])]) : path;
  const body = method === 'POST' && rng.chance(0.5) ? bodyFor(rng, t) : undefined;
  const headers: [string, string][] = body ? [['Content-Type', 'application/json']] : [];
  const req = buildHttpRequest({ method, target, headers, body });
  return { label: `path ${method} ${path.slice(0, 80)}`, req, head: method === 'HEAD' };
}

const AUTH_FORMS = [
  'Bearer', 'Bearer ', 'Bearer  ', 'Bearer svcm_', 'bearer svcm_x', 'BEARER svcm_x', 'Bearer a b', 'Bearer\tsvcm_x',
  'Basic Zm9vOmJhcg==', 'Digest username="x"', 'Token svcm_x', 'svcm_x', `Bearer ${'A'.repeat(8000)}`, 'Bearer %00',
  'Bearer svcm_\u00ff\u00fe', 'Bearer ,', 'Bearer svcm_x, Bearer svcm_y',
];
const IDEMPOTENCY_KEYS = ['', ' ', 'k'.repeat(129), 'k'.repeat(5000), '\u00e9\u00ff', '"quoted"'];
const FORWARDED = ['x', '1.2.3.4, ::1, junk', ', , ,', `${'10.0.0.1,'.repeat(500)}`];
/** header-value bytes Node does not refuse outright: no NUL, CR, LF or other controls, but 0x80..0xff */
const CONTROLS = [...Array.from({ length: 32 }, (_, i) => i).filter((i) => i !== 9), 0x7f];
const CONTENT_TYPES = [
  'application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x',
  'application/json; charset=utf-16', 'application/jsonx', '', 'application/vnd.api+json', '*/*',
  'application/json, text/plain', `application/json; ${'x=y; '.repeat(1000)}`, 'application/problem+json',
  'APPLICATION/JSON',
];

function headerCase(rng: Prng, all: Target[]): Case {
  const t = rng.pick(all);
  const body = t.method === 'POST' ? bodyFor(rng, t) : undefined;
  const headers: [string, string | Buffer][] = [];
  const add = () => {
    switch (rng.int(12)) {
      case 0: headers.push(['Content-Type', rng.pick(CONTENT_TYPES)]); break;
      case 1: headers.push(['Authorization', rng.pick(AUTH_FORMS)]); break;
      case 2: headers.push(['Authorization', 'Bearer svcm_a'], ['Authorization', 'Bearer svcm_b']); break;
      case 3: headers.push(['Idempotency-Key', rng.pick(IDEMPOTENCY_KEYS)]); break;
      case 4: headers.push(['Idempotency-Key', 'a'], ['Idempotency-Key', 'b']); break;
      case 5: headers.push(['X-Big', 'v'.repeat(1000 + rng.int(12_000))]); break;
      case 6: headers.push(['X-Forwarded-For', rng.pick(FORWARDED)]); break;
      case 7: headers.push(['X-Request-Id', rng.pick(['', '../../x', 'x'.repeat(200), '\u00ff', 'ok-id.1:2'])]); break;
      case 8: headers.push(['Content-Type', 'application/json'], ['Content-Type', 'text/plain']); break;
      case 9: headers.push(['Expect', rng.pick(['100-continue', '200-ok'])]); break;
      case 10: headers.push(['Accept', rng.pick(['text/html', '*/*;q=abc', STREAMS])]); break;
      default: headers.push([`X-${rng.text(10, 'abcdefghij')}`, Buffer.from(rng.bytes(1 + rng.int(40), CONTROLS))]);
    }
  };
  for (let i = 0, n = 1 + rng.int(3); i < n; i++) add();
  const chunkSize = body && rng.chance(0.15) ? 1 + rng.int(16) : undefined;
  const target = fillPath(rng, t, false);
  const req = buildHttpRequest({ method: t.method, target, headers, body, ...(chunkSize ? { chunkSize } : {}) });
  return { label: `header ${t.method} ${t.path} ${headers.map(([k]) => k).join(',')}`, req };
}

const NOT_JSON = [
  "{'machine_id':'m'}", '{"machine_id":"m",}', '{/*c*/}', '{"bits":NaN}', '{"bits":0x10}', '{"bits":-Infinity}',
];

function bodyCase(rng: Prng, posts: Target[]): Case {
  const t = rng.pick(posts);
  const valid = bodyFor(rng, t);
  let body: string | Buffer;
  switch (rng.int(14)) {
    case 0: body = valid.slice(0, rng.int(valid.length)); break; // truncated JSON
    case 1: body = rng.pick(['[]', '[{}]', '1', '-1', '"x"', 'null', 'true', '1e999', '""', '[' + valid + ']']); break;
    case 2: body = nestedArray(1 + rng.int(300)); break;
    case 3: body = valid.replace(/^\{/, `{"n":${nestedObject(1 + rng.int(300))},`); break;
    case 4: body = valid.replace(/^\{/, '{"machine_id":1,"machine_id":"dup",'); break;
    case 5: body = valid.replace(/^\{/, `{"${rng.pick(['__proto__', 'constructor', 'prototype'])}":{"p":true},`); break;
    case 6: body = valid.replace(/^\{/, `{"machine_id":"${'m'.repeat(rng.int(200_000))}",`); break;
    case 7: // invalid UTF-8 inside a string
      body = Buffer.concat([Buffer.from(`${valid.slice(0, -1)},"x":"`), rng.bytes(8, [0x22, 0x5c]), Buffer.from('"}')]);
      break;
    case 8: body = `\ufeff${valid}`; break;
    case 9: body = rng.pick(NOT_JSON); break;
    case 10: body = Buffer.from(rng.bytes(1 + rng.int(300))); break;
    case 11: body = valid.replace(/^\{/, `{"${rng.text(20)}":${rng.pick(WRONG)},`); break;
    case 12: body = `${valid}${rng.pick(['{}', ' garbage', '\n{"a":1}', '\u0000'])}`; break;
    default: body = valid;
  }
  const ct = rng.chance(0.9) ? 'application/json' : rng.pick(CONTENT_TYPES);
  const headers: [string, string][] = [['Content-Type', ct], ['Accept', STREAMS]];
  if (t.cmd && t.cmd.auth !== 'none' && rng.chance(0.5)) {
    headers.push(['Authorization', `Bearer svcm_${rng.text(43, 'abcXYZ019_-')}`]);
  }
  const req = buildHttpRequest({ method: 'POST', target: fillPath(rng, t, rng.chance(0.2)), headers, body });
  return { label: `body ${t.path} ${Buffer.from(body).toString('latin1').slice(0, 60)}`, req, apiError: true };
}

/** One of each: commands that share an argument schema (the ten executions) validate alike. */
function bySchema<T extends { schema: Schema | null }>(xs: T[]): T[] {
  const seen = new Set<Schema>();
  return xs.filter((x) => x.schema !== null && !seen.has(x.schema) && seen.add(x.schema));
}

/** Every field of every argument schema on an HTTP route (the registry's and the sandbox's) × every WRONG value. */
function fieldCases(rng: Prng, all: Target[]): Case[] {
  const out: Case[] = [];
  for (const t of bySchema(all)) {
    for (const field of Object.keys((t.schema!.properties ?? {}) as Record<string, unknown>)) {
      for (const wrong of WRONG) {
        const args = validArgs(t.schema!);
        for (const p of t.params) delete args[p];
        const headers: [string, string][] = [['Content-Type', 'application/json']];
        if (t.cmd && t.cmd.auth !== 'none' && rng.chance(0.3)) headers.push(['Authorization', 'Bearer svcm_fuzz']);
        let target = fillPath(rng, t, false);
        let body: string | undefined;
        if (t.method === 'GET') {
          const q = new URLSearchParams(Object.entries(args).map(([k, v]) => [k, String(v)]));
          q.set(field, wrong.replace(/^"|"$/g, ''));
          target += `?${q.toString()}`;
        } else {
          body = withRaw(args, field, wrong);
        }
        const req = buildHttpRequest({ method: t.method, target, headers, body });
        out.push({ label: `field ${t.path} ${field}=${wrong.slice(0, 30)}`, req, apiError: true });
      }
    }
  }
  return out;
}

function bigCases(): Case[] {
  const big = `{"machine_id":"m","pad":"${'x'.repeat((1 << 20) + 1 - 27)}"}`;
  const at = (path: string, chunkSize?: number): Case => ({
    label: `1 MiB + 1 byte on ${path}${chunkSize ? ' (chunked)' : ''}`,
    req: buildHttpRequest({
      method: 'POST', target: path, headers: [['Content-Type', 'application/json']], body: big,
      ...(chunkSize ? { chunkSize } : {}),
    }),
  });
  return [
    at('/api/v1/quotes/get-pulse'), at('/api/v1/sandbox/quotes/get-pulse'), at('/mcp'), at('/api/v1/invoices', 65_536),
  ];
}

/** Runs cases `parallel` at a time; returns what went wrong and how often each status came back. */
async function runHttp(
  port: number, cases: Case[], parallel = 8,
): Promise<{ problems: string[]; statuses: Record<string, number> }> {
  const problems: string[] = [];
  const statuses: Record<string, number> = {};
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++]!;
      const r = await rawHttp(port, c.req, 20_000);
      statuses[String(r.status)] = (statuses[String(r.status)] ?? 0) + 1;
      const problem = judge(c, r);
      if (problem) problems.push(`${c.label}: ${problem}`);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return { problems, statuses };
}

function judge(c: Case, r: RawReply): string | null {
  if (r.timedOut) return 'no answer within 20 s';
  if (r.status === null) return c.connect ? null : `closed without a status (${r.error ?? 'eof'})`;
  if (r.status >= 500) return `status ${r.status} ${r.body.toString('utf8').slice(0, 200)}`;
  if (r.status >= 300 && r.status < 400) return `status ${r.status}`;
  const json = /application\/json/.test(r.headers['content-type'] ?? '') && r.headers['content-length'] !== undefined;
  const mcp = /\/mcp/i.test(c.label);
  // what Koa answers for a bad body or field is always an ApiError, never some other 4xx body
  if (r.status >= 400 && c.apiError && !mcp && !json) return `a ${r.status} that is not a JSON ApiError`;
  if (r.status >= 400 && json && !c.head && !mcp) {
    try {
      const b = JSON.parse(r.body.toString('utf8'));
      const shaped = b.ok === false && typeof b.request_id === 'string' && typeof b.error?.code === 'string';
      if (!shaped) return `not an ApiError: ${r.body}`;
    } catch {
      return `unparsable JSON error body: ${r.body.toString('utf8').slice(0, 100)}`;
    }
  }
  return null;
}

/** pino lines at error level or above (level ≥ 50) in svcd's output. */
function errorLogLines(s: Svcd): string[] {
  return (s.stdout + '\n' + s.stderr).split('\n').filter((l) => {
    if (!l.startsWith('{')) return false;
    try { return Number(JSON.parse(l).level) >= 50; } catch { return false; }
  }).map((l) => l.slice(0, 300));
}

async function healthyAfter(t: ExecutionContext, s: Svcd): Promise<void> {
  const h = await httpFrom('127.0.0.1', s.ready.http!, 'GET', '/api/v1/health');
  t.is(h.status, 200, 'HTTP HEALTH after');
  t.is(h.body?.status, 'ok');
  const c = await s.edge();
  t.is((await c.request('HEALTH')).status, 'ok', 'svc/1 HEALTH after');
  c.close();
  await stopCheckingLedger(s);
  t.deepEqual(errorLogLines(s), [], 'no error-level log lines');
}

const start = (t: ExecutionContext) => startSvcd(t, LIMITS);

test('HTTP: seeded malformed requests get 4xx (or 2xx), never 5xx or a hang; svcd stays healthy, quiet', async (t) => {
  const s = await start(t);
  const rng = prng(SEED);
  const all = targets();
  const posts = all.filter((x) => x.method === 'POST');
  const cases: Case[] = [
    ...fieldCases(rng, all),
    ...Array.from({ length: 450 }, () => pathCase(rng, all)),
    ...Array.from({ length: 450 }, () => headerCase(rng, all)),
    ...Array.from({ length: 550 }, () => bodyCase(rng, posts)),
    ...bigCases(),
    { label: 'CONNECT', req: buildHttpRequest({ method: 'CONNECT', target: '127.0.0.1:22' }), connect: true },
  ];
  const port = Number(new URL(s.ready.http!).port);
  const { problems, statuses } = await runHttp(port, cases);
  t.log(`seed ${SEED}: ${cases.length} requests, statuses ${JSON.stringify(statuses)}`);
  t.true(cases.length >= 2400, `${cases.length} requests`);
  t.deepEqual(problems.slice(0, 20), [], `${problems.length} problems`);
  for (const c of bigCases()) t.is((await rawHttp(port, c.req)).status, 413, c.label);
  await healthyAfter(t, s);
});

// Found by this test: PULSE took any integer index, and one past 2^53 (1e308, 9007199254740993) made the
// store's key codec throw — an internal error, logged, for one anonymous frame. Now 400 (the schema bounds it).
test('svc/1: seeded malformed frames get error frames, never internal or a hang; the edge stays healthy', async (t) => {
  const s = await start(t);
  const rng = prng(SEED ^ 0x5eed);
  const lines: (string | Buffer)[] = [];
  const frame = (f: Record<string, unknown>) => JSON.stringify({ v: 'svc/1', id: rng.int(1e6), cmd: 'CAPS', ...f });
  // every field of every argument schema in the registry (admin commands too: refused first) × every WRONG value
  for (const { cmd: c } of bySchema(ALL_COMMANDS.map((cmd) => ({ cmd, schema: cmd.args })))) {
    for (const field of Object.keys((c.args.properties ?? {}) as Record<string, unknown>)) {
      for (const wrong of WRONG) {
        const args = withRaw(validArgs(c.args), field, wrong);
        lines.push(`{"v":"svc/1","id":${rng.int(1e6)},"cmd":"${c.name}","args":${args}}`);
      }
    }
  }
  for (const c of ALL_COMMANDS) {
    lines.push(frame({ cmd: c.name, args: { ...validArgs(c.args), [rng.text(8, 'xyz')]: 1 } }));
  }
  for (const key of ['v', 'id', 'cmd', 'args', 'auth', 'via']) {
    for (const w of WRONG) {
      const f: Record<string, string> = { v: '"svc/1"', id: '7', cmd: '"HELLO"', args: '{}', [key]: w };
      lines.push(`{${Object.entries(f).map(([k, v]) => `"${k}":${v}`).join(',')}}`);
    }
  }
  const garbage = ['{}', 'null', '1', '"x"', '[]', 'true', '{', '{"v":"svc/1"', '{"v":"svc/1","id":1,}', '\u0000', 'x'];
  for (const g of garbage) lines.push(g);
  for (let i = 0; i < 60; i++) lines.push(Buffer.from(rng.bytes(1 + rng.int(200), [0x0a])));
  const names = ['hello', 'NOPE', '__proto__', 'constructor', 'toString', 'x'.repeat(5000), ''];
  for (let i = 0; i < 30; i++) lines.push(frame({ cmd: rng.pick(names) }));
  for (let i = 0; i < 30; i++) {
    const auth = rng.chance(0.5) ? { machine_id: rng.pick(['fuzz-m', '', 'x'.repeat(300)]), token: rng.text(60) }
      : rng.pick([null, [], 'x', 7, { token: 1 }, { machine_id: [] }]);
    lines.push(frame({ auth, cmd: 'BALANCE', args: { machine_id: 'fuzz-m' } }));
  }
  for (let i = 0; i < 20; i++) lines.push(frame({ via: { client: rng.text(30) } }));
  for (let i = 0; i < 20; i++) {
    lines.push(`${frame({ cmd: 'QUOTE', args: { service: 'get-pulse', machine_id: `m\ud800${i}` } })}\r`);
  }

  const conn = await RawLines.open(s.edgePort);
  const problems: string[] = [];
  let answered = 0;
  for (const line of lines) {
    const shown = Buffer.from(line).toString('latin1').slice(0, 80);
    const reply = await conn.exchange(Buffer.concat([Buffer.from(line), Buffer.from('\n')]));
    if (reply === null) { problems.push(`${shown}: no reply (closed: ${conn.closed})`); break; }
    answered++;
    let r: { ok?: unknown; id?: unknown; error?: { code?: unknown } };
    try {
      r = JSON.parse(reply);
    } catch {
      problems.push(`${shown}: reply is not JSON: ${reply.slice(0, 100)}`);
      continue;
    }
    if (r.ok === true) continue;
    const code = r.error?.code;
    if (!isErrorCode(code) || ERRORS[code].status >= 500) problems.push(`${shown}: ${reply.slice(0, 200)}`);
  }
  conn.close();
  t.log(`seed ${SEED ^ 0x5eed}: ${lines.length} frames`);
  t.true(lines.length >= 300, `${lines.length} frames`);
  t.is(answered, lines.length, 'one reply per line');
  t.deepEqual(problems.slice(0, 20), [], `${problems.length} problems`);

  const long = await RawLines.open(s.edgePort);
  const tooLong = await long.exchange(Buffer.alloc((1 << 20) + 1, 0x61), 30_000);
  t.is(JSON.parse(tooLong ?? '{}').error?.code, 'line_too_long');
  long.close();
  await healthyAfter(t, s);
});

// Was: /mcp answered 500 (JSON.stringify overflowed) and svc/1 args internal (structuredClone overflowed);
// the depth cap (64, checked before parsing) makes it 400 / an invalid_request error frame.
test('JSON nested 50,000 deep: 400 on every POST route and an error frame on svc/1, never a 5xx', async (t) => {
  const s = await start(t);
  const arr = nestedArray(50_000);
  const obj = nestedObject(50_000);
  const port = Number(new URL(s.ready.http!).port);
  const problems: string[] = [];
  for (const target of targets().filter((x) => x.method === 'POST')) {
    const path = target.path.replace(/\{(\w+)\}/g, (_, n: string) => (n === 'service' ? 'get-pulse' : 'q_fuzz'));
    for (const [what, body] of [['array', arr], ['object', obj], ['in a field', `{"machine_id":${arr}}`]]) {
      const headers: [string, string][] = [['Content-Type', 'application/json'], ['Accept', STREAMS]];
      const r = await rawHttp(port, buildHttpRequest({ method: 'POST', target: path, headers, body }));
      if (r.status === null || r.status < 400 || r.status >= 500) {
        problems.push(`${path} ${what}: ${r.status} ${r.body.toString().slice(0, 100)}`);
      }
    }
  }
  const conn = await RawLines.open(s.edgePort);
  const frames = {
    args: `{"v":"svc/1","id":1,"cmd":"QUOTE","args":${obj}}`,
    'a field': `{"v":"svc/1","id":2,"cmd":"BALANCE","args":{"machine_id":${arr}}}`,
    auth: `{"v":"svc/1","id":3,"cmd":"HELLO","args":{},"auth":${obj}}`,
    via: `{"v":"svc/1","id":4,"cmd":"HELLO","args":{},"via":${obj}}`,
    frame: arr,
  };
  for (const [what, line] of Object.entries(frames)) {
    const reply = JSON.parse((await conn.exchange(`${line}\n`)) ?? '{}');
    const code = reply.error?.code;
    const fine = reply.ok === true || (isErrorCode(code) && ERRORS[code].status < 500);
    if (!fine) problems.push(`svc/1 ${what}: ${JSON.stringify(reply)}`);
  }
  conn.close();
  t.deepEqual(problems, []);
  await healthyAfter(t, s);
});

// Found by this test: machine ids were stored under their UTF-8 bytes, where every lone surrogate becomes
// U+FFFD, while locks and quotes used the string itself — so "m\ud800" and "m\udc00" shared one account and
// one token but not one lock; RFC 8785 refuses lone surrogates, so an idempotent request naming one was an
// internal error. Identifiers must now be well-formed Unicode (schema and key codec).
test('machine_ids with lone surrogates are refused, or are machines of their own; never a 5xx', async (t) => {
  const s = await start(t);
  const A = 'alias-\ud800', B = 'alias-\udc00';
  const body = '{"machine_id":"alias-\\udfff","bits":64}';
  const path = '/api/v1/quotes/get-pulse';
  const idem = await httpFrom('127.0.0.9', s.ready.http!, 'POST', path, body, { 'idempotency-key': 'k-1' });
  t.true(idem.status < 500, `an anonymous idempotent quote: ${idem.status} ${JSON.stringify(idem.body)}`);
  const c = await s.edge();
  const claim = await viaEdge(c, 'FUND_ACCOUNT', { machine_id: A, units: 1, network: 'TRON', asset: 'USDT' });
  if (claim.status !== 200) {
    t.is(claim.status, 400, `refused as an invalid machine_id: ${claim.code}`);
  } else {
    const token = claim.body.machine_token as string;
    const admin = await s.admin();
    const reference = txRef('alias', 'USDT_TRON');
    await admin.request('SETTLE_INVOICE', { invoice_id: claim.body.invoice_id, reference });
    admin.close();
    const asB = await viaEdge(c, 'BALANCE', { machine_id: B }, { token });
    t.is(asB.status, 401, `A's token does not open B: ${asB.status} ${JSON.stringify(asB.body)}`);
    // two quotes, each over half the balance, accepted at once under the two spellings
    const q = (m: string) => viaEdge(c, 'QUOTE', { service: 'get-pulse', machine_id: m, bits: 64, bytes: 30_720_000 });
    const [qa, qb] = [await q(A), await q(B)];
    const accepts = await Promise.all(([[qa, A], [qb, B]] as const).map(([qq, m]) =>
      viaEdge(c, 'ACCEPT_QUOTE', { quote_id: qq.body.quote_id, machine_id: m }, { token })));
    const won = accepts.filter((r) => r.status === 200);
    const reservedFor = won.reduce((n, r) => n + BigInt(r.body.quote_units as number), 0n);
    const bal = await viaEdge(c, 'BALANCE', { machine_id: A }, { token });
    t.is(BigInt(bal.body.reserved_units as string), reservedFor, `reserved for ${won.length} accepted quotes`);
    const ran = await viaEdge(c, 'GET_PULSE', { quote_id: qa.body.quote_id, machine_id: A }, { token });
    t.true(ran.status < 500, `executing A's accepted quote: ${ran.status} ${ran.code}`);
  }
  c.close();
  await healthyAfter(t, s);
});

// Found by this test: a request body cut short by the client was logged at error level as a failed request
// ("aborted", ECONNRESET), and Koa's default handler printed the parser's error stack to stderr — any client
// could fill the operators' error log with what is its own doing.
test('clients that vanish mid-body are not logged as server errors', async (t) => {
  const s = await start(t);
  const port = Number(new URL(s.ready.http!).port);
  const partial = Buffer.concat([buildHttpRequest({
    method: 'POST', target: '/api/v1/quotes/get-pulse', bare: true,
    headers: [['Host', 'x'], ['Content-Type', 'application/json'], ['Content-Length', '100']],
  }), Buffer.from('{"machine_id":')]);
  for (const how of ['end', 'destroy'] as const) await sendAndVanish(port, partial, how, 500);
  // let the gateway see the resets before it is stopped: a bounded number of round trips
  for (let i = 0; i < 20; i++) await httpFrom('127.0.0.1', s.ready.http!, 'GET', '/api/v1/health');
  await healthyAfter(t, s);
  const printed = s.stderr.split('\n').filter((l) => /^\s+\w*Error\b/.test(l));
  t.deepEqual(printed, [], 'no error stacks printed on stderr');
});
