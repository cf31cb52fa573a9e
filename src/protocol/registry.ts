// The command registry: the one table of the contract's 21 commands (SPEC "Commands") with every
// annotation the surfaces need. Gateway routes, OpenAPI, CAPS, the manifest, CLI help and the MCP
// tool list are all derived from it (DESIGN.md §3). Pure data: no sockets, no fs.
// Also the auxiliary svc/1 commands, which are not capabilities: HEALTH and PAYMENT_INFO (the
// gateway's /api/v1/health and /api/v1/payment-info call them), PULSE (published pulses, needed to
// verify GET_PULSE outputs offline), ROTATE_TOKEN, CREDIT_LATE_PAYMENT, LIST_INVOICES, UNMATCHED,
// CLAIM, DISMISS, REORGS, RESCAN, BACKUP, AUDIT and ROTATE_NODE_KEY (operator, admin socket only: svc-admin derives its
// subcommands from them), and the SANDBOX_* steps, which the gateway's sandbox routes call on the backend listener
// (never on the edge): the sandbox's state lives in the core, so any number of gateway processes
// share it.
import { EXAMPLES, type CallExample } from './examples.ts';
import { SANDBOX_RESULTS, SANDBOX_SCHEMAS } from './sandbox.ts';
import { SERVICES, SERVICE_NAMES } from './services.ts';
import { VERSIONS } from './versions.ts';
import {
  DELIVERY_STATES, DEPOSIT_STATES, INVOICE_STATES, LIMITS, RAIL_IDS, UNMATCHED_REASONS, balanceResult,
  executionArgsSchema, executionResult, id, idempotencyKey, invoiceResult, machineId, note, obj, quoteBodySchema,
  quoteResult, receiptResult, reference, result, type Schema,
} from './schemas.ts';

export type Group = 'Discovery' | 'Finance' | 'Execution' | 'Proof' | 'Identity' | 'Receipt' | 'Admin' | 'Auxiliary';

/** What each group holds, for a reader choosing where to start (openapi.json's tag descriptions). */
export const GROUPS: Readonly<Record<Group, string>> = {
  Discovery: 'Free and anonymous: the greeting with the signed edge proof, the capability list, and the documents'
    + ' that describe this service and its node (manifest, catalog, pricebook, keys) for people and agents.',
  Finance: 'A machine\'s account: funding invoices paid in stablecoins (the first one returns the machine token),'
    + ' the balance, and quotes: free, limited price previews that a funded machine accepts to reserve the units.',
  Execution: 'Paid computations: each takes an accepted quote and the machine token (or, on a node with x402 on,'
    + ' a per-request payment), charges the quoted units and returns a signed receipt that anyone can verify for free.',
  Proof: 'Paid proofs: result-tag verification, event attestations, timestamps and machine event logs, signed or'
    + ' logged so that they verify offline.',
  Identity: 'Paid: register an identity document and receive its signed identity record.',
  Receipt: 'Free receipt verification: the signed receipt of an execution, its key and whether it verifies.',
  Admin: 'Operator commands on the admin socket only: never reachable over HTTP.',
  Auxiliary: 'svc/1 commands outside the capability list that the gateway serves too: the core\'s health, the'
    + ' payment rails, and the published pulses that GET_PULSE outputs are verified against.',
};
/** `gateway`: served to the HTTP gateway on the backend listener only (not a contract command). */
export type Access = 'public' | 'auth' | 'paid' | 'reserved' | 'admin' | 'gateway';
export type Billing =
  | 'free' | 'free_limited' | 'sandbox_free_limited' | 'controlled' | 'paid' | 'free_limited_quote' | 'paid_required';
export type AuthLevel = 'none' | 'machine_context' | 'required' | 'admin';
export type RateClass = 'public_low' | 'paid_execution';

export interface CommandSpec {
  readonly name: string;
  readonly group: Group;
  readonly access: Access;
  /** HTTP route, or null when the command has no public HTTP form */
  readonly http: { readonly method: 'GET' | 'POST'; readonly path: string } | null;
  /** public CLI command names (QUOTE has one per service), empty when none */
  readonly cli: readonly string[];
  readonly billing: Billing;
  readonly auth: AuthLevel;
  readonly rateClass: RateClass;
  readonly execution: boolean;
  /** counted in CAPS / capabilities */
  readonly capability: boolean;
  /**
   * a controlled command that changes nothing a second sending would not (it reads, or records what any
   * read would): a gateway that lost its core connection after sending it sends it to another node
   */
  readonly idempotent?: true;
  /** a gateway-only command (access `gateway`): the gateway's public route that makes this call */
  readonly gatewayRoute?: { readonly method: 'POST'; readonly path: string };
  readonly purpose: string;
  readonly args: Schema;
  readonly result: Schema;
  /** example calls (args and result), hand-picked from real answers: openapi.json shows them */
  readonly examples?: readonly CallExample[];
}

const none = obj({});
const receiptArgs = obj({ receipt_id: id, machine_id: machineId }, ['receipt_id', 'machine_id']);

/**
 * QUOTE's args: `service` picks the body schema of that service (quoteBodySchema), so each
 * service's rules (which input fields, whether bytes is required) hold over svc/1 and HTTP alike.
 * idempotency_key (every body has it) is also named at the top, where surfaces look for it.
 */
const quoteArgs: Schema = {
  type: 'object',
  properties: { service: { type: 'string', enum: [...SERVICE_NAMES] }, idempotency_key: idempotencyKey },
  required: ['service'],
  allOf: SERVICES.map((s) => {
    const body = quoteBodySchema(s.service);
    const service = { type: 'string', const: s.service };
    return {
      if: { type: 'object', properties: { service: { const: s.service } }, required: ['service'] },
      then: { ...body, properties: { service, ...(body.properties as Record<string, Schema>) } },
    };
  }),
};

const execution = (
  name: keyof typeof EXAMPLES, group: Group, path: string, billing: Billing, purpose: string,
): CommandSpec => ({
  name, group, access: 'paid', http: { method: 'POST', path: `/api/v1/executions/${path}` }, cli: [path], billing,
  auth: 'required', rateClass: 'paid_execution', execution: true, capability: true, purpose,
  args: executionArgsSchema(name), result: executionResult, examples: EXAMPLES[name],
});

/** An operator command: admin socket only, no HTTP route, no public CLI form, not billed. */
function admin(
  name: string, group: Group, capability: boolean, purpose: string, args: Schema, result: Schema,
): CommandSpec {
  return {
    name, group, access: 'admin', http: null, cli: [], billing: 'controlled', auth: 'admin', rateClass: 'public_low',
    execution: false, capability, purpose, args, result,
  };
}

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'HELLO', group: 'Discovery', access: 'public', http: { method: 'GET', path: '/api/v1/hello' }, cli: ['hello'],
    billing: 'free', auth: 'none', rateClass: 'public_low', execution: false, capability: true,
    purpose: 'protocol greeting and public edge proof',
    args: obj({
      nonce: { type: 'string', pattern: '^[A-Za-z0-9_-]{8,128}$', description: 'caller nonce the edge proof signs' },
    }),
    result: result({
      protocol: { type: 'string', const: VERSIONS.coreProtocol },
      node_id: { type: 'string' },
      edge_proof: { type: 'object' },
    }, ['protocol', 'node_id', 'edge_proof']),
    examples: EXAMPLES.HELLO,
  },
  {
    name: 'CAPS', group: 'Discovery', access: 'public', http: { method: 'GET', path: '/api/v1/caps' }, cli: ['caps'],
    billing: 'free', auth: 'none', rateClass: 'public_low', execution: false, capability: true,
    purpose: 'machine-readable capability advertisement',
    args: none,
    result: result({
      protocol: { type: 'string' },
      capability_count: { type: 'integer', const: VERSIONS.capabilityCount },
      capabilities: { type: 'array' },
    }, ['protocol', 'capability_count', 'capabilities']),
    examples: EXAMPLES.CAPS,
  },
  {
    name: 'BALANCE', group: 'Finance', access: 'auth',
    http: { method: 'POST', path: '/api/v1/balance' }, cli: ['balance'],
    billing: 'controlled', auth: 'machine_context', rateClass: 'public_low', execution: false, capability: true,
    idempotent: true,
    purpose: 'authenticated account balance view',
    args: obj({ machine_id: machineId }, ['machine_id']),
    result: balanceResult,
    examples: EXAMPLES.BALANCE,
  },
  {
    name: 'QUOTE', group: 'Finance', access: 'public',
    http: { method: 'POST', path: '/api/v1/quotes/{service}' }, cli: SERVICE_NAMES.map((s) => `quote-${s}`),
    billing: 'free_limited', auth: 'none', rateClass: 'public_low', execution: false, capability: true,
    purpose: 'price and reservation preview',
    args: quoteArgs,
    result: quoteResult,
    examples: EXAMPLES.QUOTE,
  },
  {
    name: 'ACCEPT_QUOTE', group: 'Finance', access: 'auth',
    http: { method: 'POST', path: '/api/v1/quotes/{quote_id}/accept' }, cli: ['accept-quote'],
    billing: 'controlled', auth: 'machine_context', rateClass: 'public_low', execution: false, capability: true,
    purpose: 'accept an issued quote after funding',
    args: obj({ quote_id: id, machine_id: machineId, idempotency_key: idempotencyKey }, ['quote_id', 'machine_id']),
    result: quoteResult,
    examples: EXAMPLES.ACCEPT_QUOTE,
  },
  execution('GET_PULSE', 'Execution', 'get-pulse', 'paid', 'baseline proof workload'),
  execution('MAKE_BCT', 'Execution', 'make-bct', 'paid', 'create a sealed BCT packet'),
  execution('VERIFY_BCT', 'Execution', 'verify-bct', 'paid', 'verify and open a BCT packet'),
  execution('VERIFY_RESULT', 'Proof', 'verify-result', 'paid_required', 'verify an execution result tag'),
  execution('ATTEST_EVENT', 'Proof', 'attest-event', 'paid_required', 'create event attestation fields'),
  execution('SUBMIT_ID', 'Identity', 'submit-id', 'paid_required', 'execute the ID service'),
  execution('BVM_EXEC', 'Execution', 'bvm-exec', 'paid_required', 'run bounded BVM bytecode'),
  execution('SEALED_MESSAGE', 'Execution', 'sealed-message', 'paid', 'seal message payloads'),
  execution('TIMESTAMP_PROOF', 'Proof', 'timestamp-proof', 'paid', 'issue timestamp proof metadata'),
  execution('MACHINE_EVENT_LOG', 'Proof', 'machine-event-log', 'paid', 'commit machine event log summaries'),
  {
    name: 'GET_RECEIPT', group: 'Receipt', access: 'reserved', http: null, cli: ['get-receipt'],
    billing: 'free', auth: 'required', rateClass: 'public_low', execution: false, capability: true,
    purpose: 'reserved receipt fetch',
    args: receiptArgs,
    result: receiptResult,
  },
  {
    name: 'VERIFY_RECEIPT', group: 'Receipt', access: 'public',
    http: { method: 'POST', path: '/api/v1/receipts/verify' }, cli: ['verify-receipt'],
    billing: 'free', auth: 'none', rateClass: 'public_low', execution: false, capability: true,
    purpose: 'verify receipt material for free',
    args: receiptArgs,
    result: receiptResult,
    examples: EXAMPLES.VERIFY_RECEIPT,
  },
  {
    name: 'FUND_ACCOUNT', group: 'Finance', access: 'auth',
    http: { method: 'POST', path: '/api/v1/invoices' }, cli: ['fund-account'],
    billing: 'controlled', auth: 'machine_context', rateClass: 'public_low', execution: false, capability: true,
    purpose: 'create account funding invoice',
    args: obj({
      machine_id: machineId, units: { type: 'integer', minimum: 1, maximum: LIMITS.invoiceUnitsMax },
      network: { type: 'string', enum: ['TRON', 'Solana', 'Base'] }, asset: { type: 'string', enum: ['USDT', 'USDC'] },
      idempotency_key: idempotencyKey,
    }, ['machine_id', 'units', 'network', 'asset']),
    result: invoiceResult,
    examples: EXAMPLES.FUND_ACCOUNT,
  },
  {
    name: 'INVOICE_STATUS', group: 'Finance', access: 'auth',
    http: { method: 'GET', path: '/api/v1/invoices/{invoice_id}' }, cli: ['invoice-status'],
    billing: 'controlled', auth: 'machine_context', rateClass: 'public_low', execution: false, capability: true,
    idempotent: true,
    purpose: 'check invoice settlement state',
    args: obj({ invoice_id: id, machine_id: machineId }, ['invoice_id', 'machine_id']),
    result: invoiceResult,
    examples: EXAMPLES.INVOICE_STATUS,
  },
  admin(
    'SETTLE_INVOICE', 'Admin', true, 'administrative settlement',
    obj({ invoice_id: id, reference }, ['invoice_id', 'reference']), invoiceResult,
  ),
  admin('RECOVER_RUNTIME', 'Admin', true, 'administrative runtime recovery', none, result({
    pool_restarted: { type: 'boolean' },
    released_quotes: { type: 'integer' },
    ledger: { type: 'object' },
  }, ['pool_restarted', 'released_quotes', 'ledger'])),
];

/** One step of the anonymous sandbox, as the gateway's route `route` asks the core for it. */
function sandboxStep(
  name: keyof typeof EXAMPLES, step: keyof typeof SANDBOX_RESULTS, args: Schema, path: string,
): CommandSpec {
  return {
    name, group: 'Auxiliary', access: 'gateway', http: null, cli: [],
    billing: 'sandbox_free_limited', auth: 'none', rateClass: 'public_low', execution: step === 'execute',
    capability: false, gatewayRoute: { method: 'POST', path },
    purpose: `the sandbox's ${step} step, for the gateway's POST ${path}`,
    args, result: SANDBOX_RESULTS[step], examples: EXAMPLES[name],
  };
}

/** svc/1 commands outside the capability list. */
export const AUXILIARY: readonly CommandSpec[] = [
  {
    name: 'HEALTH', group: 'Auxiliary', access: 'public', http: { method: 'GET', path: '/api/v1/health' }, cli: [],
    billing: 'free', auth: 'none', rateClass: 'public_low', execution: false, capability: false,
    purpose: 'liveness and readiness of the core',
    args: none,
    result: result({ status: { type: 'string' } }, ['status']),
    examples: EXAMPLES.HEALTH,
  },
  {
    name: 'PAYMENT_INFO', group: 'Auxiliary', access: 'public',
    http: { method: 'GET', path: '/api/v1/payment-info' }, cli: [],
    billing: 'free', auth: 'none', rateClass: 'public_low', execution: false, capability: false,
    purpose: 'payment rails and receiving addresses',
    args: none,
    result: result({ rails: { type: 'array' } }, ['rails']),
    examples: EXAMPLES.PAYMENT_INFO,
  },
  {
    name: 'PULSE', group: 'Auxiliary', access: 'public', http: { method: 'GET', path: '/api/v1/pulses/{index}' },
    cli: [], billing: 'free', auth: 'none', rateClass: 'public_low', execution: false, capability: false,
    purpose: 'a published pulse of the chain (latest, or by index) for offline verification',
    args: obj({
      index: {
        type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER,
        description: 'the pulse index (svc/1: omit for the latest; HTTP: the path segment, or `latest`)',
      },
    }),
    result: result({ pulse: { type: 'object' }, signature: { type: 'string' } }, ['pulse', 'signature']),
    examples: EXAMPLES.PULSE,
  },
  admin(
    'ROTATE_TOKEN', 'Auxiliary', false, 'operator: issue a new machine token (the old one stops working)',
    obj({ machine_id: machineId }, ['machine_id']),
    result({ machine_id: machineId, machine_token: { type: 'string' } }, ['machine_id', 'machine_token']),
  ),
  admin(
    'CREDIT_LATE_PAYMENT', 'Auxiliary', false,
    'operator: credit a payment that arrived after its invoice expired (once; the invoice shows settled_late)',
    obj({ invoice_id: id, reference }, ['invoice_id', 'reference']), invoiceResult,
  ),
  admin(
    'LIST_INVOICES', 'Auxiliary', false,
    'operator: one page of invoices in invoice_id order, filtered by state and machine_id',
    obj({
      state: {
        type: 'string', enum: [...INVOICE_STATES, 'settled_late'],
        description: 'only invoices in this state (expired: pending past expires_at; settled_late: credited late)',
      },
      machine_id: { ...machineId, description: 'only the invoices of this machine_id' },
      limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'most invoices in the page' },
      cursor: { ...id, description: 'next_cursor of the previous page' },
    }),
    result({
      invoices: { type: 'array', items: invoiceResult },
      next_cursor: { anyOf: [{ type: 'string' }, { type: 'null' }], description: 'go on from here; null at the end' },
      scanned: { type: 'integer', description: `invoices read for this page (at most ${LIMITS.listInvoicesScan})` },
    }, ['invoices', 'next_cursor']),
  ),
  admin(
    'UNMATCHED', 'Auxiliary', false,
    'operator: chain deposits no invoice took (late, duplicate, wrong amount, unknown), oldest first; filtered',
    obj({
      rail: { type: 'string', enum: [...RAIL_IDS], description: 'only the deposits of this rail' },
      reason: { type: 'string', enum: [...UNMATCHED_REASONS], description: 'only the deposits queued for this reason' },
      state: {
        type: 'string', enum: [...DEPOSIT_STATES], default: 'unmatched',
        description: 'unmatched (the queue), or every deposit in another state (claimed, dismissed, credited)',
      },
      limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100, description: 'most deposits listed' },
    }),
    result({ deposits: { type: 'array' }, more: { type: 'boolean' } }, ['deposits', 'more']),
  ),
  admin(
    'REORGS', 'Auxiliary', false,
    'operator: deposits a watcher saw reorged out after recording them (reported, never reversed), by rail',
    obj({ rail: { type: 'string', enum: [...RAIL_IDS], description: 'only the deposits of this rail' } }),
    result({ deposits: { type: 'array' } }, ['deposits']),
  ),
  admin(
    'RESCAN', 'Auxiliary', false,
    'operator: have a rail\'s watcher read its chain again from a block (Solana: a slot); nothing credits twice',
    obj({
      rail: { type: 'string', enum: [...RAIL_IDS], description: 'the rail whose watcher reads again' },
      from_block: {
        type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER,
        description: 'the first block (Solana: slot) read again, on the watcher\'s next pass',
      },
    }, ['rail', 'from_block']),
    result({ rail: { type: 'string' }, from_block: { type: 'integer' }, requested_at: { type: 'string' } },
      ['rail', 'from_block', 'requested_at']),
  ),
  admin(
    'WEBHOOKS', 'Auxiliary', false,
    'operator: webhook deliveries (each event to each endpoint): pending, delivered or failed, oldest event first',
    obj({
      state: { type: 'string', enum: [...DELIVERY_STATES], description: 'only the deliveries in this state' },
      event_id: { ...id, description: 'only the deliveries of this event' },
      limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100, description: 'most deliveries listed' },
    }),
    result({ deliveries: { type: 'array' }, more: { type: 'boolean' } }, ['deliveries', 'more']),
  ),
  admin(
    'RESEND_WEBHOOK', 'Auxiliary', false,
    'operator: send an event again to every endpoint it went to, now, with a fresh day of retries',
    obj({ event_id: id }, ['event_id']),
    result({ event_id: { type: 'string' }, scheduled: { type: 'integer' } }, ['event_id', 'scheduled']),
  ),
  admin(
    'DISMISS', 'Auxiliary', false,
    'operator: take a queued deposit out of the queue without a credit (refunded or written off); final',
    obj({
      deposit_id: id,
      outcome: { type: 'string', enum: ['refunded', 'written_off'], description: 'what became of the money' },
      note: { ...note, description: 'why, for the record (shown by unmatched --state dismissed and the audit)' },
      refund_reference: { ...reference, description: 'the refund\'s own transaction, when refunded' },
    }, ['deposit_id', 'outcome', 'note']),
    result({ deposit: { type: 'object' } }, ['deposit']),
  ),
  admin(
    'CLAIM', 'Auxiliary', false,
    'operator: credit an unmatched deposit to an invoice of its rail, once (the amount paid)',
    obj({ deposit_id: id, invoice_id: id }, ['deposit_id', 'invoice_id']),
    result({ deposit: { type: 'object' }, invoice: invoiceResult }, ['deposit', 'invoice']),
  ),
  admin(
    'BACKUP', 'Auxiliary', false,
    'operator: copy the ledger (one consistent snapshot, while serving) and the key files to a new dir',
    obj({
      dir: {
        type: 'string', minLength: 2, maxLength: 4096, pattern: '^/',
        description: 'absolute path on the node\'s host: absent or an empty directory',
      },
    }, ['dir']),
    result({
      dir: { type: 'string' }, manifest_sha256: { type: 'string' }, records: { type: 'integer' },
      files: { type: 'array' }, ledger: { type: 'object' }, audit: { type: 'object' },
      journal_head: { type: 'object' },
    }, ['dir', 'manifest_sha256', 'records', 'files', 'ledger', 'audit', 'journal_head']),
  ),
  admin(
    'AUDIT', 'Auxiliary', false,
    'operator: audit the money (ledger invariant, balances from the journal, totals, cross-checks)',
    obj({ csv: { type: 'boolean', description: 'also return the tables as CSV texts (file name → text)' } }),
    result({
      format: { type: 'string', const: 'svc_audit_v1' }, clean: { type: 'boolean' },
      discrepancies: { type: 'array', items: { type: 'string' } }, ledger: { type: 'object' },
      totals: { type: 'object' }, machines: { type: 'array' }, periods: { type: 'array' },
      invoices: { type: 'array' }, csv: { type: 'object' },
    }, ['format', 'clean', 'discrepancies', 'ledger', 'totals', 'machines', 'periods', 'invoices']),
  ),
  admin(
    'ROTATE_NODE_KEY', 'Auxiliary', false,
    'operator: replace the node signing, result-tag and BCT keys; the retired ones stay published with their windows',
    none,
    result({
      node_id: { type: 'string' }, rotated_at: { type: 'string' }, retired_key_id: { type: 'string' },
      key_id: { type: 'string' }, public_key: { type: 'string' }, first_pulse_index: { type: 'integer' },
      key_set: { type: 'object' },
    }, ['node_id', 'rotated_at', 'retired_key_id', 'key_id', 'public_key', 'key_set']),
  ),
  sandboxStep('SANDBOX_QUOTE', 'quote', SANDBOX_SCHEMAS.quote, '/api/v1/sandbox/quotes/get-pulse'),
  sandboxStep(
    'SANDBOX_ACCEPT', 'accept', obj({ machine_id: machineId, quote_id: id }, ['machine_id', 'quote_id']),
    '/api/v1/sandbox/quotes/{quote_id}/accept',
  ),
  sandboxStep('SANDBOX_EXECUTE', 'execute', SANDBOX_SCHEMAS.execute, '/api/v1/sandbox/executions/get-pulse'),
  sandboxStep('SANDBOX_VERIFY', 'verify', SANDBOX_SCHEMAS.verify, '/api/v1/sandbox/receipts/verify'),
];

export const ALL_COMMANDS: readonly CommandSpec[] = [...COMMANDS, ...AUXILIARY];
const BY_NAME = new Map(ALL_COMMANDS.map((c) => [c.name, c]));

export function commandSpec(name: string): CommandSpec | undefined {
  return BY_NAME.get(name);
}

/**
 * Whether a command acts on a machine's account and so needs its token (machine_context, required).
 * The gateway and the core both read it: the one place this rule is written.
 */
export function needsToken(spec: CommandSpec): boolean {
  return spec.auth === 'machine_context' || spec.auth === 'required';
}

/** A paid execution (billing paid, rate class paid_execution): the commands x402 can pay per request. */
export function isPaidExecution(spec: CommandSpec): boolean {
  return spec.execution && spec.access === 'paid';
}

export const CAPABILITIES: readonly string[] = COMMANDS.filter((c) => c.capability).map((c) => c.name);

export { SERVICES };
