// openapi.json (OpenAPI 3.1) from the command registry and the route table (routes.ts): per route its
// request schema, every status it answers (ApiError bodies), the headers it sends and takes, the
// x-svc-* annotations, and an example of every request and response body: the registry's example
// calls, the discovery documents as documents.ts builds them for an example node, one ApiError per
// catalogue code. The paid executions also describe x402 (docs/x402.md): their 402, the payment headers and
// the second security scheme; the same document for every node, since it is a function of the site alone.
// Pure: the same inputs give the same bytes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../package-root.ts';
import { ERRORS, type ErrorCode } from '../errors.ts';
import { EXAMPLE_NODE, EXAMPLE_REQUEST_ID, X402_EXAMPLE, type CallExample } from '../protocol/examples.ts';
import {
  ALL_COMMANDS, GROUPS, commandSpec, isPaidExecution, type CommandSpec, type Group,
} from '../protocol/registry.ts';
import { quoteBodySchema, type Schema } from '../protocol/schemas.ts';
import { SERVICES } from '../protocol/services.ts';
import { VERSIONS } from '../protocol/versions.ts';
import {
  MAX_PAYMENT_CHARS, PAYMENT_REQUIRED_HEADER, PAYMENT_RESPONSE_HEADER, PAYMENT_SIGNATURE_HEADER, encodeHeader,
} from '../protocol/x402.ts';
import {
  agentCard, bootstrapDocument, buildManifest, discoverySummary, hostMetaJson, hostMetaXml, llmsTxt, manifestKv,
  networkDocument, nodeDocument, nodesDocument, paymentPolicy, pricebookPointer, pricebookText, robotsTxt,
  routeIndex, serviceCatalog, sitemapXml, statusDocument, webManifest, webfinger, wellKnownIndex, type PaymentRail,
} from './documents.ts';
import type { NodeInfo, SiteInfo } from './node-info.ts';
import { JSON_RPC_REQUEST, PUBLIC_ROUTES, ROUTE_TAGS, type PublicRoute, type RouteTag } from './routes.ts';

type Operation = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
const param = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const essence = (type: string) => type.split(';')[0]!.trim();
const sorted = (xs: number[]) => [...new Set(xs)].sort((a, b) => a - b);
const pick = (o: Readonly<Record<string, unknown>>, keys: readonly string[]) =>
  Object.fromEntries(Object.entries(o).filter(([k]) => keys.includes(k)));
/** A success as the envelope carries it: registry commands answer from the core (svc), routes from the gateway. */
const enveloped = (source: 'api' | 'svc', result: unknown) =>
  ({ ok: true, request_id: EXAMPLE_REQUEST_ID, source, ...(result as Record<string, unknown>) });

const ENVELOPE: Schema = {
  type: 'object', required: ['ok', 'request_id', 'source'], additionalProperties: true,
  properties: {
    ok: { type: 'boolean', const: true }, request_id: { type: 'string' },
    source: { type: 'string', enum: ['api', 'svc'] },
  },
};
const API_ERROR: Schema = {
  type: 'object', required: ['ok', 'request_id', 'error'],
  properties: {
    ok: { type: 'boolean', const: false }, request_id: { type: 'string' },
    error: {
      type: 'object', required: ['code', 'message', 'source'],
      properties: {
        code: { type: 'string', enum: Object.keys(ERRORS) }, message: { type: 'string' },
        source: { type: 'string', enum: ['api', 'svc'] }, details: { type: 'object' },
      },
    },
  },
};
const JSON_RPC_RESPONSE: Schema = {
  type: 'object', required: ['jsonrpc'],
  properties: {
    jsonrpc: { type: 'string', const: '2.0' }, id: { type: ['string', 'integer', 'null'] }, result: { type: 'object' },
    error: {
      type: 'object', required: ['code', 'message'],
      properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
    },
  },
};

const HEADERS: Record<string, Record<string, unknown>> = {
  RequestId: {
    description: 'the request id (a valid incoming x-request-id, or a generated one); also in every body',
    required: true, schema: { type: 'string' },
  },
  RateLimit: {
    description: 'remaining quota of the rate class and seconds to the window reset, e.g. "public_low";r=119;t=60'
      + ' (draft-ietf-httpapi-ratelimit-headers)',
    schema: { type: 'string' },
  },
  RateLimitPolicy: {
    description: 'quota and window of the rate class, e.g. "public_low";q=120;w=60'
      + ' (draft-ietf-httpapi-ratelimit-headers)',
    schema: { type: 'string' },
  },
  RetryAfter: { description: 'seconds until the rate window resets', required: true, schema: { type: 'integer' } },
  IdempotentReplayed: {
    description: 'true when this is the stored response to an earlier request with the same idempotency key',
    schema: { type: 'string', const: 'true' },
  },
  WWWAuthenticate: {
    description: 'RFC 6750: Bearer realm="svc", with error="invalid_token" when a token was presented but is wrong',
    required: true, schema: { type: 'string' },
  },
  Allow: { description: 'the methods the path takes', required: true, schema: { type: 'string' } },
  ETag: { description: 'strong validator of the body; send it back in If-None-Match', schema: { type: 'string' } },
  CacheControl: { description: 'public, max-age=N', schema: { type: 'string' } },
  // x402 version 2's HTTP transport (docs/x402.md): a 402 here comes only from a node with x402 on, always with it
  PaymentRequired: {
    description: 'x402 version 2: base64 of the JSON PaymentRequired (x402Version, resource, accepts: scheme exact,'
      + ' network, asset, amount, payTo, maxTimeoutSeconds, extra with the token\'s EIP-712 name and version and the'
      + ' quote_id); the same object is in error.details.payment_required. Sent by nodes with x402 on (GET'
      + ' /api/v1/payment: x402 not null), the only ones that answer 402',
    required: true, schema: { type: 'string', contentEncoding: 'base64', contentMediaType: 'application/json' },
    example: encodeHeader(X402_EXAMPLE.payment_required),
  },
  PaymentResponse: {
    description: 'x402 version 2: base64 of the JSON SettleResponse (success, transaction, network, payer), when'
      + ' this execution was paid with x402 (PAYMENT-SIGNATURE); the result\'s payment and the signed receipt name'
      + ' the same payment',
    schema: { type: 'string', contentEncoding: 'base64', contentMediaType: 'application/json' },
    example: encodeHeader(X402_EXAMPLE.settle_response),
  },
};

const PARAMETERS: Record<string, Record<string, unknown>> = {
  IdempotencyKey: {
    name: 'Idempotency-Key', in: 'header', required: false,
    description: 'same as the idempotency_key body field (which wins when both are sent): the same key with the same'
      + ' body replays the first response; with another body it is 422 idempotency_key_reused',
    schema: { type: 'string', minLength: 1, maxLength: 128 }, example: 'my-agent-order-4711',
  },
  IfNoneMatch: {
    name: 'If-None-Match', in: 'header', required: false,
    description: 'an ETag from an earlier response: 304 if unchanged',
    schema: { type: 'string' }, example: '"9c4e2f7a1b3d5e6f8a0b1c2d3e4f5a6b"',
  },
  PaymentSignature: {
    name: PAYMENT_SIGNATURE_HEADER, in: 'header', required: false,
    description: 'x402 version 2, on nodes with x402 on (GET /api/v1/payment: x402 not null): base64 of the JSON'
      + ' PaymentPayload that pays this quote, as an x402 client builds it from the 402\'s PAYMENT-REQUIRED; instead'
      + ' of a machine token, for a machine_id no token has claimed (docs/x402.md). Version 1\'s X-PAYMENT is not'
      + ' read',
    schema: {
      type: 'string', maxLength: MAX_PAYMENT_CHARS, contentEncoding: 'base64', contentMediaType: 'application/json',
    },
    example: X402_EXAMPLE.payment_signature,
  },
};

const STATUS_TEXT: Record<number, string> = {
  200: 'ok', 202: 'a JSON-RPC notification, accepted: no body', 304: 'not modified (If-None-Match matched the ETag)',
  400: 'invalid request', 401: 'missing or wrong machine token', 402: 'payment required (x402, nodes with it on)',
  404: 'not found', 405: 'method not allowed',
  406: 'not acceptable', 409: 'invalid state', 413: 'request body too large',
  422: 'idempotency key reused with another request', 429: 'rate limited',
  502: 'the core edge is unavailable or failed the call', 503: 'busy; retry later',
};

/**
 * The catalogue codes an HTTP answer with this status can carry (5xx from the core arrive as 502, so 502
 * lists the gateway's own); the ones only svc/1 frames carry are not among them.
 */
const codesOf = (status: number) => (Object.keys(ERRORS) as ErrorCode[])
  .filter((c) => ERRORS[c].status === status && !ERRORS[c].doc.startsWith('svc/1:'));

function describeStatus(status: number): string {
  const codes = codesOf(status);
  return codes.length ? `${STATUS_TEXT[status] ?? 'error'}: ${codes.join(', ')}` : STATUS_TEXT[status] ?? 'error';
}

/** Raised by the gateway itself (its checks, limits and routing); the rest come back from the core. */
const FROM_GATEWAY: ReadonlySet<string> = new Set(['invalid_request', 'rate_limited', 'not_found']);

/**
 * A recorded answer in place of the catalogue's text, where one shows more: the 402 that tells an x402 client
 * what to pay carries it in details.payment_required.
 */
const RECORDED_ERRORS: Partial<Record<ErrorCode, { message: string; details: Record<string, unknown> }>> = {
  payment_required: {
    message: X402_EXAMPLE.message, details: { payment_required: X402_EXAMPLE.payment_required },
  },
};

/** One ApiError per code a status carries, its catalogue text as the message (or a recorded answer). */
function errorExamples(status: number): Record<string, unknown> {
  return Object.fromEntries(codesOf(status).map((code) => {
    const doc = ERRORS[code].doc.replace(/^HTTP: /, '');
    const source = FROM_GATEWAY.has(code) || ERRORS[code].doc.startsWith('HTTP:') ? 'api' : 'svc';
    const error = { code, message: doc, source, ...RECORDED_ERRORS[code] };
    return [code, { summary: doc, value: { ok: false, request_id: EXAMPLE_REQUEST_ID, error } }];
  }));
}

/** JSON-RPC errors as POST /mcp answers them (the id is null when the request's could not be read). */
const JSON_RPC_ERRORS: Record<number, { summary: string; value: unknown }> = {
  400: {
    summary: 'JSON-RPC: parse error',
    value: { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } },
  },
  404: {
    summary: 'JSON-RPC: unknown method',
    value: { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'Method not found' } },
  },
  406: {
    summary: 'JSON-RPC: Accept excludes application/json',
    value: {
      jsonrpc: '2.0', id: null,
      error: { code: -32000, message: 'Not Acceptable: this stateless endpoint answers application/json only' },
    },
  },
};

interface ResponseTraits {
  statuses: readonly number[];
  /** the 200 (each media type with its schema and example), or null when the route has none (GET /mcp) */
  ok: Record<string, { schema: unknown; example?: unknown; examples?: unknown }> | null;
  limited: boolean;
  idempotent: boolean;
  conditional: boolean;
  /** a paid execution: its 200 may carry x402's PAYMENT-RESPONSE */
  payable: boolean;
  /** POST /mcp: protocol errors are JSON-RPC error responses */
  jsonRpc: boolean;
  /** components.responses, filled as operations are built: every other status is shared by reference */
  shared: Record<string, unknown>;
}

function responses(t: ResponseTraits): Record<string, unknown> {
  const common = (status: number) => ({
    'x-request-id': header('RequestId'),
    ...(t.limited ? { RateLimit: header('RateLimit'), 'RateLimit-Policy': header('RateLimitPolicy') } : {}),
    ...(status === 429 ? { 'Retry-After': header('RetryAfter') } : {}),
    ...(status === 401 ? { 'WWW-Authenticate': header('WWWAuthenticate') } : {}),
    ...(status === 405 ? { Allow: header('Allow') } : {}),
    ...(status === 402 ? { [PAYMENT_REQUIRED_HEADER]: header('PaymentRequired') } : {}),
  });
  const out: Record<string, unknown> = {};
  if (t.ok) {
    out['200'] = {
      description: 'ok', content: t.ok,
      headers: {
        ...common(200),
        ...(t.idempotent ? { 'Idempotent-Replayed': header('IdempotentReplayed') } : {}),
        ...(t.conditional ? { ETag: header('ETag'), 'Cache-Control': header('CacheControl') } : {}),
        ...(t.payable ? { [PAYMENT_RESPONSE_HEADER]: header('PaymentResponse') } : {}),
      },
    };
  }
  for (const status of t.statuses) {
    const rpc = t.jsonRpc && (status === 404 || status === 406);
    const either = t.jsonRpc && status === 400;
    const name = `Status${status}${rpc ? 'JsonRpc' : either ? 'ApiOrJsonRpc' : ''}${t.limited ? '' : 'NoRateLimit'}`;
    const cache = status === 304 ? { ETag: header('ETag'), 'Cache-Control': header('CacheControl') } : {};
    const schema = rpc ? ref('JsonRpcResponse')
      : either ? { oneOf: [ref('ApiError'), ref('JsonRpcResponse')] } : ref('ApiError');
    const examples = rpc ? { jsonrpc: JSON_RPC_ERRORS[status] }
      : { ...errorExamples(status), ...(either ? { jsonrpc: JSON_RPC_ERRORS[400] } : {}) };
    t.shared[name] ??= status < 400 ? { description: STATUS_TEXT[status], headers: { ...common(status), ...cache } } : {
      description: rpc ? `JSON-RPC error: ${status === 404 ? 'unknown method' : 'Accept excludes application/json'}`
        : describeStatus(status),
      headers: common(status),
      content: { 'application/json': { schema, examples } },
    };
    out[String(status)] = { $ref: `#/components/responses/${name}` };
  }
  return out;
}

const annotations = (a: { billing: string; auth: string; rateClass: string; execution: boolean }) => ({
  'x-svc-billing': a.billing, 'x-svc-auth': a.auth, 'x-svc-rate-class': a.rateClass, 'x-svc-execution': a.execution,
});

const camel = (s: string) => s.toLowerCase().replace(/[_-](\w)/g, (_m, x: string) => x.toUpperCase());

/** Commands whose GET route answers with an ETag and Cache-Control (src/gateway/embed-routes.ts). */
const CONDITIONAL = new Set(['PULSE']);

/** Every status a registry command's route can answer, from what its arguments and annotations imply. */
function commandStatuses(c: CommandSpec): number[] {
  const has = (k: string) => Object.hasOwn((c.args.properties ?? {}) as object, k);
  return sorted([
    400, 429, 502, // validation, rate limit, the core
    ...(c.auth === 'none' ? [] : [401]),
    ...(isPaidExecution(c) ? [402] : []), // x402, where it is on
    ...(['quote_id', 'invoice_id', 'receipt_id', 'index'].some(has) ? [404] : []),
    ...(CONDITIONAL.has(c.name) ? [304] : []),
    ...(has('quote_id') || has('idempotency_key') ? [409] : []), // quote state; an idempotent request still running
    ...(c.http!.method === 'POST' ? [413] : []),
    ...(has('idempotency_key') ? [422] : []),
  ]);
}

const jsonBody = (schema: unknown, example: unknown) =>
  ({ required: true, content: { 'application/json': { schema, example } } });

/** The value an example call gives a parameter, when it gives one. */
const exampleOf = (example: CallExample, name: string) =>
  (Object.hasOwn(example.args, name) ? { example: example.args[name] } : {});

function commandOperation(
  c: CommandSpec, operationId: string, path: string, body: Schema | null, shared: Record<string, unknown>,
  example: CallExample,
): Operation {
  const props = (c.args.properties ?? {}) as Record<string, Schema>;
  const required = (c.args.required ?? []) as string[];
  const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const idempotent = Object.hasOwn(props, 'idempotency_key');
  const parameters: unknown[] = pathParams.map((p) => ({
    name: p, in: 'path', required: true, schema: props[p] ?? { type: 'string' }, ...exampleOf(example, p),
  }));
  if (c.http!.method === 'GET') {
    for (const [k, v] of Object.entries(props)) {
      if (pathParams.includes(k)) continue;
      parameters.push({ name: k, in: 'query', required: required.includes(k), schema: v, ...exampleOf(example, k) });
    }
  }
  const payable = isPaidExecution(c);
  if (idempotent) parameters.push(param('IdempotencyKey'));
  if (CONDITIONAL.has(c.name)) parameters.push(param('IfNoneMatch'));
  if (payable) parameters.push(param('PaymentSignature'));
  // the first invoice of an unclaimed machine_id needs no token (it returns one); a paid execution takes a
  // machine token or, on a node with x402 on, a payment of its own
  const security = c.auth === 'none' ? [] : c.name === 'FUND_ACCOUNT' ? [{ bearerAuth: [] }, {}]
    : payable ? [{ bearerAuth: [] }, { x402: [] }] : [{ bearerAuth: [] }];
  return {
    operationId, summary: c.purpose, tags: [c.group],
    ...(parameters.length ? { parameters } : {}),
    ...(body ? { requestBody: jsonBody(body, pick(example.args, Object.keys(body.properties as object))) } : {}),
    security,
    responses: responses({
      statuses: commandStatuses(c), limited: true, idempotent, conditional: CONDITIONAL.has(c.name), payable,
      jsonRpc: false, shared,
      ok: {
        'application/json': {
          schema: { allOf: [ref('Envelope'), ref(`${c.name}_result`)] }, example: enveloped('svc', example.result),
        },
      },
    }),
    'x-svc-command': c.name, ...annotations(c),
  };
}

/** The request body of a POST command: its arguments minus the path parameters. */
function bodyOf(c: CommandSpec): Schema | null {
  if (c.http!.method !== 'POST') return null;
  const pathParams = [...c.http!.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const props = Object.entries((c.args.properties ?? {}) as Record<string, Schema>)
    .filter(([k]) => !pathParams.includes(k));
  return {
    ...c.args, properties: Object.fromEntries(props),
    required: ((c.args.required ?? []) as string[]).filter((r) => !pathParams.includes(r)),
  };
}

/** The example node the example documents describe (examples.ts): one current key, never rotated. */
const EXAMPLE_NODE_INFO: NodeInfo = {
  ...EXAMPLE_NODE, alg: 'Ed25519',
  keys: [{
    key_id: EXAMPLE_NODE.key_id, alg: 'Ed25519', public_key: EXAMPLE_NODE.public_key,
    valid_from: null, valid_until: null, status: 'current',
  }],
};
const example = (name: string) => commandSpec(name)!.examples![0]!;

/**
 * The documents that routes serve, as documents.ts builds them: their examples are the real thing for
 * this base URL and the example node. An alias shares its original's.
 */
const DOCUMENT_EXAMPLES: Record<string, (site: SiteInfo, node: NodeInfo) => unknown> = {
  llmsTxt: (s) => llmsTxt(s), robotsTxt: (s) => robotsTxt(s), sitemapXml: (s) => sitemapXml(s),
  siteWebmanifest: () => webManifest(), wellKnownIndex: (s) => wellKnownIndex(s), hostMeta: (s) => hostMetaXml(s),
  hostMetaJson: (s) => hostMetaJson(s), webfinger: (s, n) => webfinger(s.base_url, n, s),
  agentCard: (s, n) => agentCard(n, s), manifest: (s, n) => buildManifest(n, s), manifestKv: (s, n) => manifestKv(n, s),
  statusJson: () => statusDocument(example('HEALTH').result, example('HELLO').result.time as string),
  bootstrap: (s, n) => bootstrapDocument(n, s), pricebookPointer: (s) => pricebookPointer(s),
  serviceCatalog: (s) => serviceCatalog(s), pricebookText: () => pricebookText(), nodes: (s, n) => nodesDocument(n, s),
  node: (s, n) => nodeDocument(n, s), network: (s) => networkDocument(s),
  apiIndex: () => routeIndex(), apiDiscovery: (s, n) => discoverySummary(n, s),
  apiPayment: () => paymentPolicy(example('PAYMENT_INFO').result.rails as PaymentRail[]),
};

/** What a route's success carries: its document, its registry command's example, or the route table's. */
function routeExample(r: PublicRoute, site: SiteInfo): unknown {
  const doc = DOCUMENT_EXAMPLES[r.aliasOf ?? r.id];
  if (doc) return doc(site, EXAMPLE_NODE_INFO);
  if (r.command) return example(r.command).result;
  if (r.example) return r.example(site.base_url);
  throw new Error(`no example for ${r.id}`);
}

/** Routes that share a body with another (aliases and their originals), by the original's id. */
const SHARED_BODIES = new Set(PUBLIC_ROUTES.flatMap((r) => (r.aliasOf ? [r.aliasOf] : [])));

function routeOperation(
  r: PublicRoute, site: SiteInfo, shared: Record<string, unknown>, examples: Record<string, unknown>,
): Operation {
  const conditional = r.maxAge !== undefined && r.statuses.includes(304);
  const call = r.command ? example(r.command) : null;
  const parameters = [
    ...Object.entries(r.params ?? {}).map(([name, schema]) => ({
      name, in: 'path', required: true, schema, ...(call ? exampleOf(call, name) : {}),
    })),
    ...Object.entries(r.query ?? {}).map(([name, q]) => ({ name, in: 'query', ...q })),
    ...(conditional ? [param('IfNoneMatch')] : []),
  ];
  const envelope = r.result ? { allOf: [ref('Envelope'), ref(`${r.id}_result`)] } : ref('Envelope');
  const okSchema = r.body === 'envelope' ? envelope
    : r.body === 'json' ? { type: 'object' }
      : r.body === 'jsonrpc' ? ref('JsonRpcResponse')
        : { type: 'string' };
  // the route table's schema object for JSON-RPC requests is published once, as a component
  const request = r.request === JSON_RPC_REQUEST ? ref('JsonRpcRequest') : r.request;
  const requestExample = r.requestExample
    ?? (call && r.request ? pick(call.args, Object.keys(r.request.properties as object)) : undefined);
  const body = r.body === 'none' ? null : routeExample(r, site);
  const value = r.body === 'envelope' ? enveloped('api', body) : body;
  // a body served at several paths is one component, referenced from each
  const original = r.aliasOf ?? r.id;
  const aliased = SHARED_BODIES.has(original);
  if (aliased) examples[original] ??= { summary: 'the same body at each path that serves it', value };
  const okExample = aliased
    ? { examples: { [original]: { $ref: `#/components/examples/${original}` } } } : { example: value };
  return {
    operationId: r.id, summary: r.purpose, tags: [r.tag], security: [],
    ...(parameters.length ? { parameters } : {}),
    ...(request ? { requestBody: jsonBody(request, requestExample) } : {}),
    responses: responses({
      statuses: r.statuses, limited: r.statuses.includes(429), idempotent: false, conditional, payable: false,
      jsonRpc: r.body === 'jsonrpc', shared,
      ok: r.body === 'none' ? null : { [essence(r.type)]: { schema: okSchema, ...okExample } },
    }),
    ...annotations(r),
    ...(r.aliasOf ? { 'x-svc-alias-of': r.aliasOf } : {}),
  };
}

/** The package's licence (package.json `license`, an SPDX expression), or null while the project names none. */
function packageLicense(): { name: string; identifier: string } | null {
  const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { license?: string };
  return pkg.license ? { name: pkg.license, identifier: pkg.license } : null;
}
const LICENSE = packageLicense();

export interface OpenApiOptions {
  /**
   * the server URL published: the public base URL when one is configured (SVC_BASE_URL, the default:
   * site.base_url), else `/`, which a client resolves against wherever it fetched the document from
   */
  server?: string;
}

export function buildOpenApi(site: SiteInfo, opts: OpenApiOptions = {}): Record<string, unknown> {
  const paths: Record<string, Record<string, Operation>> = {};
  const add = (path: string, method: string, op: Operation) => { (paths[path] ??= {})[method.toLowerCase()] = op; };
  const shared: Record<string, unknown> = {};
  const examples: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {
    Envelope: ENVELOPE, ApiError: API_ERROR, JsonRpcRequest: JSON_RPC_REQUEST, JsonRpcResponse: JSON_RPC_RESPONSE,
  };
  for (const c of ALL_COMMANDS) {
    if (!c.http) continue;
    schemas[`${c.name}_result`] = c.result;
    if (c.name !== 'QUOTE') {
      const op = commandOperation(c, camel(c.name), c.http.path, bodyOf(c), shared, c.examples![0]!);
      add(c.http.path, c.http.method, op);
      continue;
    }
    // one operation per service, as the contract lists them, each with the service's own quote billing
    for (const s of SERVICES) {
      const path = c.http.path.replace('{service}', s.service);
      const call = c.examples!.find((e) => e.args.service === s.service)!;
      const op = commandOperation(c, camel(`quote-${s.service}`), path, quoteBodySchema(s.service), shared, call);
      add(path, c.http.method, { ...op, 'x-svc-billing': s.quoteBilling, 'x-svc-service': s.service });
    }
  }
  for (const r of PUBLIC_ROUTES) {
    if (r.result) schemas[`${r.id}_result`] = r.result;
    add(r.path, r.method, routeOperation(r, site, shared, examples));
  }
  const tags = [...new Set(Object.values(paths).flatMap((p) => Object.values(p).flatMap((o) => o.tags as string[])))];
  const server = opts.server ?? site.base_url;
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'svc public gateway', version: VERSIONS.api,
      description: 'Metered computation-and-proof service. Discovery, receipt verification and the sandbox are free;'
        + ' quotes are free and limited; executions are paid from an account funded by stablecoin invoices, or, on'
        + ' nodes with x402 on (GET /api/v1/payment: x402 not null), per request with x402 (HTTP 402, version 2).'
        + ' Core protocol: svc/1 over TLS. Every failure is an ApiError; every response carries x-request-id.',
      ...(LICENSE ? { license: LICENSE } : {}),
    },
    servers: [{
      url: server,
      description: server === site.base_url ? 'this gateway\'s public base URL'
        : 'where this document was fetched from (the gateway has no public base URL configured)',
    }],
    tags: tags.map((name) => ({
      name, description: GROUPS[name as Group] ?? ROUTE_TAGS[name as Exclude<RouteTag, Group>],
    })),
    paths,
    components: {
      schemas,
      responses: Object.fromEntries(Object.entries(shared).sort(([a], [b]) => a.localeCompare(b))),
      examples,
      headers: HEADERS,
      parameters: PARAMETERS,
      securitySchemes: {
        bearerAuth: {
          type: 'http', scheme: 'bearer',
          description: 'the machine token returned once by the first funding invoice (prefix svcm_)',
        },
        // OpenAPI has no payment scheme: an x402 payment is a header credential of its own, per request
        x402: {
          type: 'apiKey', in: 'header', name: PAYMENT_SIGNATURE_HEADER,
          description: 'x402 version 2, paid executions only, on nodes with x402 on: GET /api/v1/payment\'s x402'
            + ' (null when off) names the scheme (exact) and each network (an EIP-3009 token on EVM, an SPL token on'
            + ' Solana) with its asset and payee; docs/x402.md has the'
            + ' flow. Send the execution without a token: 402 with PAYMENT-REQUIRED; send it again with'
            + ' PAYMENT-SIGNATURE (an x402 client does both): 200 with PAYMENT-RESPONSE. A machine_id claimed by a'
            + ' machine token needs that token',
        },
      },
    },
  };
}
