// The ledger checked at start from its last checkpoint, so a start costs what was written since, not the
// whole journal (docs/operations.md "Start-up"). A checkpoint is each account as last verified (its journal
// seq and balances: a mark in `ledger_marks`) and a record in `meta` holding the SHA-256 of every mark in key
// order, signed with the node's Ed25519 key. At start the marks are read with the accounts in one snapshot:
// if the signed digest is theirs, each account is checked against its mark plus the journal entries after its
// seq; else (none yet, a digest or signature that does not hold: a crash while marks were written, a store
// edited by hand) the whole journal is verified, as `svcd audit` always does. Either way the marks of the
// state just verified are written after, then the signed record. A journal entry edited below a mark is not
// seen here: only the full verify (`svcd audit`, `svc-admin audit`) reads every entry. Nodes sharing a store
// each keep their own marks and record (under their node scope), so one's start never spoils another's.
import { createHash } from 'node:crypto';
import { verifyWithRawKey } from '../protocol/ed25519.ts';
import { idFromPart, key, numPart } from '../store/key-codec.ts';
import { batchWriter } from '../store/batch-writer.ts';
import { del, put, type Store, type StoreSnapshot } from '../store/store.ts';
import type { JournalEntry, Ledger, LedgerCheck } from './ledger.ts';
import type { NodeIdentity } from './node-identity.ts';

export const CHECKPOINT_KEY = 'ledger_checkpoint';
const FORMAT = 'svc_ledger_checkpoint_v1';
const BATCH = 1000;

interface Mark { seq: number; available: string; reserved: string }
interface Checkpoint {
  format: typeof FORMAT; node_id: string; key_id: string; at: string; marks: number; digest: string; signature: string;
}
interface AccountRec { available: string; reserved: string; seq: number }

/** How the start verified the ledger, and what it found. */
export interface StartCheck extends LedgerCheck {
  /** `checkpoint`: accounts from their marks and the entries after them; `full`: every journal entry */
  mode: 'checkpoint' | 'full';
  /** journal entries read */
  read: number;
}

const digestLine = (m: string, k: Mark) => `${m}\n${k.seq}\n${k.available}\n${k.reserved}\n`;

/** Where this node's marks and record live: apart from other nodes' on a shared store (Store.nodeScope). */
interface Place { prefix: string; record: string }
const placeOf = (store: Store, identity: NodeIdentity): Place => {
  const scope = store.nodeScope(identity.nodeId);
  if (!scope) return { prefix: '', record: CHECKPOINT_KEY };
  return { prefix: key(scope, ''), record: `${CHECKPOINT_KEY}:${scope}` };
};

async function* accountsOf(store: Store, snapshot: StoreSnapshot): AsyncGenerator<[string, AccountRec]> {
  yield* store.entries<AccountRec & object>('accounts', { snapshot });
}

/** This node's marks, keyed by account (their prefix taken off). */
async function* marksOf(store: Store, place: Place, snapshot: StoreSnapshot): AsyncGenerator<[string, Mark]> {
  const range = { gte: place.prefix, lt: `${place.prefix}\uffff`, snapshot };
  for await (const [k, v] of store.entries<Mark & object>('ledger_marks', range)) {
    yield [k.slice(place.prefix.length), v];
  }
}

const signedBody = (c: Pick<Checkpoint, 'node_id' | 'at' | 'marks' | 'digest'>) =>
  Buffer.from(`${FORMAT}\n${c.node_id}\n${c.at}\n${c.marks}\n${c.digest}`);

/** This node's checkpoint record, if one of its signing keys signed it. */
async function trusted(
  store: Store, identity: NodeIdentity, place: Place, snapshot: StoreSnapshot,
): Promise<Checkpoint | null> {
  for await (const [, v] of store.entries<Checkpoint>('meta', { gte: place.record, lte: place.record, snapshot })) {
    if (v.format !== FORMAT || v.node_id !== identity.nodeId) return null;
    const signer = identity.signingKey(v.key_id);
    if (!signer) return null;
    const raw = Buffer.from(signer.public_key, 'base64url');
    return verifyWithRawKey(raw, signedBody(v), Buffer.from(String(v.signature), 'base64url')) ? v : null;
  }
  return null;
}

/**
 * One account against its mark (or, without one, from its first entry): problems and entries read. An account
 * whose seq is its mark's has not moved since: it must hold the mark's balances, and its journal is not read
 * (an entry added past the account's seq without it, which no batch of the core writes, is the audit's to find).
 */
async function checkAccount(
  store: Store, snapshot: StoreSnapshot, m: string, acct: AccountRec, mark: Mark | undefined, problems: string[],
): Promise<number> {
  const id = idFromPart(m);
  if (mark && acct.seq === mark.seq) {
    if (acct.available !== mark.available || acct.reserved !== mark.reserved) {
      problems.push(`${id}: available ${acct.available}, reserved ${acct.reserved} at seq ${acct.seq}, but verified as `
        + `${mark.available}, ${mark.reserved} there`);
    }
    return 0;
  }
  let a = BigInt(mark?.available ?? 0), r = BigInt(mark?.reserved ?? 0), last = mark?.seq ?? 0, read = 0;
  const range = { gt: key(m, numPart(last)), lt: key(m, '\uffff'), snapshot };
  for await (const [, e] of store.entries<JournalEntry>('journal', range)) {
    read++;
    if (e.seq !== last + 1) problems.push(`${id}: journal seq ${e.seq} follows ${last}`);
    last = e.seq;
    a += BigInt(e.d_available);
    r += BigInt(e.d_reserved);
  }
  if (BigInt(acct.available) !== a) problems.push(`${id}: available ${acct.available} but journal sums to ${a}`);
  if (BigInt(acct.reserved) !== r) problems.push(`${id}: reserved ${acct.reserved} but journal sums to ${r}`);
  if (BigInt(acct.available) < 0n || BigInt(acct.reserved) < 0n) problems.push(`${id}: negative balance`);
  if (acct.seq !== last) problems.push(`${id}: account seq ${acct.seq} but journal ends at ${last}`);
  return read;
}

/** Accounts and this node's marks walked together in key order (both scans of one snapshot). */
async function* joined(store: Store, place: Place, snapshot: StoreSnapshot):
  AsyncGenerator<{ m: string; acct?: AccountRec; mark?: Mark }> {
  const accounts = accountsOf(store, snapshot)[Symbol.asyncIterator]();
  const marks = marksOf(store, place, snapshot)[Symbol.asyncIterator]();
  let a = await accounts.next(), k = await marks.next();
  while (!a.done || !k.done) {
    if (!k.done && (a.done || k.value[0] < a.value[0])) {
      yield { m: k.value[0], mark: k.value[1] };
      k = await marks.next();
    } else if (!a.done && (k.done || a.value[0] < k.value[0])) {
      yield { m: a.value[0], acct: a.value[1] };
      a = await accounts.next();
    } else {
      yield { m: a.value![0], acct: a.value![1], mark: k.value![1] };
      a = await accounts.next();
      k = await marks.next();
    }
  }
}

/**
 * The start's check: from the signed checkpoint when it holds, else the whole journal; then the new
 * checkpoint (marks of every account as verified, the signed digest last). Problems found leave the old one.
 */
export async function verifyAtStart(
  store: Store, ledger: Ledger, identity: NodeIdentity, now: Date,
): Promise<StartCheck> {
  const place = placeOf(store, identity);
  const snapshot = await store.snapshot();
  try {
    const cp = await trusted(store, identity, place, snapshot);
    const problems: string[] = [];
    const h = createHash('sha256');
    const next: NextMark[] = [];
    let marks = 0, accounts = 0, read = 0;
    for await (const { m, acct, mark } of joined(store, place, snapshot)) {
      if (mark) { marks++; h.update(digestLine(m, mark)); }
      if (!acct) {
        problems.push(`${idFromPart(m)}: a checkpoint mark without its account`);
        next.push({ m, was: mark, mark: null });
        continue;
      }
      accounts++;
      if (cp) read += await checkAccount(store, snapshot, m, acct, mark, problems);
      next.push({ m, was: mark, mark: { seq: acct.seq, available: acct.available, reserved: acct.reserved } });
    }
    const marksHold = cp !== null && cp.marks === marks && cp.digest === h.digest('hex');
    if (!marksHold) {
      const full = await ledger.verify(snapshot);
      if (full.ok) await writeCheckpoint(store, identity, place, next, now);
      return { ...full, mode: 'full', read: full.entries };
    }
    const ok = problems.length === 0;
    if (ok) await writeCheckpoint(store, identity, place, next, now, true);
    return { ok, accounts, entries: read, problems, mode: 'checkpoint', read };
  } finally {
    await snapshot.close();
  }
}

/** An account's mark as read (`was`) and as the state just verified has it (`mark`; null: no account). */
interface NextMark { m: string; was: Mark | undefined; mark: Mark | null }

/**
 * The marks that moved (written or removed), then the signed record over all of them; nothing at all when
 * none moved and the record is this node's already (`unchanged`).
 */
async function writeCheckpoint(
  store: Store, identity: NodeIdentity, place: Place, marks: NextMark[], now: Date, unchanged = false,
): Promise<void> {
  const moved = marks.filter((x) => x.mark?.seq !== x.was?.seq || (x.mark === null) !== (x.was === undefined));
  if (unchanged && moved.length === 0) return;
  const h = createHash('sha256');
  let count = 0;
  for (const x of marks) {
    if (x.mark) { h.update(digestLine(x.m, x.mark)); count++; }
  }
  // unsynced: the signed record's synced write below makes them durable with it
  const out = batchWriter(store, BATCH, { sync: false });
  for (const x of moved) {
    await out.add(x.mark ? put('ledger_marks', place.prefix + x.m, x.mark) : del('ledger_marks', place.prefix + x.m));
  }
  await out.end();
  const at = now.toISOString();
  const digest = h.digest('hex');
  const signer = identity.signer();
  const fields = { node_id: identity.nodeId, at, marks: count, digest };
  const record: Checkpoint = {
    format: FORMAT, ...fields, key_id: signer.keyId, signature: signer.sign(signedBody(fields)).toString('base64url'),
  };
  await store.write([put('meta', place.record, record)]);
}
