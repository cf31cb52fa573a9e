// CLI output and exit codes, the one mapper from errors to the process exit status:
// 0 ok, 1 the service said no (or a proof did not verify), 2 usage, 3 connection or TLS failure.
// Every failure is one Failure: printed as text, or under --json as exactly one JSON object on
// stderr, {"ok":false,"error":{"code","message","source",...}} (the ApiError shape; source "svc"
// when the service refused, "cli" when the CLI did), so scripts read stdout for results only. A
// failure that answers a request names it: request_id, beside "error" as in the contract's ApiError.
import { ServiceError } from '../errors.ts';
import { ConnectionError, ReplyError } from '../client/client.ts';
import type { Check } from '../client/verify.ts';

export const EXIT = { ok: 0, refused: 1, usage: 2, connection: 3 } as const;

export class UsageError extends Error {}

/** A failure of the CLI's own (source "cli"): its code, exit 1 unless said otherwise, and the fix. */
export class CliFailure extends Error {
  constructor(readonly code: string, message: string, readonly opts: { exit?: number; hint?: string } = {}) {
    super(message);
  }
}

/** The connection was lost after this request was sent: it may have run (its id lets the operator look). */
export class LostRequest extends Error {
  constructor(readonly lost: ConnectionError, readonly requestId: string) {
    super(lost.message);
  }
}

/** One step of a command made of several (svc run: quote, accept, execute) failed. */
export class StepFailed extends Error {
  constructor(
    readonly step: string,
    readonly failure: unknown,
    readonly about: { label: string; quoteId?: string; hint?: string },
  ) {
    super(`${about.label} failed`);
  }
}

/** What a result prints as when not --json (JSON.stringify leaves symbol keys out, so --json is unchanged). */
export const HUMAN = Symbol('human');
export type Printable = Record<string, unknown> & { [HUMAN]?: string };
/** Runs a command's work and prints what it returns (or its failure, with the exit code it promises). */
export type Runner = (fn: () => Promise<Printable>) => Promise<void>;

/** A signature or proof the CLI checked did not verify: exit 1, every check in the details. */
export class VerificationError extends Error {
  readonly checks: Check[];
  constructor(message: string, checks: Check[]) {
    super(message);
    this.checks = checks;
  }
}

export interface Failure {
  exit: number;
  code: string;
  message: string;
  source: 'svc' | 'cli';
  /** what to do about it */
  hint?: string;
  /** the usage line of the command, for usage errors */
  usage?: string;
  details?: Record<string, unknown>;
  /** the id of the request the failure answers (the svc/1 frame id this CLI sent) */
  request_id?: string;
  /** the step of a command made of several that failed, and the quote it concerns */
  step?: string;
  quote_id?: string;
}

/** Where the edge certificate's pin is read: every place svcd publishes it. */
export const PIN_HINT = 'pin the edge certificate with --pin <sha256> (or SVC_EDGE_PIN), or trust its CA with --ca'
  + ' <file>. The pin is edge_cert_sha256 in svcd\'s "svcd ready" log line and its SVC_READY_FILE,'
  + ' edge.cert_sha256 in the manifest (/.well-known/svc/svc_public_manifest.json) and on the /trust page;'
  + ' on the server: openssl x509 -in <data-dir>/edge-cert.pem -noout -fingerprint -sha256';

const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'CERT_UNTRUSTED',
]);

function causeCode(e: Error): string | undefined {
  const c = (e as { cause?: { code?: unknown } }).cause?.code;
  return typeof c === 'string' ? c : undefined;
}

/** What went wrong, as code, message, exit status and the fix when the CLI knows it. */
export function failureOf(e: unknown, opts: { unreachableHint?: string } = {}): Failure {
  if (e instanceof ServiceError) {
    const id = e instanceof ReplyError ? { request_id: String(e.requestId) } : {};
    return { exit: EXIT.refused, source: 'svc', ...e.toWire(), ...id };
  }
  if (e instanceof StepFailed) return stepFailure(e, opts);
  if (e instanceof LostRequest) {
    return { ...failureOf(e.lost, {}), request_id: e.requestId,
      hint: 'the request was sent and may have run: a paid step is safe to send again (it answers with what ran)' };
  }
  if (e instanceof CliFailure) {
    return { exit: e.opts.exit ?? EXIT.refused, source: 'cli', code: e.code, message: e.message,
      ...(e.opts.hint ? { hint: e.opts.hint } : {}) };
  }
  if (e instanceof UsageError) return { exit: EXIT.usage, source: 'cli', code: 'usage', message: e.message };
  if (e instanceof VerificationError) {
    return { exit: EXIT.refused, source: 'cli', code: 'verification_failed', message: e.message,
      details: { checks: e.checks } };
  }
  if (e instanceof ConnectionError) {
    const code = causeCode(e);
    const base = { exit: EXIT.connection, source: 'cli' as const, message: e.message };
    if (/does not match the pin/.test(e.message)) {
      return { ...base, code: 'edge_pin_mismatch', hint: `the edge presented another certificate: ${PIN_HINT}` };
    }
    if (code && UNTRUSTED.has(code)) {
      return { ...base, code: 'edge_certificate_untrusted',
        hint: `the edge's certificate is not signed by a CA this machine trusts (svcd makes a self-signed one): ${
          PIN_HINT}` };
    }
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
      return { ...base, code: 'edge_certificate_name_mismatch',
        hint: `connect by a name the certificate holds (--edge localhost:9443), or ${PIN_HINT}` };
    }
    return { ...base, code: 'connection_failed', ...(opts.unreachableHint ? { hint: opts.unreachableHint } : {}) };
  }
  const message = e instanceof Error ? e.message : String(e);
  return { exit: EXIT.refused, source: 'cli', code: 'failed', message };
}

/** A step's failure: the cause's, its message naming the step, and what to do next. */
function stepFailure(e: StepFailed, opts: { unreachableHint?: string }): Failure {
  const f = failureOf(e.failure, opts);
  const hint = [e.about.hint, f.hint].filter(Boolean).join('; ');
  return {
    ...f, message: `${e.about.label} failed: ${f.message}`, step: e.step,
    ...(e.about.quoteId ? { quote_id: e.about.quoteId } : {}), ...(hint ? { hint } : {}),
  };
}

/** One check a line, as `svcd selfcheck` prints them. */
export const checkLines = (checks: readonly Check[]) => checks.map((c) => `  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}`);

/** Prints a failure the way its exit code promises and returns that code. */
export function printFailure(f: Failure, json: boolean): number {
  if (json) {
    const { exit: _exit, code, message, source, request_id, ...rest } = f;
    const error = { code, message, source, ...rest };
    process.stderr.write(`${JSON.stringify({ ok: false, ...(request_id ? { request_id } : {}), error })}\n`);
    return f.exit;
  }
  const head = f.exit === EXIT.connection ? 'connection failed: '
    : f.source === 'svc' ? `error: ${f.code}: ` : 'error: ';
  const lines = [`${head}${f.message}`];
  const checks = f.details?.checks as Check[] | undefined;
  if (f.source === 'cli' && checks) lines.push(...checkLines(checks));
  if (f.request_id) lines.push(`request id: ${f.request_id}`);
  if (f.hint) lines.push(`hint: ${f.hint}`);
  if (f.usage) lines.push(f.usage);
  process.stderr.write(`${lines.join('\n')}\n`);
  return f.exit;
}

function printValue(prefix: string, v: unknown, out: string[]): void {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      printValue(prefix ? `${prefix}.${k}` : k, x, out);
    }
  } else {
    const item = (x: unknown) => (typeof x === 'object' ? JSON.stringify(x) : String(x));
    out.push(`${prefix}: ${Array.isArray(v) ? v.map(item).join(', ') : String(v)}`);
  }
}

export function render(result: object, json: boolean): string {
  if (json) return JSON.stringify(result, null, 2);
  const human = (result as Printable)[HUMAN];
  if (human !== undefined) return human;
  const out: string[] = [];
  printValue('', result, out);
  return out.join('\n');
}
