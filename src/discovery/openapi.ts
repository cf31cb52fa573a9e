// openapi.json (OpenAPI 3.1) derived from the command registry: one operation per HTTP route with
// its request schema, the response envelope, the ApiError responses and the x-svc-* annotations
// (billing, auth, rate class, execution flag). Pure: the same inputs give the same bytes.
import { ERRORS } from '../errors.ts';
import { COMMANDS, type CommandSpec } from '../protocol/registry.ts';
import { SANDBOX_SCHEMAS } from '../protocol/sandbox.ts';
import { quoteBodySchema, type Schema } from '../protocol/schemas.ts';
import type { ServiceName } from '../protocol/services.ts';
import { VERSIONS } from '../protocol/versions.ts';
import type { SiteInfo } from './node-info.ts';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });

const ENVELOPE: Schema = {
  type: 'object', required: ['ok', 'request_id', 'source'], additionalProperties: true,
  properties: { ok: { type: 'boolean', const: true }, request_id: { type: 'string' }, source: { type: 'string', enum: ['api', 'svc'] } },
};
const API_ERROR: Schema = {
  type: 'object', required: ['ok', 'request_id', 'error'],
  properties: {
    ok: { type: 'boolean', const: false }, request_id: { type: 'string' },
    error: {
      type: 'object', required: ['code', 'message', 'source'],
      properties: { code: { type: 'string', enum: Object.keys(ERRORS) }, message: { type: 'string' }, source: { type: 'string', enum: ['api', 'svc'] }, details: { type: 'object' } },
    },
  },
};

function errorResponses(codes: number[]) {
  const text: Record<number, string> = { 400: 'invalid request', 401: 'missing or wrong machine token', 404: 'not found', 405: 'method not allowed', 409: 'invalid state (for example a quote not in the required state)', 413: 'request body too large', 422: 'idempotency key reused with another body', 429: 'rate limited (see Retry-After, RateLimit)', 502: 'the core edge is unavailable or rejected the call', 503: 'busy; retry later' };
  return Object.fromEntries(codes.map((c) => [String(c), { description: text[c] ?? 'error', content: json(ref('ApiError')) }]));
}

const nameOf = (c: CommandSpec) => c.name.toLowerCase().replace(/_(\w)/g, (_m, x: string) => x.toUpperCase());

function operation(c: CommandSpec): [string, string, Record<string, unknown>] {
  const path = c.http!.path;
  const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const props = (c.args.properties ?? {}) as Record<string, Schema>;
  const required = (c.args.required ?? []) as string[];
  const parameters: Record<string, unknown>[] = pathParams.map((p) => ({ name: p, in: 'path', required: true, schema: props[p] ?? { type: 'string' } }));
  const bodyProps = Object.fromEntries(Object.entries(props).filter(([k]) => !pathParams.includes(k)));
  const bodySchema = { ...c.args, properties: bodyProps, required: required.filter((r) => !pathParams.includes(r)) };
  if (c.http!.method === 'GET') {
    for (const [k, v] of Object.entries(bodyProps)) parameters.push({ name: k, in: 'query', required: required.includes(k), schema: v });
  }
  const auth = c.auth === 'none' ? [] : [{ bearerAuth: [] }];
  if (c.name === 'FUND_ACCOUNT') auth.push({} as never); // the first invoice of an unclaimed machine_id needs no token
  const op: Record<string, unknown> = {
    operationId: nameOf(c),
    summary: c.purpose,
    tags: [c.group],
    ...(parameters.length ? { parameters } : {}),
    ...(c.http!.method === 'POST' ? { requestBody: { required: true, content: json(bodySchema) } } : {}),
    security: auth,
    responses: {
      200: { description: 'ok', content: json({ allOf: [ref('Envelope'), ref(`${c.name}_result`)] }) },
      ...errorResponses(c.execution ? [400, 401, 404, 409, 429, 502] : c.auth === 'none' ? [400, 409, 429, 502] : [400, 401, 404, 409, 422, 429, 502]),
    },
    'x-svc-command': c.name, 'x-svc-billing': c.billing, 'x-svc-auth': c.auth, 'x-svc-rate-class': c.rateClass, 'x-svc-execution': c.execution,
  };
  return [path, c.http!.method.toLowerCase(), op];
}

export function buildOpenApi(site: SiteInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const add = (path: string, method: string, op: Record<string, unknown>) => { (paths[path] ??= {})[method] = op; };
  const schemas: Record<string, unknown> = { Envelope: ENVELOPE, ApiError: API_ERROR };
  for (const c of COMMANDS) {
    if (!c.http) continue;
    if (c.name === 'QUOTE') {
      // one operation per service: the contract lists them as separate paths
      const q = operation(c);
      for (const svc of ((c.args.properties as Record<string, Schema>).service!.enum as string[])) {
        const body = quoteBodySchema(svc as ServiceName);
        add(`/api/v1/quotes/${svc}`, 'post', { ...q[2], operationId: `quote${svc.replace(/(^|-)(\w)/g, (_m, _d, x: string) => x.toUpperCase())}`, parameters: undefined, requestBody: { required: true, content: json(body) }, 'x-svc-service': svc });
      }
    } else {
      const [p, m, op] = operation(c);
      add(p, m, op);
    }
    schemas[`${c.name}_result`] = c.result;
  }
  const sandbox = (path: string, kind: keyof typeof SANDBOX_SCHEMAS, summary: string, execution = false) => add(path, 'post', {
    operationId: `sandbox${kind[0]!.toUpperCase()}${kind.slice(1)}`, summary, tags: ['Sandbox'], security: [],
    ...(path.includes('{quote_id}') ? { parameters: [{ name: 'quote_id', in: 'path', required: true, schema: { type: 'string' } }] } : {}),
    requestBody: { required: true, content: json(SANDBOX_SCHEMAS[kind]) },
    responses: { 200: { description: 'ok', content: json(ref('Envelope')) }, ...errorResponses([400, 404, 409, 429]) },
    'x-svc-billing': 'sandbox_free_limited', 'x-svc-auth': 'none', 'x-svc-rate-class': 'public_low', 'x-svc-execution': execution,
  });
  sandbox('/api/v1/sandbox/quotes/get-pulse', 'quote', 'creates a sandbox GET_PULSE quote');
  sandbox('/api/v1/sandbox/quotes/{quote_id}/accept', 'accept', 'accepts a sandbox quote');
  sandbox('/api/v1/sandbox/executions/get-pulse', 'execute', 'small execution without real settlement', true);
  sandbox('/api/v1/sandbox/receipts/verify', 'verify', 'verifies a sandbox receipt generated by this gateway');
  const get = (path: string, summary: string, envelope: boolean, command?: string) => add(path, 'get', {
    operationId: path.replace(/^\/api\/v1\/?/, 'api_').replace(/[^\w]+(\w)?/g, (_m, x?: string) => (x ? x.toUpperCase() : '')) || 'apiIndex',
    summary, tags: ['Discovery'], security: [],
    responses: { 200: { description: 'ok', content: json(envelope ? ref('Envelope') : { type: 'object' }) }, ...errorResponses(command ? [429, 502] : [429]) },
    'x-svc-billing': 'free', 'x-svc-auth': 'none', 'x-svc-rate-class': 'public_low', 'x-svc-execution': false, ...(command ? { 'x-svc-command': command } : {}),
  });
  get('/api/v1', 'JSON route index', true);
  get('/api/v1/status', 'gateway and public edge status', true);
  get('/api/v1/discovery', 'discovery summary', true);
  get('/api/v1/manifest', 'published manifest', false);
  get('/api/v1/pricebook', 'pricebook pointer', false);
  get('/api/v1/payment', 'payment policy and wallets', false);
  get('/api/v1/payment-info', 'PAYMENT_INFO via the edge', true, 'PAYMENT_INFO');
  get('/api/v1/health', 'HEALTH via the edge', true, 'HEALTH');
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'svc public gateway', version: VERSIONS.api,
      description: 'Metered computation-and-proof service. Discovery, receipt verification and the sandbox are free; quotes are free and limited; executions are paid from an account funded by stablecoin invoices. Core protocol: svc/1 over TLS.',
    },
    servers: [{ url: site.base_url }],
    tags: ['Discovery', 'Finance', 'Execution', 'Proof', 'Identity', 'Receipt', 'Sandbox'].map((name) => ({ name })),
    paths,
    components: {
      schemas,
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'the machine token returned once by the first funding invoice (prefix svcm_)' } },
    },
  };
}
