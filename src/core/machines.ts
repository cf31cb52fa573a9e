// Machine credentials (DESIGN.md §4): the first FUND_ACCOUNT for an unclaimed machine_id claims it
// and returns a token once ("svcm_" + 32 random bytes, base64url); only its SHA-256 is stored.
// Every later call touching that machine's account must present it. Comparison is constant-time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../errors.ts';
import { idPart } from '../store/key-codec.ts';
import { put, type Op, type Store } from '../store/store.ts';

export const TOKEN_PREFIX = 'svcm_';

export function newToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

const hashToken = (t: string) => createHash('sha256').update(t, 'utf8').digest();

export interface MachineRecord {
  token_sha256: string;
  created_at: string;
  rotated_at?: string;
  /** the idempotency record holding the claim reply's sealed token, until the token is first used */
  replay_record?: string;
}

export async function getMachine(store: Store, machineId: string): Promise<MachineRecord | undefined> {
  return (await store.get('machines', idPart(machineId))) as MachineRecord | undefined;
}

export function claimOps(machineId: string, token: string, at: Date): Op[] {
  return [put('machines', idPart(machineId), { token_sha256: hashToken(token).toString('hex'), created_at: at.toISOString() })];
}

export function rotateOps(machineId: string, rec: MachineRecord, token: string, at: Date): Op[] {
  return [put('machines', idPart(machineId), { ...rec, token_sha256: hashToken(token).toString('hex'), rotated_at: at.toISOString() })];
}

/** Throws 401 unless `token` is the machine's current token. */
export async function authenticate(store: Store, machineId: string, token: string | undefined): Promise<MachineRecord> {
  return checkToken(await getMachine(store, machineId), token);
}

/** authenticate() on a machine record the caller has already read (one read per request, not two). */
export function checkToken(rec: MachineRecord | undefined, token: string | undefined): MachineRecord {
  if (!rec) throw new ServiceError('unauthorized', 'machine_id is not claimed: create a funding invoice first (FUND_ACCOUNT returns the machine token)');
  if (!token) throw new ServiceError('unauthorized', 'machine token required (Authorization: Bearer over HTTP, auth.token over svc/1)');
  const want = Buffer.from(rec.token_sha256, 'hex');
  if (!timingSafeEqual(hashToken(token), want)) throw new ServiceError('unauthorized', 'machine token is not valid for this machine_id');
  return rec;
}
