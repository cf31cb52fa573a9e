// CLI output and exit codes, the one mapper from errors to the process exit status:
// 0 ok, 1 the service said no (its error code printed), 2 usage, 3 connection or TLS failure.
import { ServiceError } from '../errors.ts';
import { ConnectionError } from '../client/client.ts';

export const EXIT = { ok: 0, refused: 1, usage: 2, connection: 3 } as const;

export class UsageError extends Error {}

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

export function render(result: Record<string, unknown>, json: boolean): string {
  if (json) return JSON.stringify(result, null, 2);
  const out: string[] = [];
  printValue('', result, out);
  return out.join('\n');
}

/** Prints an error the way each exit code promises and returns that code. */
export function reportError(e: unknown, json: boolean): number {
  if (e instanceof ServiceError) {
    if (json) console.log(JSON.stringify({ ok: false, error: e.toWire() }, null, 2));
    else console.error(`error: ${e.code}: ${e.message}`);
    return EXIT.refused;
  }
  if (e instanceof UsageError) { console.error(`usage error: ${e.message}`); return EXIT.usage; }
  if (e instanceof ConnectionError) { console.error(`connection failed: ${e.message}`); return EXIT.connection; }
  console.error(`error: ${e instanceof Error ? e.message : String(e)}`);
  return EXIT.refused;
}
