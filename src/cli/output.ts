// CLI output and exit codes, the one mapper from errors to the process exit status:
// 0 ok, 1 the service said no (or a proof did not verify), 2 usage, 3 connection or TLS failure.
// Every failure is one Failure: printed as text, or under --json as exactly one JSON object on
// stderr, {"ok":false,"error":{"code","message","source",...}} (the ApiError shape; source "svc"
// when the service refused, "cli" when the CLI did), so scripts read stdout for results only.
import { ServiceError } from '../errors.ts';
import { ConnectionError } from '../client/client.ts';
import type { Check } from '../client/verify.ts';

export const EXIT = { ok: 0, refused: 1, usage: 2, connection: 3 } as const;

export class UsageError extends Error {}

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
    return { exit: EXIT.refused, source: 'svc', ...e.toWire() };
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

/** Prints a failure the way its exit code promises and returns that code. */
export function printFailure(f: Failure, json: boolean): number {
  if (json) {
    const { exit: _exit, code, message, source, ...rest } = f;
    const error = { code, message, source, ...rest };
    process.stderr.write(`${JSON.stringify({ ok: false, error })}\n`);
    return f.exit;
  }
  const head = f.exit === EXIT.connection ? 'connection failed: '
    : f.source === 'svc' ? `error: ${f.code}: ` : 'error: ';
  const lines = [`${head}${f.message}`];
  const checks = f.details?.checks as Check[] | undefined;
  if (f.source === 'cli' && checks) for (const c of checks) lines.push(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}`);
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
  const out: string[] = [];
  printValue('', result, out);
  return out.join('\n');
}
