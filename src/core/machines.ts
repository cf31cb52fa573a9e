// Machine credentials (DESIGN.md §4): the first FUND_ACCOUNT for an unclaimed machine_id claims it
// and returns a token once ("svcm_" + 32 random bytes, base64url); only its SHA-256 is stored.
// Every later call touching that machine's account must present it. Comparison is constant-time,
// and every refusal is the same 401, so a caller cannot tell claimed ids from unclaimed ones.
// The record also lists the machine's open invoices (their count is capped: invoices.ts).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../errors.ts';
import { idPart } from '../store/key-codec.ts';
import { create, replace, type Op, type Store } from '../store/store.ts';

export const TOKEN_PREFIX = 'svcm_';

export function newToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

const hashToken = (t: string) => createHash('sha256').update(t).digest();

export interface MachineRecord {
  token_sha256: string;
  created_at: string;
  rotated_at?: string;
  /** the idempotency record holding the claim reply's sealed token, until the token is first used */
  replay_record?: string;
  /** invoice_id → expires_ms of this machine's pending invoices (settled ones are removed) */
  open_invoices?: Record<string, number>;
}

export async function getMachine(store: Store, machineId: string): Promise<MachineRecord | undefined> {
  return (await store.get('machines', idPart(machineId))) as MachineRecord | undefined;
}

/** The record of a machine claimed now with this token. */
export function claimedRecord(token: string, at: Date): MachineRecord {
  return { token_sha256: hashToken(token).toString('hex'), created_at: at.toISOString() };
}

/**
 * Writes a machine record over `prev`, the one read (undefined: none, a claim): a create or a
 * compare-and-set, so on a shared store a node that read an older record (another node claimed the
 * machine, opened an invoice or rotated its token meanwhile) has its batch refused and runs again on
 * what is there now. A store one process owns holds the same under the machine lock.
 */
export function machineOps(machineId: string, next: MachineRecord, prev: MachineRecord | undefined): Op[] {
  const k = idPart(machineId);
  return [prev ? replace('machines', k, next, prev) : create('machines', k, next)];
}

export function rotateOps(machineId: string, rec: MachineRecord, token: string, at: Date): Op[] {
  const next = { ...rec, token_sha256: hashToken(token).toString('hex'), rotated_at: at.toISOString() };
  return machineOps(machineId, next, rec);
}

/** One message for every refusal: naming the cause would tell claimed machine_ids from free ones. */
const UNAUTHORIZED_MESSAGE = 'a valid machine token for this machine_id is required '
  + '(Authorization: Bearer over HTTP, auth.token over svc/1); '
  + 'the first funding invoice of a machine_id returns its token';

/** Throws 401 unless `token` is the machine's current token. */
export async function authenticate(
  store: Store, machineId: string, token: string | undefined,
): Promise<MachineRecord> {
  return checkToken(await getMachine(store, machineId), token);
}

/** authenticate() on a machine record the caller has already read (one read per request, not two). */
export function checkToken(rec: MachineRecord | undefined, token: string | undefined): MachineRecord {
  // hash and compare even when there is nothing to compare with, so every refusal costs the same
  const want = rec ? Buffer.from(rec.token_sha256, 'hex') : Buffer.alloc(32);
  const matches = timingSafeEqual(hashToken(token ?? ''), want);
  if (!rec || !token || !matches) throw new ServiceError('unauthorized', UNAUTHORIZED_MESSAGE);
  return rec;
}
