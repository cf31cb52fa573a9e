// Online backup and restore. A backup is a data dir of its own: `ledger/`, a fresh LevelDB
// filled from one LevelDB snapshot of the live one (an iterator reads from the snapshot taken when it is
// created, so the copy is consistent across every sublevel while svcd keeps writing), the node's key
// files, and `backup-manifest.json` (SHA-256 of every file, the ledger invariant, the audit, the journal
// head). Restore checks all of it before the data dir exists. Not here: scheduling, off-host copies.
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { ServiceError } from '../errors.ts';
import { canonicalJson } from '../protocol/canonical.ts';
import { copyRecords, Store } from '../store/store.ts';
import { audit, type AuditReport } from './audit.ts';
import type { LedgerCheck } from './ledger.ts';
import { KEYRING_FILE, NodeIdentity } from './node-identity.ts';

export const MANIFEST_FILE = 'backup-manifest.json';
export const BACKUP_FORMAT = 'svc_backup_v1';
/**
 * The data dir's secrets and certificate (docs/operations.md "The data dir"); the ones present are copied,
 * with every file of the key set (keyring.json and the keys/ of rotated keys, retired ones too: what they
 * signed or sealed must still verify on the restored node).
 */
export const KEY_FILES = [
  'node-ed25519.pem', 'result-key.bin', 'bct-key.bin', 'quote-key.bin', 'edge-cert.pem', 'edge-key.pem', KEYRING_FILE,
] as const;
/** Key files every node has from its first start, which a restore must not make anew. */
const REQUIRED_KEY_FILES = ['node-ed25519.pem', 'result-key.bin', 'bct-key.bin'] as const;

export interface BackupFile { path: string; sha256: string; bytes: number }

export interface JournalHead {
  /** journal entries and accounts in the copy */
  entries: number;
  accounts: number;
  /** SHA-256 over every journal record in key order (key, LF, canonical JSON value, LF) */
  sha256: string;
  /** the latest entry's time, or null for an empty journal */
  last_at: string | null;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  created_at: string;
  node_id: string;
  key_id: string;
  /** LevelDB records copied (every sublevel) */
  records: number;
  files: BackupFile[];
  ledger: LedgerCheck;
  audit: { clean: boolean; discrepancies: string[] };
  journal_head: JournalHead;
}

const sha256File = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

function listFiles(root: string, dir = root): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? listFiles(root, p) : [relative(root, p)];
  }).sort();
}

function isEmptyDir(p: string): boolean {
  return statSync(p).isDirectory() && readdirSync(p).length === 0;
}

/** A target that may be created: absent, or an empty directory (rename(2) replaces an empty one). */
function checkTarget(target: string, what: string): void {
  if (!isAbsolute(target)) {
    throw new ServiceError('invalid_request', `${what} must be an absolute path: ${target}`, { field: 'dir' });
  }
  if (existsSync(target) && !isEmptyDir(target)) {
    const msg = `${what} ${target} exists and is not an empty directory`;
    throw new ServiceError('invalid_request', msg, { field: 'dir' });
  }
  if (!existsSync(dirname(target))) {
    throw new ServiceError('invalid_request', `the parent of ${what} ${target} does not exist`, { field: 'dir' });
  }
}

/**
 * Renames a complete `tmp` into place: a target another backup or restore filled meanwhile (both checked
 * it empty) is refused as the first check would have refused it, not surfaced as a raw ENOTEMPTY.
 */
function moveIntoPlace(tmp: string, target: string, what: string): void {
  try {
    renameSync(tmp, target);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
    const msg = `${what} ${target} exists and is not an empty directory (written meanwhile by another run)`;
    throw new ServiceError('invalid_request', msg, { field: 'dir' }, { cause: e });
  }
}

/** A private sibling of `target` to build in, renamed into place only when complete. */
function tempSibling(target: string): string {
  const tmp = join(dirname(target), `.${basename(target)}.tmp-${randomBytes(6).toString('hex')}`);
  mkdirSync(tmp, { mode: 0o700 });
  return tmp;
}

export async function journalHead(store: Store): Promise<JournalHead> {
  const h = createHash('sha256');
  let entries = 0, accounts = 0;
  let last: string | null = null;
  for await (const [k, v] of store.entries('journal')) {
    h.update(`${k}\n${canonicalJson(v)}\n`);
    entries++;
    const at = v.at as string;
    if (last === null || at > last) last = at;
  }
  for await (const _ of store.entries('accounts')) accounts++;
  return { entries, accounts, sha256: h.digest('hex'), last_at: last };
}

/**
 * Writes a backup of the running node to `target` (absolute; absent or an empty directory): built in a
 * hidden sibling and renamed into place once its manifest is written, so `target` is complete or absent.
 */
export async function takeBackup(
  store: Store, dataDir: string, target: string, identity: NodeIdentity, now = new Date(),
): Promise<BackupManifest> {
  checkTarget(target, 'the backup dir');
  const tmp = tempSibling(target);
  try {
    const copy = await Store.open(tmp);
    let records: number, report: AuditReport, head: JournalHead;
    try {
      records = await copyRecords(store, copy);
      report = await audit(copy, identity, now);
      head = await journalHead(copy);
    } finally {
      await copy.close();
    }
    // synchronous from here to the manifest: a key rotation cannot come between the files and the key_id
    for (const f of new Set<string>([...KEY_FILES, ...identity.keyFiles()])) {
      if (!existsSync(join(dataDir, f))) continue;
      mkdirSync(dirname(join(tmp, f)), { recursive: true, mode: 0o700 });
      copyFileSync(join(dataDir, f), join(tmp, f));
      chmodSync(join(tmp, f), 0o600);
    }
    const files = listFiles(tmp).map((p) => ({
      path: p, sha256: sha256File(join(tmp, p)), bytes: statSync(join(tmp, p)).size,
    }));
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT, created_at: now.toISOString(), node_id: identity.nodeId, key_id: identity.keyId,
      records, files, ledger: report.ledger, audit: { clean: report.clean, discrepancies: report.discrepancies },
      journal_head: head,
    };
    writeFileSync(join(tmp, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600 });
    moveIntoPlace(tmp, target, 'the backup dir');
    return manifest;
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}

export interface RestoreResult {
  manifest: BackupManifest;
  audit: AuditReport;
  /** SHA-256 of backup-manifest.json as restored: what BACKUP replied as manifest_sha256 */
  manifestSha256: string;
}

/** Why a backup cannot be used: every reason found, or [] when it checks out. */
function checkFiles(backup: string, manifest: BackupManifest): string[] {
  const problems: string[] = [];
  const listed = new Map(manifest.files.map((f) => [f.path, f]));
  for (const p of listFiles(backup)) {
    if (p === MANIFEST_FILE) continue;
    const f = listed.get(p);
    if (!f) { problems.push(`${p}: not in the manifest`); continue; }
    listed.delete(p);
    if (sha256File(join(backup, p)) !== f.sha256) problems.push(`${p}: SHA-256 differs from the manifest`);
  }
  for (const p of listed.keys()) problems.push(`${p}: in the manifest but missing`);
  // restoring without one would make a new key: what the old one signed, tagged or sealed would no
  // longer verify or open (quote-key.bin may be new: only outstanding free quotes are then refused)
  for (const k of REQUIRED_KEY_FILES) {
    if (!manifest.files.some((f) => f.path === k)) problems.push(`${k}: not in the backup`);
  }
  return problems;
}

/**
 * Restores `backup` into `dataDir` (absent or an empty directory) for a stopped node: first the manifest
 * is the one BACKUP wrote (`expectSha256`, the manifest_sha256 it printed, kept apart from the backup);
 * then the manifest's hashes and required key files, then, on a private copy, the ledger invariant, the
 * audit (every receipt verified against the backed-up node key) and the journal head; only then is the
 * copy renamed into place. Throws naming every problem found; nothing is left at `dataDir` then.
 */
export async function restoreBackup(
  backup: string, dataDir: string, expectSha256: string,
): Promise<RestoreResult> {
  checkTarget(dataDir, 'the data dir');
  const mpath = join(backup, MANIFEST_FILE);
  if (!existsSync(mpath)) throw new ServiceError('invalid_request', `${backup} holds no ${MANIFEST_FILE}`);
  const refused = (problems: string[]) => new ServiceError(
    'invalid_request', `backup ${backup} refused:\n  ${problems.join('\n  ')}`, { problems },
  );
  const manifestSha256 = sha256File(mpath);
  if (manifestSha256 !== expectSha256.toLowerCase()) {
    throw refused([`${MANIFEST_FILE}: SHA-256 ${manifestSha256} is not ${expectSha256}, the one recorded when the `
      + 'backup was taken: the backup was changed since']);
  }
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(readFileSync(mpath, 'utf8')) as BackupManifest;
  } catch (e) {
    throw new ServiceError('invalid_request', `${mpath} is not JSON: ${(e as Error).message}`);
  }
  if (manifest?.format !== BACKUP_FORMAT || !Array.isArray(manifest.files)) {
    throw new ServiceError('invalid_request', `${mpath} is not a ${BACKUP_FORMAT} manifest`);
  }
  const bad = checkFiles(backup, manifest);
  if (bad.length) throw refused(bad);
  const tmp = tempSibling(dataDir);
  try {
    for (const f of manifest.files) {
      mkdirSync(dirname(join(tmp, f.path)), { recursive: true, mode: 0o700 });
      copyFileSync(join(backup, f.path), join(tmp, f.path));
      chmodSync(join(tmp, f.path), 0o600);
    }
    const identity = NodeIdentity.loadOrCreate(tmp);
    const store = await Store.open(tmp);
    let report: AuditReport, head: JournalHead;
    try {
      report = await audit(store, identity);
      head = await journalHead(store);
    } finally {
      await store.close();
    }
    const problems = report.discrepancies.map((d) => `audit: ${d}`);
    if (identity.keyId !== manifest.key_id) {
      problems.push(`node key ${identity.keyId} is not the manifest's ${manifest.key_id}`);
    }
    if (canonicalJson(head) !== canonicalJson(manifest.journal_head)) {
      problems.push(`journal head ${head.sha256} (${head.entries} entries) is not the manifest's`);
    }
    if (problems.length) throw refused(problems);
    moveIntoPlace(tmp, dataDir, 'the data dir');
    return { manifest, audit: report, manifestSha256 };
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}
