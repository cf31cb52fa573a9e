// Online backup and restore: `svc-admin backup` while paid flows run, `svcd restore` into a
// new data dir, a node started on it verifies every receipt acknowledged before the backup began and its
// ledger audits clean; a tampered backup, a non-empty target and a missing manifest are refused.
import test from 'ava';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, fundMachine, runBin, Svcd } from '../support/svcd.ts';
import { startSvcd } from '../support/start-svcd.ts';
import { idPart } from '../../src/store/key-codec.ts';
import { put, Store } from '../../src/store/store.ts';
import { flowsUntil, paidFlow } from './flows.ts';
import { coreFixture } from '../support/core-fixture.ts';
import { takeBackup } from '../../src/core/backup.ts';
import { ServiceError } from '../../src/errors.ts';

/** The SHA-256 of a backup's manifest as it is now (what an operator computes who trusts the copy). */
const manifestSha = (dir: string) => (existsSync(join(dir, 'backup-manifest.json'))
  ? createHash('sha256').update(readFileSync(join(dir, 'backup-manifest.json'))).digest('hex') : '0'.repeat(64));

function listFiles(root: string, dir = root): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? listFiles(root, p) : [p.slice(root.length + 1)];
  });
}

/** Rewrites `dir`'s manifest to list its files as they now are: what a forger of the backup would do. */
function rewriteManifest(dir: string): void {
  const mpath = join(dir, 'backup-manifest.json');
  const manifest = JSON.parse(readFileSync(mpath, 'utf8'));
  manifest.files = listFiles(dir).filter((p) => p !== 'backup-manifest.json').map((p) => ({
    path: p, sha256: createHash('sha256').update(readFileSync(join(dir, p))).digest('hex'),
    bytes: statSync(join(dir, p)).size,
  }));
  writeFileSync(mpath, JSON.stringify(manifest));
}

const until = async (cond: () => boolean) => {
  while (!cond()) await new Promise((r) => setTimeout(r, 20));
};

test('backup during paid flows, restore: the restored node verifies every earlier receipt', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'svc-backup-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const s = await startSvcd(t);
  const machine = 'backup-flows';
  const token = await fundMachine(s, machine, 10);
  const c = await s.edge();
  t.teardown(() => c.close());
  const first = [await paidFlow(c, machine, token), await paidFlow(c, machine, token)];

  // four lanes of quote → accept → execute keep writing while the backup reads its snapshot
  let stop = false;
  const load = flowsUntil(c, machine, token, 4, () => stop);
  await until(() => load.receipts.length >= 8);
  const acknowledged = [...first, ...load.receipts];
  const dir = join(tmp, 'backup');
  const b = await s.svcAdmin(['--json', 'backup', dir]);
  const duringBackup = load.receipts.length - (acknowledged.length - first.length);
  stop = true;
  await load.done;
  t.log(`${acknowledged.length} receipts before the backup, ${duringBackup} while it ran`);
  t.deepEqual(load.errors, [], 'no paid flow failed while the backup ran');
  t.is(b.code, 0, b.stderr + b.stdout);
  const reply = JSON.parse(b.stdout);
  t.true(reply.ledger.ok, 'the copy holds the ledger invariant');
  t.true(reply.audit.clean, JSON.stringify(reply.audit.discrepancies));
  t.is(reply.dir, dir);
  const files = (reply.files as { path: string }[]).map((f) => f.path);
  for (const f of ['node-ed25519.pem', 'result-key.bin', 'bct-key.bin', 'quote-key.bin', 'ledger/CURRENT']) {
    t.true(files.includes(f), f);
  }
  t.is(statSync(dir).mode & 0o777, 0o700, 'the backup dir is private');
  t.is(statSync(join(dir, 'node-ed25519.pem')).mode & 0o777, 0o600);
  t.deepEqual(readdirSync(tmp), ['backup'], 'no temporary dir left beside it');

  // a second backup to the same dir is refused: it is not empty
  const again = await s.svcAdmin(['backup', dir]);
  t.is(again.code, 1);
  t.regex(again.stderr, /invalid_request: .*exists and is not an empty directory/);

  // restore into a new data dir and start a node on it
  const restored = join(tmp, 'restored');
  const r = await runBin(BIN.svcd, ['restore', '--expect-sha256', manifestSha(dir), dir, restored]);
  t.is(r.code, 0, r.stderr + r.stdout);
  t.regex(r.stdout, /invariant holds/);
  const s2 = new Svcd({}, restored);
  t.teardown(async () => { await s2.stop(); });
  await s2.start(['start']);
  const c2 = await s2.edge();
  t.teardown(() => c2.close());
  for (const id of acknowledged) {
    const v = await c2.request('VERIFY_RECEIPT', { receipt_id: id, machine_id: machine });
    t.true(v.valid === true, `${id} verifies on the restored node`);
  }
  // the same through the public CLI, as the restore drill in docs/operations.md does it
  const cli = await s2.svc(['--json', '--machine-id', machine, 'verify-receipt', acknowledged[0]!]);
  t.is(cli.code, 0, cli.stderr);
  t.true(JSON.parse(cli.stdout).valid);
  const offline = await runBin(BIN.svcd, ['audit'], { SVC_DATA_DIR: restored });
  t.regex(offline.stderr, /is svcd running\? then use svc-admin audit/, 'the offline audit refuses a running node');
  const audited = await s2.svcAdmin(['--json', 'audit']);
  t.is(audited.code, 0, audited.stdout);
  t.true(JSON.parse(audited.stdout).totals.receipts >= acknowledged.length);
  const checked = await s2.stopAndCheckLedger();
  t.is(checked.exitCode, 0);
  t.true(checked.ok, checked.problems.join('; '));

  // restoring over a data dir that is not empty is refused
  const over = await runBin(BIN.svcd, ['restore', '--expect-sha256', manifestSha(dir), dir, restored]);
  t.is(over.code, 1);
  t.regex(over.stderr, /exists and is not an empty directory/);

  // tampered backups are refused, naming the file, and leave no data dir behind
  const tamper = (name: string, edit: (d: string) => void) => {
    const copy = join(tmp, `tampered-${name}`);
    cpSync(dir, copy, { recursive: true });
    edit(copy);
    return copy;
  };
  const ldb = readdirSync(join(dir, 'ledger')).find((f) => f.endsWith('.ldb') || f.endsWith('.log'))!;
  const cases: [string, string, RegExp][] = [
    [tamper('key', (d) => {
      const p = join(d, 'result-key.bin');
      const k = readFileSync(p);
      k[0]! ^= 1;
      writeFileSync(p, k);
    }), 'result-key', /result-key\.bin: SHA-256 differs from the manifest/],
    [tamper('ledger', (d) => {
      const p = join(d, 'ledger', ldb);
      const k = readFileSync(p);
      k[k.length >> 1]! ^= 0xff;
      writeFileSync(p, k);
    }), 'ledger', new RegExp(`ledger/${ldb.replace('.', '\\.')}: SHA-256 differs`)],
    [tamper('extra', (d) => writeFileSync(join(d, 'ledger', '999999.ldb'), 'x')), 'extra',
      /999999\.ldb: not in the manifest/],
    [tamper('missing', (d) => rmSync(join(d, 'bct-key.bin'))), 'missing', /bct-key\.bin: in the manifest but missing/],
    [tamper('manifest', (d) => rmSync(join(d, 'backup-manifest.json'))), 'manifest', /holds no backup-manifest\.json/],
  ];
  for (const [copy, name, why] of cases) {
    const target = join(tmp, `restore-${name}`);
    const x = await runBin(BIN.svcd, ['restore', '--expect-sha256', manifestSha(copy), copy, target]);
    t.is(x.code, 1, `${name}: ${x.stdout}`);
    t.regex(x.stderr, why, name);
    t.false(existsSync(target), `${name}: no data dir created`);
  }

  // a ledger edited with its manifest rewritten to match: the hashes agree, the invariant does not
  const forged = join(tmp, 'forged');
  cpSync(dir, forged, { recursive: true });
  const store = await Store.open(forged);
  const acct = (await store.get('accounts', idPart(machine)))!;
  const available = String(BigInt(acct.available as string) + 1n);
  await store.write([put('accounts', idPart(machine), { ...acct, available })]);
  await store.close();
  rewriteManifest(forged);
  const f = await runBin(BIN.svcd, ['restore', '--expect-sha256', manifestSha(forged), forged,
    join(tmp, 'restore-forged')]);
  t.is(f.code, 1, f.stdout);
  t.regex(f.stderr, new RegExp(`audit: ledger: ${machine}: available \\d+ but journal sums to \\d+`));
  t.false(existsSync(join(tmp, 'restore-forged')));
  t.false(readdirSync(tmp).some((n) => n.startsWith('.')), 'no temporary dir left behind');
});

test('a node that rotated its keys: the backup holds every key file, old ones too, and the restore verifies '
  + 'the receipts of each key', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'svc-backup-keys-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const s = await startSvcd(t, {}, { args: ['core'] });
  const machine = 'backup-keys';
  const token = await fundMachine(s, machine, 5);
  const c = await s.edge();
  t.teardown(() => c.close());
  const receipts = [await paidFlow(c, machine, token)];
  for (let i = 0; i < 2; i++) {
    const r = await s.svcAdmin(['--json', 'rotate-node-key']);
    t.is(r.code, 0, r.stderr);
    receipts.push(await paidFlow(c, machine, token));
  }
  const dir = join(tmp, 'backup');
  const b = await s.svcAdmin(['--json', 'backup', dir]);
  t.is(b.code, 0, b.stderr);
  const files = (JSON.parse(b.stdout).files as { path: string }[]).map((f) => f.path);
  const keys = readdirSync(join(s.dataDir, 'keys')).map((f) => `keys/${f}`);
  t.is(keys.length, 6, 'two rotations: a signing, a result and a BCT key each');
  for (const f of ['keyring.json', 'node-ed25519.pem', 'result-key.bin', 'bct-key.bin', ...keys]) {
    t.true(files.includes(f), f);
  }
  t.is(statSync(join(dir, keys[0]!)).mode & 0o777, 0o600);
  // the restore's audit verifies every receipt with the restored key set: all three keys are there
  const restored = join(tmp, 'restored');
  const r = await runBin(BIN.svcd, ['restore', '--expect-sha256', manifestSha(dir), dir, restored]);
  t.is(r.code, 0, r.stderr + r.stdout);
  t.regex(r.stdout, /audit clean: 3 receipts verify/);
  // a key set that lost its first signing key: the restore refuses, the receipts of that key do not verify
  const partial = join(tmp, 'partial');
  cpSync(dir, partial, { recursive: true });
  const ring = JSON.parse(readFileSync(join(partial, 'keyring.json'), 'utf8'));
  ring.signing = ring.signing.slice(1);
  writeFileSync(join(partial, 'keyring.json'), JSON.stringify(ring));
  rewriteManifest(partial);
  const x = await runBin(BIN.svcd, ['restore', '--expect-sha256', manifestSha(partial), partial,
    join(tmp, 'restore-partial')]);
  t.is(x.code, 1, x.stdout);
  t.regex(x.stderr, new RegExp(`receipt: ${receipts[0]} does not verify \\(unknown_key\\)`));
});

test('a backup changed since it was taken: --expect-sha256 refuses it; key files a restore would make anew are '
  + 'refused', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'svc-backup-sha-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const s = await startSvcd(t, {}, { args: ['core'] });
  const machine = 'backup-sha';
  const token = await fundMachine(s, machine, 5);
  const c = await s.edge();
  t.teardown(() => c.close());
  await paidFlow(c, machine, token);
  const dir = join(tmp, 'backup');
  const b = await s.svcAdmin(['--json', 'backup', dir]);
  t.is(b.code, 0, b.stderr);
  const recorded = JSON.parse(b.stdout).manifest_sha256 as string;
  /** a copy of the backup changed by `edit`, its manifest's hashes rewritten to match */
  const forge = (name: string, edit: (d: string) => Promise<void> | void) => async () => {
    const copy = join(tmp, name);
    cpSync(dir, copy, { recursive: true });
    await edit(copy);
    rewriteManifest(copy);
    return copy;
  };
  // a planted token: no money moves, so the invariant and the audit cannot see it
  const planted = await forge('planted-token', async (d) => {
    const store = await Store.open(d);
    const m = (await store.get('machines', idPart(machine)))!;
    await store.write([put('machines', idPart(machine), { ...m, token_sha256: 'ab'.repeat(32) })]);
    await store.close();
  })();
  const refused = await runBin(BIN.svcd, ['restore', '--expect-sha256', recorded, planted, join(tmp, 'r1')]);
  t.is(refused.code, 1, refused.stdout);
  t.regex(refused.stderr, /backup-manifest\.json: SHA-256 [0-9a-f]{64} is not [0-9a-f]{64}, the one recorded/);
  t.false(existsSync(join(tmp, 'r1')));
  // without the recorded hash nothing can tell the planted copy from the backup taken: restore asks for it
  const unchecked = await runBin(BIN.svcd, ['restore', planted, join(tmp, 'r2')]);
  t.is(unchecked.code, 2, unchecked.stdout);
  t.regex(unchecked.stderr, /usage: svcd restore --expect-sha256 MANIFEST_SHA256 <backup dir> <new data dir>/);
  t.regex(unchecked.stderr, /sha256sum <backup dir>\/backup-manifest\.json/);
  t.false(existsSync(join(tmp, 'r2')));
  // key files dropped from the backup and its manifest: restore would have made new ones
  const keyless = await forge('keyless', (d) => {
    rmSync(join(d, 'result-key.bin'));
    rmSync(join(d, 'bct-key.bin'));
  })();
  const k = await runBin(BIN.svcd, ['restore', '--expect-sha256', manifestSha(keyless), keyless, join(tmp, 'r3')]);
  t.is(k.code, 1, k.stdout);
  t.regex(k.stderr, /result-key\.bin: not in the backup/);
  t.regex(k.stderr, /bct-key\.bin: not in the backup/);
  t.false(existsSync(join(tmp, 'r3')));
  // the untouched backup, with the hash it printed: restored, and said so
  const ok = await runBin(BIN.svcd, ['restore', '--expect-sha256', recorded, dir, join(tmp, 'r4')]);
  t.is(ok.code, 0, ok.stderr);
  t.regex(ok.stdout, new RegExp(`manifest SHA-256 ${recorded}, as expected`));
  t.is((await runBin(BIN.svcd, ['restore', '--expect-sha256', 'xyz', dir, join(tmp, 'r5')])).code, 2);
  // a manifest that is not JSON is named
  const broken = join(tmp, 'broken');
  cpSync(dir, broken, { recursive: true });
  writeFileSync(join(broken, 'backup-manifest.json'), '{"format": "svc_backup_v1", "fil');
  const bj = await runBin(BIN.svcd, ['restore', '--expect-sha256', manifestSha(broken), broken, join(tmp, 'r6')]);
  t.is(bj.code, 1);
  t.regex(bj.stderr, /backup-manifest\.json is not JSON/);
});

test('two backups racing to one new dir (both found it empty): one is written, the other is invalid_request, '
  + 'not internal', async (t) => {
  const { store, identity, dir: dataDir } = await coreFixture(t);
  const tmp = mkdtempSync(join(tmpdir(), 'svc-backup-race-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const target = join(tmp, 'twin');
  // both check the target before either renames its copy into place
  const both = await Promise.allSettled([0, 1].map(() => takeBackup(store, dataDir, target, identity)));
  t.deepEqual(both.map((x) => x.status).sort(), ['fulfilled', 'rejected']);
  const lost = both.find((x) => x.status === 'rejected') as PromiseRejectedResult;
  t.true(lost.reason instanceof ServiceError, String(lost.reason));
  t.is((lost.reason as ServiceError).code, 'invalid_request');
  t.regex(lost.reason.message, /exists and is not an empty directory \(written meanwhile by another run\)/);
  t.deepEqual(readdirSync(tmp), ['twin'], 'no temporary dir left behind');
});
