// TIMESTAMP_PROOF and MACHINE_EVENT_LOG through the edge: every proof verifies offline (client kit
// verifier and an independent node:crypto check of the signed note), every checkpoint's root
// equals the RFC 6962 root of the leaves so far (recomputed from the returned entries), and
// tampering fails. Also the TransparencyLog against the RFC 6962 recursion for many sizes.
import test from 'ava';
import { createHash, verify as edVerify, createPublicKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSvcd } from '../support/start-svcd.ts';
import { cliJson, fundMachine } from '../support/svcd.ts';
import { verifyTlogProof } from '../../src/client/verify.ts';
import { noteKeyHash } from '../../src/protocol/tlog-format.ts';
import { parseCheckpoint, parseNote, parseTlogProof } from '../../src/kit/tlog.ts';
import { Store } from '../../src/store/store.ts';
import { Kernels } from '../../src/kernels/index.ts';
import { NodeIdentity } from '../../src/core/node-identity.ts';
import { TransparencyLog } from '../../src/core/tlog.ts';
import { canonicalJson } from '../../src/protocol/canonical.ts';
import { H, refPath, refRoot } from '../reference/merkle-ref.ts';

test('TransparencyLog: roots and proofs equal the RFC 6962 recursion for sizes 1..70, ' +
  'and survive reopening', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tlog-'));
  let store = await Store.open(dir);
  const k = Kernels.create();
  const id = NodeIdentity.loadOrCreate(dir);
  let log = new TransparencyLog(store, k, id, 'test', 'svc/test/log');
  const leaves: Uint8Array[] = [];
  for (let i = 0; i < 70; i++) {
    if (i === 40) {
      await store.close();
      store = await Store.open(dir);
      log = new TransparencyLog(store, k, id, 'test', 'svc/test/log');
    }
    const a = await log.append((index) => Buffer.from(`entry ${index}`));
    t.is(a.index, i);
    leaves.push(H(Buffer.of(0), Buffer.from(`entry ${i}`)));
    t.is(Buffer.from(a.root).toString('hex'), Buffer.from(refRoot(leaves)).toString('hex'), `root at size ${i + 1}`);
    t.deepEqual(
      a.proof.map((h) => Buffer.from(h).toString('hex')),
      refPath(i, leaves).map((h) => Buffer.from(h).toString('hex')),
      `path ${i}`,
    );
    t.true((await verifyTlogProof(a.tlogProof, Buffer.from(`entry ${i}`), id.public.public_key, 'svc/test/log')).ok);
  }
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

test('TIMESTAMP_PROOF and MACHINE_EVENT_LOG: ' +
  'signed tokens/entries with C2SP proofs that verify offline; tampering fails', async (t) => {
  const s = await startSvcd(t, {}, { args: ['core'], checkLedger: true });
  const token = await fundMachine(s, 'logger', 1);
  const c = await s.edge();
  t.teardown(() => c.close());
  const auth = { token };
  const exec = async (service: string, plain: string) => {
    const q = await c.request('QUOTE', { service, machine_id: 'logger', bytes: plain.length / 2 });
    await c.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: 'logger' }, auth);
    const command = service.toUpperCase().replaceAll('-', '_');
    return c.request(command, { quote_id: q.quote_id, machine_id: 'logger', plain_hex: plain }, auth);
  };
  const leaves: Uint8Array[] = [];
  let last: any;
  for (let i = 0; i < 6; i++) {
    const digest = createHash('sha256').update(`document ${i}`).digest('hex');
    const r = await exec('timestamp-proof', digest);
    const tok = r.token as any;
    t.deepEqual([tok.serial, tok.digest_sha256, tok.accuracy_ms], [i, digest, 1000]);
    const entry = Buffer.from((r.log as any).entry_base64, 'base64');
    t.is(entry.toString('utf8'), canonicalJson(tok), 'the leaf is the RFC 8785 JSON of the token');
    leaves.push(H(Buffer.of(0), entry));
    const pub = r.log as any;
    // the client kit verifier
    const v = await verifyTlogProof(r.tlog_proof as string, entry, pub.public_key, pub.origin);
    t.true(v.ok, JSON.stringify(v.checks));
    // an independent check: parse the note by hand, verify with node:crypto, compare the root
    const p = parseTlogProof(r.tlog_proof as string);
    const note = parseNote(p.checkpoint);
    const cp = parseCheckpoint(note.text);
    t.is(cp.size, BigInt(i + 1));
    t.is(Buffer.from(cp.root).toString('hex'), Buffer.from(refRoot(leaves)).toString('hex'));
    const raw = Buffer.from(pub.public_key, 'base64url');
    const der = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]);
    const spki = createPublicKey({ key: der, format: 'der', type: 'spki' });
    const keyHash = createHash('sha256').update(pub.origin).update(Buffer.from([0x0a, 0x01])).update(raw).digest();
    t.true(Buffer.from(note.signatures[0]!.keyHash).equals(keyHash.subarray(0, 4)));
    t.true(edVerify(null, Buffer.from(note.text), spki, note.signatures[0]!.signature));
    t.true(noteKeyHash(pub.origin, raw).equals(Buffer.from(note.signatures[0]!.keyHash)));
    const tokenSignature = Buffer.from(r.token_signature as string, 'base64url');
    t.true(edVerify(null, entry, spki, tokenSignature), 'the token itself is signed');
    last = r;
  }
  // tampering: another entry, a flipped proof hash, a foreign key
  const entry = Buffer.from(last.log.entry_base64, 'base64');
  t.true((await verifyTlogProof(last.tlog_proof, entry, last.log.public_key)).ok);
  const retimed = Buffer.from(canonicalJson({ ...last.token, time: '2000-01-01T00:00:00.000Z' }));
  t.false((await verifyTlogProof(last.tlog_proof, retimed, last.log.public_key)).ok);
  const lines = (last.tlog_proof as string).split('\n');
  lines[2] = Buffer.from(Buffer.alloc(32, 7)).toString('base64');
  t.false((await verifyTlogProof(lines.join('\n'), entry, last.log.public_key)).ok);
  t.false((await verifyTlogProof(last.tlog_proof, entry, Buffer.alloc(32, 1).toString('base64url'))).ok);
  t.false((await verifyTlogProof('not a proof', entry, last.log.public_key)).ok);

  // the CLI verifies the saved result offline
  const file = join(s.dataDir, 'ts-result.json');
  writeFileSync(file, JSON.stringify(last));
  const cli = await s.svc(['--json', 'verify-log', '--result', file]);
  t.is(cli.code, 0, cli.stderr);
  t.true(cliJson(cli).verified);
  const forged = { ...last, log: { ...last.log, entry_base64: Buffer.from('forged').toString('base64') } };
  writeFileSync(file, JSON.stringify(forged));
  t.is((await s.svc(['verify-log', '--result', file])).code, 1);

  // machine event log: a separate log with its own origin
  const summary = Buffer.from(JSON.stringify({
    count: 42, head_hash: 'ab'.repeat(32), from: '2026-11-22T00:00:00Z', to: '2026-11-22T01:00:00Z',
  })).toString('hex');
  const ev = await exec('machine-event-log', summary);
  t.regex((ev.log as any).origin, /\/machine-events$/);
  t.is((ev.entry as any).summary.count, 42);
  t.is((ev.log as any).leaf_index, 0);
  const evEntry = Buffer.from(canonicalJson(ev.entry));
  const evLog = ev.log as any;
  t.true((await verifyTlogProof(ev.tlog_proof as string, evEntry, evLog.public_key, evLog.origin)).ok);
  const badFields = { count: -1, head_hash: 'x', from: 'yesterday', to: 'today' };
  const badSummary = Buffer.from(JSON.stringify(badFields)).toString('hex');
  const q = await c.request('QUOTE', {
    service: 'machine-event-log',
    machine_id: 'logger',
    bytes: badSummary.length / 2,
  });
  await c.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: 'logger' }, auth);
  const badArgs = { quote_id: q.quote_id, machine_id: 'logger', plain_hex: badSummary };
  const e = await t.throwsAsync(c.request('MACHINE_EVENT_LOG', badArgs, auth));
  t.is((e as any).code, 'invalid_request');
  t.regex(e!.message, /count must be a non-negative integer/);
});
