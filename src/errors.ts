// The error catalogue: every error the service raises is built from an entry here (code → HTTP
// status, whether its message may be shown to callers). Callers branch on `code`, never on classes.
// Surfaces map from this table in exactly one place each: HTTP (status + ApiError body), svc/1
// (the error frame carries code and message), CLI (exit code 1 with the code printed).

export const ERRORS = {
  // 400: the request itself is wrong
  invalid_request: {
    status: 400, expose: true, doc: 'a field is missing, malformed or out of range (the message names it)',
  },
  bad_frame: { status: 400, expose: true, doc: 'svc/1: the line is not a JSON object request' },
  unsupported_version: { status: 400, expose: true, doc: 'svc/1: "v" is not "svc/1"' },
  unknown_command: { status: 400, expose: true, doc: 'svc/1: no such command' },
  line_too_long: { status: 413, expose: true, doc: 'svc/1: a line exceeded 1 MiB; the connection is closed' },
  unsupported_rail: {
    status: 400, expose: true,
    doc: 'network/asset pair is not one of the four rails, or one this node takes no payments on (no receiving '
      + 'address)',
  },
  payload_too_large: { status: 413, expose: true, doc: 'HTTP: the request body exceeds 1 MiB' },
  method_not_allowed: { status: 405, expose: true, doc: 'HTTP: the path exists but not for this method (see Allow)' },
  request_timeout: { status: 408, expose: true, doc: 'HTTP: the request did not arrive in time (connection closed)' },
  // 401/403/404
  unauthorized: { status: 401, expose: true, doc: 'missing or wrong machine token' },
  forbidden: { status: 403, expose: true, doc: 'the command is not available on this listener (admin commands)' },
  not_found: { status: 404, expose: true, doc: 'no such quote, invoice, receipt or pulse' },
  // 402: x402 (docs/x402.md); details.payment_required (and the PAYMENT-REQUIRED header) say what to pay
  payment_required: {
    status: 402, expose: true,
    doc: 'x402: no token, or a balance short of the issued quote; this execution can be paid per request',
  },
  payment_invalid: {
    status: 402, expose: true, doc: 'x402: the payment does not pay this quote (amount, payee, asset, chain, window, '
      + 'signature, nonce or funds: details.payment_required.error names which)',
  },
  payment_failed: {
    status: 402, expose: true, doc: 'x402: the settlement reverted or was never mined; nothing was charged',
  },
  // 409: the state does not allow it
  payment_pending: {
    status: 409, expose: true, doc: 'x402: the payment\'s settlement is not final yet; send the same request again',
  },
  payment_used: { status: 409, expose: true, doc: 'x402: the authorization paid for another quote already' },
  quote_expired: { status: 409, expose: true, doc: 'the quote passed its expires_at' },
  quote_not_issued: { status: 409, expose: true, doc: 'accept needs an issued quote' },
  quote_not_accepted: { status: 409, expose: true, doc: 'execution needs an accepted quote' },
  quote_wrong_service: { status: 409, expose: true, doc: 'the quote is for another service' },
  quote_wrong_machine: { status: 409, expose: true, doc: 'the quote belongs to another machine_id' },
  input_mismatch: {
    status: 409, expose: true, doc: 'the execution input differs from the quoted one (digest, bits or size)',
  },
  execution_mismatch: { status: 409, expose: true, doc: 'the quote was already executed with a different request' },
  insufficient_balance: { status: 409, expose: true, doc: 'available units do not cover the quote' },
  invoice_expired: { status: 409, expose: true, doc: 'the invoice expired before settlement' },
  invoice_not_expired: { status: 409, expose: true, doc: 'a late payment is credited only to an expired invoice' },
  invoice_already_settled: {
    status: 409, expose: true, doc: 'the invoice was settled with another payment reference (the message names it)',
  },
  deposit_already_credited: {
    status: 409, expose: true,
    doc: 'the chain deposit, or the payment reference, already credited an invoice (the message names it)',
  },
  deposit_dismissed: {
    status: 409, expose: true, doc: 'the chain deposit was dismissed by the operator (refunded or written off)',
  },
  too_many_open_invoices: {
    status: 409, expose: true,
    doc: 'the machine_id (SVC_MAX_OPEN_INVOICES) or the client address (SVC_MAX_OPEN_INVOICES_PER_ADDRESS) has '
      + 'the most open invoices allowed',
  },
  idempotency_in_progress: { status: 409, expose: true, doc: 'a request with this idempotency key is still running' },
  idempotency_key_reused: { status: 422, expose: true, doc: 'the idempotency key was used with a different request' },
  // 429/503: try later
  rate_limited: { status: 429, expose: true, doc: 'too many requests in this rate-limit class' },
  busy: { status: 503, expose: true, doc: 'the kernel queue, the connection or a shared budget is full; retry later' },
  service_unavailable: {
    status: 503,
    expose: true,
    doc: 'the service cannot run this now (for example an execution not offered by this node)',
  },
  shutting_down: {
    status: 503,
    expose: true,
    doc: 'this node is shutting down and did not run the request: send it again (another node, or later)',
  },
  cancelled: { status: 503, expose: true, doc: 'the job was cancelled (client went away or shutdown)' },
  edge_unavailable: { status: 502, expose: true, doc: 'HTTP: the gateway cannot reach the core edge' },
  // 500: ours
  kernel_failed: { status: 500, expose: false, doc: 'a kernel job failed; nothing was charged' },
  internal: { status: 500, expose: false, doc: 'unexpected failure; nothing was charged' },
} as const satisfies Record<string, { status: number; expose: boolean; doc: string }>;

export type ErrorCode = keyof typeof ERRORS;

export function isErrorCode(s: unknown): s is ErrorCode {
  return typeof s === 'string' && Object.hasOwn(ERRORS, s);
}

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ServiceError';
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return ERRORS[this.code].status;
  }

  /** The plain form that crosses thread and process boundaries (errors lose their class there). */
  toWire(): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
    return this.details
      ? { code: this.code, message: this.message, details: this.details }
      : { code: this.code, message: this.message };
  }

  static fromWire(w: { code?: unknown; message?: unknown; details?: unknown }): ServiceError {
    const code = isErrorCode(w.code) ? w.code : 'internal';
    const message = typeof w.message === 'string' ? w.message : 'internal error';
    const details = w.details && typeof w.details === 'object' ? (w.details as Record<string, unknown>) : undefined;
    return new ServiceError(code, message, details);
  }
}

/**
 * Whether an error is ours to fix (logged at error level, where operators page): anything outside
 * the catalogue, and the catalogue's unexposed codes (internal, kernel_failed). Everything else is
 * an answer to the caller (bad input, a conflict, busy), not a fault.
 */
export function isFault(e: unknown): boolean {
  return !(e instanceof ServiceError) || !ERRORS[e.code].expose;
}

/**
 * Why svc could not serve a request it answers `service_unavailable` (its database unreachable, its disk
 * refusing a write), for the operator's log: the caller sees the contract's error only. Undefined otherwise.
 */
export function unavailableCause(e: unknown): unknown {
  return e instanceof ServiceError && e.code === 'service_unavailable' ? e.cause : undefined;
}

/** What a caller may see of any error: catalogue errors as they are, anything else as `internal`. */
export function exposeError(e: unknown): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
  if (e instanceof ServiceError) {
    if (ERRORS[e.code].expose) return e.toWire();
    const message = e.code === 'kernel_failed'
      ? 'kernel job failed; nothing was charged'
      : 'internal error; nothing was charged';
    return { code: e.code, message };
  }
  return { code: 'internal', message: 'internal error; nothing was charged' };
}
