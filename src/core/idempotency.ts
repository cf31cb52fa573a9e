// Idempotency records (DESIGN.md §9; IETF httpapi Idempotency-Key draft): the same key with the same body
// replays the first reply, another body is 422, a key still running is 409. A record is scoped by who
// asked and by command, so no caller can replay or poison another's key: the authenticated machine, or —
// for commands without a token — the machine named plus the client address. Records live under a hash of
// (scope, command, key), never the key itself, and are deleted after their window. Holds no command logic.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { key, numPart } from '../store/key-codec.ts';
import { del, put, type Op, type Store } from '../store/store.ts';

export interface IdempotencyRecord {
  digest: string;
  command: string;
  result: Record<string, unknown>;
  at_ms: number;
  expires_ms: number;
  /**
   * The machine token a claiming FUND_ACCOUNT returned, sealed under the idempotency key (AES-256-GCM, key
   * from HKDF over the idempotency key): a retry after a lost reply gets its token back, nobody else can,
   * and it is erased when the token is first used.
   */
  sealed_token?: string;
}

/** The store key of a record: SHA-256 over scope, command and idempotency key. */
export function recordKey(scope: string, command: string, idemKey: string): string {
  return createHash('sha256').update(JSON.stringify(['svc-idempotency-v1', scope, command, idemKey])).digest('hex');
}

const sealKey = (idemKey: string, recKey: string) =>
  Buffer.from(hkdfSync('sha256', Buffer.from(idemKey, 'utf8'), Buffer.from(recKey, 'hex'), 'svc token replay v1', 32));

export function sealToken(token: string, idemKey: string, recKey: string): string {
  const nonce = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', sealKey(idemKey, recKey), nonce);
  const body = Buffer.concat([c.update(token, 'utf8'), c.final()]);
  return Buffer.concat([nonce, body, c.getAuthTag()]).toString('base64url');
}

/** Opens a sealed token; null when the key does not open it. */
export function openToken(sealed: string, idemKey: string, recKey: string): string | null {
  const b = Buffer.from(sealed, 'base64url');
  if (b.length < 29) return null;
  try {
    const d = createDecipheriv('aes-256-gcm', sealKey(idemKey, recKey), b.subarray(0, 12));
    d.setAuthTag(b.subarray(b.length - 16));
    return Buffer.concat([d.update(b.subarray(12, b.length - 16)), d.final()]).toString('utf8');
  } catch {
    return null;
  }
}

export async function loadRecord(store: Store, recKey: string, nowMs: number): Promise<IdempotencyRecord | undefined> {
  const r = await store.get<IdempotencyRecord>('idempotency', recKey);
  if (!r || r.expires_ms <= nowMs) return undefined;
  return r;
}

/** The ops that store a record and its place in the expiry index. */
export function recordOps(recKey: string, rec: IdempotencyRecord): Op[] {
  return [
    put('idempotency', recKey, rec),
    put('idempotency_expiry', key(numPart(rec.expires_ms), recKey), {}),
  ];
}

/** Deletes up to `limit` records whose window has passed; returns how many. */
export async function sweepIdempotency(store: Store, nowMs: number, limit = 1000): Promise<number> {
  const ops: Op[] = [];
  const range = { lt: key(numPart(nowMs), ''), limit };
  let deleted = 0;
  for await (const [k] of store.entries('idempotency_expiry', range)) {
    ops.push(del('idempotency_expiry', k));
    const recKey = k.slice(k.indexOf('!') + 1);
    // the same key may have been used again after this window ended: keep the newer record
    const r = await store.get<IdempotencyRecord>('idempotency', recKey);
    if (r && r.expires_ms <= nowMs) {
      ops.push(del('idempotency', recKey));
      deleted++;
    }
  }
  await store.write(ops);
  return deleted;
}
