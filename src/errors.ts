// The error catalogue: every error the service raises is built from an entry here (code → HTTP
// status, whether its message may be shown to callers). Callers branch on `code`, never on classes.
// Surfaces (HTTP, svc/1, CLI exit codes) each map from this table in exactly one place.

export const ERRORS = {
  invalid_request: { status: 400, expose: true },
  unauthorized: { status: 401, expose: true },
  not_found: { status: 404, expose: true },
  conflict: { status: 409, expose: true },
  rate_limited: { status: 429, expose: true },
  busy: { status: 503, expose: true },
  cancelled: { status: 499, expose: true },
  kernel_failed: { status: 500, expose: false },
  internal: { status: 500, expose: false },
} as const satisfies Record<string, { status: number; expose: boolean }>;

export type ErrorCode = keyof typeof ERRORS;

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
    return this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }

  static fromWire(w: { code?: unknown; message?: unknown; details?: unknown }): ServiceError {
    const code = typeof w.code === 'string' && w.code in ERRORS ? (w.code as ErrorCode) : 'internal';
    const message = typeof w.message === 'string' ? w.message : 'internal error';
    const details = w.details && typeof w.details === 'object' ? (w.details as Record<string, unknown>) : undefined;
    return new ServiceError(code, message, details);
  }
}

export function isServiceError(e: unknown): e is ServiceError {
  return e instanceof ServiceError;
}
