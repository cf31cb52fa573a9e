// MACHINE_EVENT_LOG (DESIGN.md §8): a machine's event-log summary — plain_hex is the UTF-8 JSON
// {count, head_hash, from, to} — appended to the node's machine-event log; the reply carries the
// entry, its inclusion proof and a C2SP signed checkpoint (docs/verify.md §Machine event logs).
import { ServiceError } from '../../errors.ts';
import { canonicalJson, sha256Hex } from '../../protocol/canonical.ts';
import { rfc3339Nanos } from '../../protocol/rfc3339.ts';
import { logFields } from './log-result.ts';
import { bytesOf, type Executor } from './types.ts';

interface Summary { count: number; head_hash: string; from: string; to: string }

export function parseSummary(bytes: Buffer): Summary {
  const bad = (why: string): never => {
    const msg = `plain_hex must be UTF-8 JSON {count, head_hash, from, to}: ${why}`;
    throw new ServiceError('invalid_request', msg, { field: 'plain_hex' });
  };
  let v: unknown;
  try { v = JSON.parse(bytes.toString('utf8')); } catch { return bad('not JSON'); }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return bad('not an object');
  const o = v as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !['count', 'head_hash', 'from', 'to'].includes(k));
  if (extra.length) bad(`unknown field ${extra[0]}`);
  if (!Number.isSafeInteger(o.count) || (o.count as number) < 0) bad('count must be a non-negative integer');
  if (typeof o.head_hash !== 'string' || !/^[0-9a-f]{64}$/.test(o.head_hash)) {
    bad('head_hash must be 64 lowercase hex digits');
  }
  // times that exist (no 30th of February, hour 25 or month 99), compared as the instants they name
  const [from, to] = (['from', 'to'] as const).map((f) => {
    const at = typeof o[f] === 'string' ? rfc3339Nanos(o[f] as string) : null;
    return at ?? bad(`${f} must be an RFC 3339 time`);
  }) as [bigint, bigint];
  if (from > to) bad('from is after to');
  return { count: o.count as number, head_hash: o.head_hash as string, from: o.from as string, to: o.to as string };
}

export const machineEventLog: Executor = async (ctx, q, a) => {
  const raw = bytesOf(a.plain_hex);
  const summary = parseSummary(raw);
  const log = ctx.logs.events;
  let entry: Record<string, unknown> = {};
  const appended = await log.append((index) => {
    entry = {
      format: 'svc_machine_event_log_v1', log_origin: log.origin, index, machine_id: q.machine_id,
      quote_id: q.quote_id, summary, appended_at: ctx.now().toISOString(),
    };
    return Buffer.from(canonicalJson(entry), 'utf8');
  });
  return {
    fields: { entry, ...logFields(log, appended) },
    input_digest: sha256Hex(raw),
    output_digest: sha256Hex(canonicalJson({ entry, checkpoint: appended.checkpoint })),
    status: 'ok',
  };
};
