// Guards on the embedding kit's offline verifiers (src/kit/verify.ts): fed what the real core signs
// (receipts, pulses, tlog checkpoints, TIMESTAMP_PROOF, ATTEST_EVENT and SEALED_MESSAGE results from
// the executors themselves, in process) and variants where exactly one thing is wrong — the node's own
// key re-signs everything else — each test names the reason the verifier must give, which checks fail
// and what they report. Every verdict also keeps the module's promises: never throws on bad material,
// valid exactly when every check passed, reason = the first failed check's code, each check named.
import test, { type ExecutionContext } from 'ava';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeIdentity } from '../../src/core/node-identity.ts';
import { pulseKey } from '../../src/core/pulse-chain.ts';
import { issueReceipt } from '../../src/core/receipts.ts';
import { attestEvent, pae as serverPae } from '../../src/core/executors/attest-event.ts';
import { sealedMessage } from '../../src/core/executors/sealed-message.ts';
import { timestampProof } from '../../src/core/executors/timestamp-proof.ts';
import type { ExecutionArgs } from '../../src/core/executors/types.ts';
import type { QuoteRecord } from '../../src/core/quotes.ts';
import { canonicalJson } from '../../src/protocol/canonical.ts';
import { outputHash, signedBytes, type PulseBody } from '../../src/protocol/pulse-format.ts';
import { checkpointBody, formatTlogProof, noteKeyHash, signatureLine } from '../../src/protocol/tlog-format.ts';
import { logFields } from '../../src/core/executors/log-result.ts';
import { machineEventLog } from '../../src/core/executors/machine-event-log.ts';
import {
  openSealedMessage, verifyAttestation, verifyLogConsistency, verifyLogInclusion, verifyMachineEventLog, verifyPulse,
  verifyReceipt, verifyTimestampProof, type Verdict,
} from '../../src/kit/verify.ts';
import { coreFixture, type Fixture } from '../support/core-fixture.ts';

const stranger = (() => {
  const dir = mkdtempSync(join(tmpdir(), 'stranger-'));
  const id = NodeIdentity.loadOrCreate(dir);
  rmSync(dir, { recursive: true, force: true });
  return id;
})();
const strangerKey = stranger.public.public_key;

type Signer = { sign(d: Uint8Array): Buffer };

/**
 * The verdict's own promises, then its summary: reason, and the failing checks' names and details.
 * `valid` iff every check passed (and there is one); reason null iff valid; every check has a name and
 * a boolean ok; a check without a detail has no `detail` key at all.
 */
async function seen(t: ExecutionContext, p: Promise<Verdict>, what = '') {
  const v = await p;
  t.is(v.valid, v.checks.length > 0 && v.checks.every((c) => c.ok), what);
  t.is(v.reason === null, v.valid, what);
  for (const c of v.checks) {
    t.true(typeof c.name === 'string' && c.name.length > 0, what);
    t.is(typeof c.ok, 'boolean', what);
    if (c.detail === undefined) t.deepEqual(Object.keys(c), ['name', 'ok'], what);
  }
  const failing = v.checks.filter((c) => !c.ok);
  return { valid: v.valid, reason: v.reason, failing, names: v.checks.map((c) => c.name), v };
}

const iso = (ms: number) => new Date(ms).toISOString();
const keyIdOfRaw = (raw: Uint8Array) => createHash('sha256').update(raw).digest('hex').slice(0, 16);
const q = (_f: Fixture) => ({ machine_id: 'm-kit', quote_id: 'q1kit' }) as unknown as QuoteRecord;
const args = (a: Partial<ExecutionArgs>): ExecutionArgs => ({ machine_id: 'm-kit', quote_id: 'q1kit', ...a });

// --- receipts ------------------------------------------------------------------------------------

function receiptAt(f: Fixture, at: Date) {
  return issueReceipt(f.ctx.kernels, f.identity, {
    service: 'submit-id', command: 'SUBMIT_ID', quote_id: 'q1abc', machine_id: 'm-1', units_charged: 7n,
    input_digest: 'aa'.repeat(32), output_digest: 'bb'.repeat(32), status: 'ok', at,
  });
}
const resignReceipt = (id: Signer, receipt: object) =>
  ({ receipt, signature: id.sign(Buffer.from(canonicalJson(receipt), 'utf8')).toString('base64url') });

test('kit verify guard: receipts verify by every form of trusted keys; a key not trusted, malformed or not '
  + 'a key at all is unknown_key; bad material is malformed, never a throw', async (t) => {
  const f = await coreFixture(t);
  const r = receiptAt(f, f.clock.now());
  const pub = f.identity.public.public_key;
  const check = async (x: unknown, keys: Parameters<typeof verifyReceipt>[1], what: string) =>
    (await seen(t, verifyReceipt(x, keys), what)).reason;
  t.is(await check(r, pub, 'bare key'), null);
  t.is(await check(r, { public_key: pub, key_id: f.identity.keyId }, 'a NodeKey object'), null);
  t.is(await check(r, [{ public_key: strangerKey }, { public_key: pub }], 'a list, ours second'), null);
  t.is(await check(r, { nodes: [{ public_key: strangerKey }, { public_key: pub }] }, 'nodes.json'), null);
  t.is(await check(r, { node: { public_key: pub } }, 'the manifest'), null);
  const junk = [null, 5, 'text', [pub], { public_key: 5 }, { public_key: '!!' }] as unknown as { public_key: string }[];
  t.is(await check(r, [...junk, { public_key: pub }], 'entries that are no keys are ignored'), null);
  t.is(await check(r, junk, 'only junk'), 'unknown_key');
  t.is(await check(r, strangerKey, 'another key'), 'unknown_key');
  t.is(await check(r, { nodes: [] }, 'none'), 'unknown_key');
  t.is(await check(r, null as never, 'null for keys'), 'unknown_key');
  t.is(await check(r, 5 as never, 'a number for keys'), 'unknown_key');
  t.is(await check(r, { node: 'x' } as never, 'a manifest without a node'), 'unknown_key');
  // a 33-byte "key" (ours plus a byte) is no key, even when the receipt names its key id
  const long = Buffer.concat([f.identity.publicKeyRaw, Buffer.of(0)]);
  const namesLong = resignReceipt(f.identity, { ...r.receipt, key_id: keyIdOfRaw(long) });
  t.is(await check(namesLong, long.toString('base64url'), '33-byte key'), 'unknown_key');
  // bad material: one thing wrong at a time
  t.is(await check(null, pub, 'null'), 'malformed');
  t.is(await check({ receipt: 'nope', signature: r.signature }, pub, 'receipt not an object'), 'malformed');
  t.is(await check({ receipt: r.receipt, signature: 5 }, pub, 'signature not a string'), 'malformed');
  t.is(await check({ receipt: r.receipt }, pub, 'no signature'), 'malformed');
  const m = await seen(t, verifyReceipt(null, pub));
  t.is(m.failing.length, 1);
  // the signature: not base64url, cut, foreign
  t.is(await check({ ...r, signature: 'not base64!' }, pub, 'not base64url'), 'bad_signature');
  t.is(await check({ ...r, signature: r.signature.slice(0, 40) }, pub, 'cut'), 'bad_signature');
  t.is(await check(resignReceipt(stranger, r.receipt), pub, 'foreign'), 'bad_signature');
  t.is(await check({ ...r, receipt: { ...r.receipt, units_charged: '8' } }, pub, 'edited'), 'bad_signature');
});

test('kit verify guard: a receipt\'s issued_at must lie in its key\'s window, both ends inclusive, each end '
  + 'alone; no window accepts any issued_at; a window end that is no string bounds nothing', async (t) => {
  const f = await coreFixture(t);
  const T = f.clock.now().getTime();
  const pub = f.identity.public.public_key;
  const base = receiptAt(f, new Date(T)).receipt;
  const at = (ms: number | string) => resignReceipt(f.identity,
    { ...base, issued_at: typeof ms === 'string' ? ms : iso(ms) });
  const reason = async (ms: number | string, key: Record<string, unknown>, what: string) => {
    const v = await seen(t, verifyReceipt(at(ms), { public_key: pub, ...key }), what);
    if (v.reason === 'outside_key_window') t.is(v.failing.length, 1, what);
    return v.reason;
  };
  const both = { valid_from: iso(T - 1000), valid_until: iso(T + 1000) };
  t.is(await reason(T, both, 'inside'), null);
  t.is(await reason(T - 1000, both, 'at valid_from'), null);
  t.is(await reason(T + 1000, both, 'at valid_until'), null);
  t.is(await reason(T - 1001, both, 'before'), 'outside_key_window');
  t.is(await reason(T + 1001, both, 'after'), 'outside_key_window');
  t.is(await reason('not a time', both, 'no time'), 'outside_key_window');
  const from = { valid_from: iso(T - 1000) };
  t.is(await reason(T + 1e9, from, 'from only: long after'), null);
  t.is(await reason(T - 1000, from, 'from only: at its start'), null);
  t.is(await reason(T - 1001, from, 'from only: before'), 'outside_key_window');
  t.is(await reason('not a time', from, 'from only: no time'), 'outside_key_window');
  const until = { valid_until: iso(T + 1000), valid_from: null };
  t.is(await reason(T - 1e9, until, 'until only: long before'), null);
  t.is(await reason(T + 1000, until, 'until only: at its end'), null);
  t.is(await reason(T + 1001, until, 'until only: after'), 'outside_key_window');
  t.is(await reason('not a time', until, 'until only: no time'), 'outside_key_window');
  t.is(await reason('not a time', {}, 'no window'), null);
  t.is(await reason('not a time', { valid_from: null, valid_until: null }, 'null ends'), null);
  // only strings are times: an array holding a date string (which Date.parse would read) bounds nothing
  const odd = { valid_until: ['2000-01-01T00:00:00.000Z'], valid_from: [iso(T + 5000)] };
  t.is(await reason(T, odd, 'ends that are no strings'), null);
});

test('kit verify guard: after a rotation the node document\'s key set vouches for the retired key, '
  + 'within its window only', async (t) => {
  const f = await coreFixture(t);
  const old = receiptAt(f, f.clock.now());
  f.clock.advance(1000);
  f.identity.rotate(f.clock.now());
  f.clock.advance(1000);
  const fresh = receiptAt(f, f.clock.now());
  const doc = {
    node_id: f.identity.nodeId, public_key: f.identity.public.public_key, keys: f.identity.publishedKeys(),
  };
  t.is((await seen(t, verifyReceipt(old, doc))).reason, null, 'retired key, from the key set');
  t.is((await seen(t, verifyReceipt(fresh, doc))).reason, null, 'current key');
  t.is((await seen(t, verifyReceipt(old, { public_key: doc.public_key }))).reason, 'unknown_key', 'bare current key');
  const oldSigner = f.identity.signerAt(new Date(f.clock.now().getTime() - 2000));
  const late = resignReceipt(oldSigner, { ...old.receipt, issued_at: f.clock.now().toISOString() });
  t.is((await seen(t, verifyReceipt(late, doc))).reason, 'outside_key_window', 'retired key after its window');
  t.is((await seen(t, verifyReceipt(late, { nodes: [doc] }))).reason, 'outside_key_window', 'in nodes.json too');
});

// --- pulses --------------------------------------------------------------------------------------

const signPulse = (id: Signer, body: PulseBody) => {
  const sig = id.sign(signedBytes(body));
  return { pulse: body, signature: sig.toString('base64url'), output_hash: outputHash(body, sig) };
};

async function pulses(t: ExecutionContext) {
  const f = await coreFixture(t);
  t.teardown(() => f.ctx.chain.stop());
  await f.ctx.chain.start();
  const committed = await f.ctx.chain.emit(f.clock.now());
  const seed = f.ctx.chain.current().seed;
  f.clock.advance(60_000);
  const revealing = await f.ctx.chain.emit(f.clock.now());
  const key = pulseKey(f.ctx.kernels, seed, 'q1pulse', 'm-p');
  const result = {
    quote_id: 'q1pulse', machine_id: 'm-p', bits: 256,
    output_hex: Buffer.from(f.ctx.kernels.pulseExpand(key, new Uint8Array(0), 256)).toString('hex'),
    pulse: { chain_id: committed.pulse.chain_id, index: committed.pulse.index, commit: committed.pulse.commit },
  };
  const pub = f.identity.public.public_key;
  const k1 = (over: Record<string, unknown>) => signPulse(f.identity, { ...revealing.pulse, ...over } as PulseBody);
  return { f, committed, revealing, result, pub, k1 };
}

test('kit verify guard: a pulse alone and a linked pair with its GET_PULSE result verify; each check, '
  + 'broken alone, is the reason, named for the pulse it is about', async (t) => {
  const { f, committed, revealing, result, pub, k1 } = await pulses(t);
  const v = (p: unknown, prev?: unknown, opts: Parameters<typeof verifyPulse>[2] = { nodeKeys: pub }, what = '') =>
    seen(t, verifyPulse(p, prev, opts), what);
  const single = await v(revealing);
  t.is(single.reason, null);
  t.true(single.names.every((n) => n.startsWith('pulse ') && !n.startsWith('pulse k')), single.names.join('; '));
  t.is((await v({ ...revealing, public_key: pub }, undefined, {})).reason, null, 'the pulse\'s own key');
  t.is((await v(revealing, undefined, { nodeKeys: [{ public_key: strangerKey }, { public_key: pub }] })).reason,
    null, 'two trusted keys, the node\'s second');
  const pair = await v(revealing, committed, { nodeKeys: pub, result });
  t.is(pair.reason, null);
  t.true(pair.names[0]!.startsWith('pulse k+1 '), pair.names[0]);
  t.true(pair.names.length >= 12, pair.names.join('; '));
  const noResult = await v(revealing, committed);
  t.is(noResult.reason, null, 'a pair without a result');
  t.false(noResult.names.some((n) => /output_hex|recompute/.test(n)));

  // the pulse k forged: its checks fail, named for pulse k
  const kForeign = signPulse(stranger, committed.pulse);
  const forged = await v(signPulse(f.identity, { ...revealing.pulse, prev_output: kForeign.output_hash }), kForeign);
  t.is(forged.reason, 'bad_signature');
  t.deepEqual(forged.failing.map((c) => c.name.split(' (')[0]), ['pulse k signature']);
  // keys and windows
  t.is((await v(revealing, undefined, { nodeKeys: strangerKey })).reason, 'unknown_key');
  const { public_key: _, ...noKey } = { ...revealing, public_key: undefined };
  t.is((await v(noKey, undefined, {})).reason, 'unknown_key', 'no key at all: nothing trusted');
  const start = Date.parse(revealing.pulse.time_start);
  const late = await v(revealing, undefined, { nodeKeys: { public_key: pub, valid_from: iso(start + 1) } });
  t.is(late.reason, 'outside_key_window');
  t.is(late.failing.length, 1);
  // node_id: a trusted key's node (the publisher's, or svc-node-<key_id>), nothing else
  t.is((await v(k1({ node_id: 'svc-node-0000000000000000' }))).reason, 'wrong_node_id');
  t.is((await v(k1({ node_id: 'svc-node-elsewhere' }), undefined,
    { nodeKeys: { nodes: [{ public_key: pub, node_id: 'svc-node-elsewhere' }] } })).reason, null, 'the publisher');
  t.is((await v(k1({ node_id: 'svc-node-elsewhere' }), undefined,
    { nodeKeys: [{ public_key: pub }, { public_key: pub, node_id: 'svc-node-elsewhere' }] })).reason,
  'wrong_node_id', 'a key listed twice counts once, as first listed');
  t.is((await v(k1({ node_id: 5 }), undefined, { nodeKeys: { nodes: [{ public_key: pub, node_id: 5 as never }] } }))
    .reason, 'wrong_node_id', 'a node id that is no string names nothing');
  const { node_id: __, ...anonymous } = revealing.pulse;
  t.is((await v(signPulse(f.identity, anonymous as PulseBody))).reason, 'wrong_node_id', 'no node_id at all');

  // the link and the reveal
  t.is((await v(k1({ commit: 'ab'.repeat(32) }), committed)).reason, 'commit_mismatch');
  const noReveal = await v(k1({ revealed_index: 7 }), committed);
  t.is(noReveal.reason, 'no_reveal');
  t.is((await v(k1({ revealed_seed: '11'.repeat(32) }), committed)).reason, 'bad_reveal');
  const notHex = await v(k1({ revealed_seed: 'zz' }), committed);
  t.is(notHex.reason, 'bad_reveal', 'a seed that is not hex');
  t.is(notHex.failing.length, 1);

  // the result
  const nullPulse = await v(revealing, committed, { nodeKeys: pub, result: { ...result, pulse: null } as never });
  t.is(nullPulse.reason, 'wrong_pulse');
  t.is(nullPulse.failing.length, 1);
  const notObject = await v(revealing, committed, { nodeKeys: pub, result: 'x' as never });
  t.is(notObject.reason, 'wrong_pulse');
  t.is(notObject.failing.length, 1, 'nothing to recompute from a result that is no object');
  const nullResult = await v(revealing, committed, { nodeKeys: pub, result: null as never });
  t.is(nullResult.reason, 'wrong_pulse');
  t.is(nullResult.failing.length, 1);
  const flipped = (result.output_hex[0] === '0' ? '1' : '0') + result.output_hex.slice(1);
  const other = await v(revealing, committed, { nodeKeys: pub, result: { ...result, output_hex: flipped } });
  t.is(other.reason, 'bad_output');
  t.deepEqual(other.failing.map((c) => c.detail), [`recomputed ${result.output_hex.slice(0, 32)}…`]);
  const zero = await v(revealing, committed, { nodeKeys: pub, result: { ...result, bits: 0 } });
  t.is(zero.reason, 'bad_output');
  t.is(zero.failing.length, 1);
  t.regex(zero.failing[0]!.detail ?? '', /bits/, 'the recomputation\'s own error');
  t.false(zero.failing[0]!.detail!.startsWith('recomputed'));
});

test('kit verify guard: what is not a signed pulse is malformed, each part alone, never a throw', async (t) => {
  const { revealing, committed, pub, k1 } = await pulses(t);
  const reason = async (p: unknown, prev?: unknown, what = '') => {
    const v = await seen(t, verifyPulse(p, prev, { nodeKeys: pub }), what);
    if (v.reason === 'malformed') t.is(v.failing.length, 1, what);
    return v.reason;
  };
  t.is(await reason(null, undefined, 'null'), 'malformed');
  t.is(await reason('garbage', undefined, 'text'), 'malformed');
  t.is(await reason({ ...revealing, pulse: null }, undefined, 'pulse null'), 'malformed');
  t.is(await reason({ ...revealing, signature: 5 }, undefined, 'signature'), 'malformed');
  t.is(await reason({ ...revealing, output_hash: 5 }, undefined, 'output_hash'), 'malformed');
  t.is(await reason(k1({ index: String(revealing.pulse.index) }), undefined, 'index a string, signed'), 'malformed');
  t.is(await reason(k1({ chain_id: 5 }), undefined, 'chain_id'), 'malformed');
  t.is(await reason(k1({ commit: null }), undefined, 'commit'), 'malformed');
  t.is(await reason(revealing, 'garbage', 'pulse k'), 'malformed');
  t.is(await reason(revealing, null, 'pulse k null'), 'malformed');
  t.is(await reason(revealing, { ...committed, signature: 5 }, 'pulse k signature'), 'malformed');
  const pk = await seen(t, verifyPulse(revealing, null, { nodeKeys: pub }));
  t.deepEqual(pk.v.checks.map((c) => c.ok), [true, false]);
});

// --- transparency-log proofs ----------------------------------------------------------------------

async function logCase(t: ExecutionContext) {
  const f = await coreFixture(t);
  const log = f.ctx.logs.timestamps;
  const appended = [];
  for (let i = 0; i < 5; i++) appended.push(await log.append(() => Buffer.from(`entry ${i}`)));
  const pub = f.identity.public.public_key;
  const sign = (origin: string, size: number, root: Uint8Array) => {
    const body = checkpointBody(origin, size, root);
    return `${body}\n${signatureLine(origin, noteKeyHash(origin, f.identity.publicKeyRaw),
      f.identity.sign(Buffer.from(body, 'utf8')))}`;
  };
  return { f, log, appended, pub, sign };
}

test('kit verify guard: log inclusion — without options, a proof or checkpoint that does not parse, '
  + 'a forged checkpoint signature, another origin (reported)', async (t) => {
  const { f, log, appended, pub, sign } = await logCase(t);
  const last = appended[4]!;
  const entry = Buffer.from('entry 4');
  const v = (proof: string, opts?: Parameters<typeof verifyLogInclusion>[3], e: Uint8Array = entry) =>
    seen(t, verifyLogInclusion(proof, e, pub, opts));
  t.is((await v(last.tlogProof)).reason, null, 'no options');
  t.is((await v(last.tlogProof, { origin: log.origin })).reason, null);
  t.is((await seen(t, verifyLogInclusion(last.tlogProof, entry, { nodes: [{ public_key: strangerKey },
    { public_key: pub }] }))).reason, null, 'the node\'s key second');
  const garbage = await v('garbage');
  t.is(garbage.reason, 'malformed');
  t.is(garbage.failing.length, 1);
  t.regex(garbage.failing[0]!.detail ?? '', /^tlog-proof: /, 'the proof parser says why');
  const noNote = await v('c2sp.org/tlog-proof@v1\nindex 4\n\nnot a note');
  t.is(noNote.reason, 'malformed');
  t.regex(noNote.failing[0]!.detail ?? '', /^(note|checkpoint): /);
  const forged = last.checkpoint.replace(/\n\n— (\S+) (\S+)\n$/, (_m, name: string, b64: string) => {
    const b = Buffer.from(b64, 'base64');
    b[10]! ^= 1;
    return `\n\n— ${name} ${b.toString('base64')}\n`;
  });
  t.not(forged, last.checkpoint);
  const badSig = await v(formatTlogProof(4, last.proof, forged));
  t.is(badSig.reason, 'bad_checkpoint_signature');
  t.is(badSig.failing.length, 1);
  const elsewhere = await v(last.tlogProof, { origin: 'svc/elsewhere' });
  t.is(elsewhere.reason, 'wrong_origin');
  t.deepEqual(elsewhere.failing.map((c) => c.detail), [log.origin], 'names the origin it found');
  const wrongSize = await v(formatTlogProof(4, last.proof, sign(log.origin, 6, last.root)));
  t.is(wrongSize.reason, 'not_included');
  t.is(typeof wrongSize.failing[0]!.detail, 'string', 'the kernel\'s reason');
  t.is(f.identity.public.public_key, pub);
});

test('kit verify guard: log consistency — same tree, from the empty tree, bad base64, a larger old tree, '
  + 'checkpoints that do not parse, and the new one of another log', async (t) => {
  const { f, log, appended, pub, sign } = await logCase(t);
  const k = f.ctx.kernels;
  const leaves = [0, 1, 2, 3, 4].map((i) => k.merkleLeafHash(Buffer.from(`entry ${i}`)));
  const cp2 = appended[1]!.checkpoint, cp5 = appended[4]!.checkpoint;
  const proof = k.consistencyProof(leaves, 2);
  const v = (a: string, b: string, p: readonly (Uint8Array | string)[], opts?: { origin?: string }) =>
    seen(t, verifyLogConsistency(a, b, p, pub, opts));
  t.is((await v(cp2, cp5, proof)).reason, null);
  t.is((await v(cp5, cp5, [])).reason, null, 'a tree is consistent with itself');
  const empty = sign(log.origin, 0, createHash('sha256').digest());
  t.is((await v(empty, cp5, [])).reason, null, 'the empty tree: an empty proof');
  const fromEmpty = await v(empty, cp5, [proof[0]!]);
  t.is(fromEmpty.reason, 'inconsistent', 'the empty tree: any hash is too many');
  t.deepEqual(fromEmpty.failing.map((c) => c.detail), ['invalid_proof']);
  const notB64 = await v(cp2, cp5, ['!!!']);
  t.is(notB64.reason, 'malformed');
  t.is(notB64.failing.length, 1);
  const shrunk = await v(cp5, cp2, proof);
  t.is(shrunk.reason, 'inconsistent');
  t.is(shrunk.failing.length, 1, 'an older tree larger than the new one: nothing more is checked');
  t.is(shrunk.failing[0]!.detail, undefined, 'refused on the sizes, before any proof is run');
  const oldGarbage = await v('garbage', cp5, proof);
  t.is(oldGarbage.reason, 'malformed');
  t.deepEqual(oldGarbage.failing.map((c) => c.name.split(' ')[0]), ['old'], 'names the checkpoint at fault');
  const newGarbage = await v(cp2, 'garbage', proof);
  t.is(newGarbage.reason, 'malformed');
  t.is(newGarbage.failing.length, 1);
  t.true(newGarbage.failing[0]!.name.startsWith('new checkpoint '), newGarbage.failing[0]!.name);
  const events = f.ctx.logs.events;
  for (let i = 0; i < 5; i++) await events.append(() => Buffer.from(`entry ${i}`));
  const otherLog = (await events.append(() => Buffer.from('entry 5'))).checkpoint;
  const mixed = await v(cp2, otherLog, proof);
  t.is(mixed.reason, 'wrong_origin', 'the new checkpoint must be of the old one\'s log');
  t.is(mixed.failing[0]!.detail, events.origin);
});

// --- TIMESTAMP_PROOF ------------------------------------------------------------------------------

async function timestamps(t: ExecutionContext) {
  const f = await coreFixture(t);
  const digests = [0, 1, 2].map((i) => createHash('sha256').update(`doc ${i}`).digest());
  const rs: Record<string, any>[] = [];
  for (const d of digests) {
    rs.push((await timestampProof(f.ctx, q(f), args({ plain_hex: d.toString('hex') }))).fields);
  }
  const pub = f.identity.public.public_key;
  /** the last result with its token changed and re-signed, the logged entry made to match */
  const retoken = (over: Record<string, unknown>) => {
    const r = rs[2]!;
    const token = { ...r.token, ...over };
    const entry = Buffer.from(canonicalJson(token), 'utf8');
    return { ...r, token, token_signature: f.identity.sign(entry).toString('base64url'),
      log: { ...r.log, entry_base64: entry.toString('base64') } };
  };
  return { f, rs, digests, pub, retoken };
}

test('kit verify guard: TIMESTAMP_PROOF results verify without options; each part missing is malformed; '
  + 'entry, key, window, digest and serial each fail alone', async (t) => {
  const { rs, digests, pub, retoken } = await timestamps(t);
  const last = rs[2]!;
  const v = (r: unknown, keys: Parameters<typeof verifyTimestampProof>[1] = pub,
    opts?: Parameters<typeof verifyTimestampProof>[2], what = '') => seen(t, verifyTimestampProof(r, keys, opts), what);
  for (const r of rs) t.is((await v(r)).reason, null, 'no options');
  t.is((await v(last, pub, { digest: digests[2] })).reason, null);
  t.is((await v(last, [{ public_key: strangerKey }, { public_key: pub }])).reason, null, 'the node\'s key second');
  for (const [what, r] of Object.entries({
    null: null, token: { ...last, token: 'x' }, token_signature: { ...last, token_signature: 5 },
    log: { ...last, log: null }, entry_base64: { ...last, log: { ...last.log, entry_base64: 5 } },
    tlog_proof: { ...last, tlog_proof: undefined },
  })) {
    const m = await v(r, pub, undefined, what);
    t.is(m.reason, 'malformed', what);
    t.is(m.failing.length, 1, what);
  }
  t.is((await v({ ...last, log: { ...last.log, entry_base64: '!!!' } })).reason, 'entry_mismatch', 'not base64');
  const unknown = await v(last, strangerKey);
  t.is(unknown.reason, 'unknown_key');
  t.false(unknown.failing.some((c) => /signature|window/.test(c.name)), 'no key: no signature or window checks');
  const time = Date.parse(last.token.time);
  const late = await v(last, { public_key: pub, valid_until: iso(time - 1) });
  t.is(late.reason, 'outside_key_window');
  t.is(late.failing.length, 1);
  t.is((await v(last, pub, { digest: digests[0] })).reason, 'digest_mismatch');
  t.is((await v({ ...last, token_signature: rs[1]!.token_signature })).reason, 'bad_token_signature');
  // the serial: its index in the log, as a safe integer
  t.is((await v(retoken({}))).reason, null, 're-signed as it was');
  for (const serial of [3, 1, '2', 2.5, 'x', 2 ** 53 + 2]) {
    const s = await v(retoken({ serial }), pub, undefined, String(serial));
    t.is(s.reason, 'wrong_serial', String(serial));
  }
  // the token names its log: the checkpoint must be of it
  const moved = await v(retoken({ log_origin: 'svc/elsewhere/timestamps' }));
  t.is(moved.reason, 'wrong_origin');
  t.is((await v(last, pub, { origin: 'svc/elsewhere/timestamps' })).reason, 'wrong_origin', 'or the one you name');
  // a proof that does not parse: the serial cannot match it, and the parser says why; nothing else is checked
  const noProof = await v({ ...last, tlog_proof: 'garbage' });
  t.is(noProof.reason, 'wrong_serial');
  t.is(noProof.failing.length, 2);
  t.regex(noProof.failing[1]!.detail ?? '', /^tlog-proof: /);
});

// --- ATTEST_EVENT ---------------------------------------------------------------------------------

test('kit verify guard: ATTEST_EVENT envelopes — forms, each part missing, payload type, base64, keys, '
  + 'statement shape and subject each fail alone; the statement only when valid', async (t) => {
  const f = await coreFixture(t);
  const event = Buffer.from('{"door":"open"}');
  const r = (await attestEvent(f.ctx, q(f), args({ plain_hex: event.toString('hex') }))).fields as Record<string, any>;
  const env = r.envelope as { payloadType: string; payload: string; signatures: { keyid: string; sig: string }[] };
  const pub = f.identity.public.public_key;
  const v = async (x: unknown, keys: Parameters<typeof verifyAttestation>[1] = pub, opts = {}, what = '') => {
    const p = verifyAttestation(x, keys, opts);
    const s = await seen(t, p, what);
    const statement = (await p).statement;
    if (!s.valid) t.is(statement, null, what);
    return { ...s, statement };
  };
  const ok = await v(r, pub, { event });
  t.is(ok.reason, null);
  t.deepEqual(ok.statement, r.statement);
  t.is((await v(env)).reason, null, 'the envelope alone');
  t.is((await v(env, [{ public_key: strangerKey }, { public_key: pub }])).reason, null, 'the node\'s key second');
  const extra = { ...env, signatures: [null, { keyid: '0000000000000000', sig: 'AAAA' }, ...env.signatures] };
  t.is((await v(extra)).reason, null, 'signatures by keys not trusted, or no objects, are passed over');
  for (const [what, x] of Object.entries({
    null: null, 'no signatures': { ...env, signatures: undefined }, 'signatures []': { ...env, signatures: [] },
    'signatures [null]': { ...env, signatures: [null] },
    payloadType: { ...env, payloadType: undefined }, payload: { ...env, payload: 5 },
  })) {
    const m = await v(x, pub, {}, what);
    t.is(m.reason, 'malformed', what);
    t.is(m.failing.length, 1, what);
  }
  t.is((await v({ ...env, payload: '!!!' })).reason, 'malformed', 'payload not base64');
  t.is((await v(env, strangerKey)).reason, 'unknown_key');
  // DSSE signatures are standard base64: the same bytes as base64url are refused (a key hunts for a
  // signature that has a + or /, which base64url writes as - or _)
  let urlSig = '';
  for (let i = 0; !/[-_]/.test(urlSig); i++) {
    const body = Buffer.concat([Buffer.from(env.payload, 'base64'), Buffer.from(' '.repeat(i))]);
    const sig = f.identity.sign(serverPae(env.payloadType, body));
    urlSig = sig.toString('base64url');
    if (/[-_]/.test(urlSig)) {
      const std = { ...env, payload: body.toString('base64'), signatures: [{ keyid: f.identity.keyId, sig: '' }] };
      t.is((await v({ ...std, signatures: [{ keyid: f.identity.keyId, sig: sig.toString('base64') }] })).reason,
        null, 'standard base64');
      t.is((await v({ ...std, signatures: [{ keyid: f.identity.keyId, sig: urlSig }] })).reason, 'bad_signature',
        'base64url');
    }
  }
  // re-signed by the node: exactly one thing wrong in each
  const resign = (payloadType: string, body: Buffer) => ({
    payloadType, payload: body.toString('base64'),
    signatures: [{ keyid: f.identity.keyId, sig: f.identity.sign(serverPae(payloadType, body)).toString('base64') }],
  });
  const body = Buffer.from(env.payload, 'base64');
  t.is((await v(resign(env.payloadType, body))).reason, null, 're-signed as it was');
  const wrongType = await v(resign('application/json', body));
  t.is(wrongType.reason, 'wrong_payload_type');
  t.is(wrongType.failing.length, 1);
  const statement = r.statement as Record<string, unknown>;
  const withStatement = (s: unknown) => resign(env.payloadType, Buffer.from(JSON.stringify(s)));
  t.is((await v(resign(env.payloadType, Buffer.from('not json')))).reason, 'malformed');
  t.is((await v(withStatement([statement]))).reason, 'malformed', 'a statement that is no object');
  t.is((await v(withStatement({ ...statement, _type: 'https://in-toto.io/Statement/v0.1' }))).reason, 'malformed');
  t.is((await v(withStatement({ ...statement, predicateType: 'urn:other' }))).reason, 'malformed');
  t.is((await v(env, pub, { event: Buffer.from('other') })).reason, 'subject_mismatch');
  const { subject: _, ...noSubject } = statement;
  t.is((await v(withStatement(noSubject), pub, { event })).reason, 'subject_mismatch', 'no subject');
  t.is((await v(withStatement({ ...statement, subject: [] }), pub, { event })).reason, 'subject_mismatch');
  t.is((await v(withStatement({ ...statement, subject: {} }), pub, { event })).reason, 'subject_mismatch');
});

// --- SEALED_MESSAGE -------------------------------------------------------------------------------

test('kit verify guard: SEALED_MESSAGE opens with or without its optional fields; hex, fields and the '
  + 'suite (each id alone) are checked before the AEAD', async (t) => {
  const f = await coreFixture(t);
  const { publicKey, privateKey } = generateKeyPairSync('x25519');
  const pub = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const priv = new Uint8Array(privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32));
  const plain = Buffer.from('the usual place');
  const sealed = await sealedMessage(f.ctx, q(f), args({ plain_hex: plain.toString('hex'),
    packet_hex: pub.toString('hex') }));
  const r = sealed.fields as Record<string, any>;
  const v = async (x: unknown, what = '') => {
    const p = openSealedMessage(x, priv);
    const s = await seen(t, p, what);
    const pt = (await p).plaintext;
    if (s.valid) t.deepEqual(Buffer.from(pt!), plain, what);
    else t.is(pt, null, what);
    return s.reason;
  };
  t.is(await v(r), null);
  const { info_hex: _i, aad_hex: _a, suite: _s, ...bare } = r;
  t.is(await v(bare, 'without info, aad and suite: the defaults'), null);
  t.is(await v({ ...r, suite: undefined }), null);
  for (const [what, x] of Object.entries({
    null: null, 'enc not hex': { ...r, enc_hex: 'zz' }, 'no ciphertext': { ...r, ciphertext_hex: undefined },
    'no enc': { ...r, enc_hex: 5 }, 'info not hex': { ...r, info_hex: 'q' }, 'aad not hex': { ...r, aad_hex: '0' },
  })) t.is(await v(x, what), 'malformed', what);
  for (const over of [{ kem_id: 0x0021 }, { kdf_id: 0x0002 }, { aead_id: 0x0001 }, { mode: 'psk' }]) {
    t.is(await v({ ...r, suite: { ...r.suite, ...over } }, JSON.stringify(over)), 'unsupported_suite');
  }
  t.is(await v({ ...r, info_hex: '00' }), 'not_authentic');
});

// --- the fields beside signed content, and encodings -------------------------------------------------

/** `s` (base64 or base64url) with the lowest stray bit of its last character set: the same bytes, spelt again. */
function respelt(s: string, url: boolean): string {
  const abc = `ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789${url ? '-_' : '+/'}`;
  const body = s.replace(/=+$/, '');
  const twin = abc[abc.indexOf(body.at(-1)!) ^ 1]!;
  const out = body.slice(0, -1) + twin + s.slice(body.length);
  const decode = (x: string) => Buffer.from(x, url ? 'base64url' : 'base64');
  if (!decode(out).equals(decode(s))) throw new Error(`${s} has no stray bit in its last character`);
  return out;
}

test('kit verify guard: the fields beside signed content restate what was verified; each changed alone is '
  + 'field_mismatch, naming it, and each left out is fine', async (t) => {
  const f = await coreFixture(t);
  const pub = f.identity.public.public_key;
  const set = { nodes: [{ node_id: f.identity.nodeId, public_key: pub, keys: f.identity.publishedKeys() }] };
  const mismatch = async (p: Promise<Verdict>, field: string) => {
    const v = await seen(t, p, field);
    t.is(v.reason, 'field_mismatch', field);
    t.deepEqual(v.failing.map((c) => c.detail), [`not as verified: ${field}`], field);
  };
  // a VERIFY_RECEIPT result
  const r = receiptAt(f, f.clock.now());
  const receipt = { receipt_id: r.receipt.receipt_id, ...r, alg: 'Ed25519', public_key: pub, key_id: f.identity.keyId,
    key_valid_from: null, key_valid_until: null, valid: true };
  t.is((await seen(t, verifyReceipt(receipt, set))).reason, null);
  const other = { receipt_id: 'rcpt_other', alg: 'RSA', public_key: strangerKey, key_id: stranger.keyId,
    key_valid_from: iso(0), key_valid_until: iso(0) };
  for (const [field, value] of Object.entries(other)) {
    await mismatch(verifyReceipt({ ...receipt, [field]: value }, set), field);
  }
  t.is((await seen(t, verifyReceipt({ ...receipt, key_valid_until: iso(0) }, pub))).reason, null,
    'a bare key states no window: a window the result claims is not held against it');
  t.is((await seen(t, verifyReceipt({ ...receipt, valid: false, reason: 'x', signed_bytes: 'y' }, set))).reason,
    null, 'the node\'s own verdict and description are not the receipt');
  t.is((await seen(t, verifyReceipt(r, set))).reason, null, 'the receipt and its signature alone');

  // a PULSE result (of another fixture's node), with its GET_PULSE result
  const pp = await pulses(t);
  const pset = { nodes: [{ node_id: pp.f.identity.nodeId, public_key: pp.pub, keys: pp.f.identity.publishedKeys() }] };
  const node = { ...pp.revealing, public_key: pp.pub, node_keys: pp.f.identity.publishedKeys() };
  const pv = (x: unknown, prev?: unknown, res?: unknown) =>
    verifyPulse(x, prev, { nodeKeys: pset, ...(res ? { result: res as never } : {}) });
  t.is((await seen(t, pv(node))).reason, null);
  await mismatch(pv({ ...node, public_key: strangerKey }), 'public_key');
  const entry = node.node_keys[0]!;
  await mismatch(pv({ ...node, node_keys: [{ ...entry, key_id: '0000000000000000' }] }), 'node_keys');
  await mismatch(pv({ ...node, node_keys: [{ ...entry, valid_until: iso(0) }] }), 'node_keys');
  await mismatch(pv({ ...node, node_keys: [stranger.publishedKeys()[0]] }), 'node_keys');
  await mismatch(pv({ ...node, node_keys: 'x' }), 'node_keys');
  t.is((await seen(t, pv({ ...node, node_keys: [{ ...entry, status: 'retired' }, { note: 'no key' }] }))).reason,
    null, 'a status, and entries that name no key, are the node\'s to say');
  const withResult = { ...pp.result, pulse: { ...pp.result.pulse, period_ms: pp.committed.pulse.period_ms,
    revealed_by_index: pp.committed.pulse.index + 1 } };
  t.is((await seen(t, pv(pp.revealing, pp.committed, withResult))).reason, null);
  for (const over of [{ period_ms: 1 }, { revealed_by_index: pp.committed.pulse.index }]) {
    const v = await seen(t, pv(pp.revealing, pp.committed, { ...withResult, pulse: { ...withResult.pulse, ...over } }));
    t.is(v.reason, 'wrong_pulse', JSON.stringify(over));
  }
  const alone = await seen(t, pv(pp.revealing, undefined, withResult));
  t.is(alone.reason, 'malformed', 'a result without the pulse it was drawn from checks nothing');
  t.is(alone.failing.length, 1);

  // a TIMESTAMP_PROOF result: each log field
  const { rs, pub: tpub } = await timestamps(t);
  const last = rs[2]!;
  t.is((await seen(t, verifyTimestampProof(last, tpub))).reason, null);
  const changed: Record<string, unknown> = {
    origin: 'svc/elsewhere/timestamps', leaf_index: last.log.leaf_index + 1, tree_size: String(last.log.tree_size),
    leaf_hash: Buffer.alloc(32).toString('base64'), root: rs[1]!.log.root, inclusion_proof: [],
    checkpoint: rs[1]!.log.checkpoint, public_key: strangerKey, key_id: stranger.keyId,
  };
  for (const [field, value] of Object.entries(changed)) {
    await mismatch(verifyTimestampProof({ ...last, log: { ...last.log, [field]: value } }, tpub), field);
  }
  t.is((await seen(t, verifyTimestampProof({ ...last, log: { entry_base64: last.log.entry_base64 } }, tpub))).reason,
    null, 'the log fields left out: nothing unchecked is left');
  t.is((await seen(t, verifyTimestampProof({ ...last, receipt_id: 'rcpt_other', units_charged: 1 }, tpub))).reason,
    null, 'the execution\'s receipt facts are the receipt\'s to vouch for');

  // a MACHINE_EVENT_LOG result: its entry, and the entry's own index
  const summary = Buffer.from(JSON.stringify({ count: 1, head_hash: 'cd'.repeat(32), from: iso(0), to: iso(1) }));
  const ev = (await machineEventLog(f.ctx, q(f), args({ plain_hex: summary.toString('hex') }))).fields as
    Record<string, any>;
  const epub = f.identity.public.public_key;
  t.is((await seen(t, verifyMachineEventLog(ev, epub))).reason, null);
  const { entry: logged, ...noEntry } = ev;
  t.is((await seen(t, verifyMachineEventLog(noEntry, epub))).reason, null, 'the logged bytes alone');
  const bad = await seen(t, verifyMachineEventLog({ ...ev, entry: { ...logged, machine_id: 'm-other' } }, epub));
  t.is(bad.reason, 'entry_mismatch');
  t.is(bad.failing.length, 1);
  await mismatch(verifyMachineEventLog({ ...ev, log: { ...ev.log, tree_size: ev.log.tree_size + 1 } }, epub),
    'tree_size');
  // an entry that names another index than its own, logged and signed for all that: wrong_index alone
  const log = f.ctx.logs.events;
  const misnumbered = await log.append(() => Buffer.from(canonicalJson({ ...logged, index: 99 }), 'utf8'));
  const wrong = await seen(t, verifyMachineEventLog(logFields(log, misnumbered), epub));
  t.is(wrong.reason, 'wrong_index');
  t.is(wrong.failing.length, 1);

  // an ATTEST_EVENT result: the statement and key beside the envelope
  const event = Buffer.from('{"door":"open"}');
  const at = (await attestEvent(f.ctx, q(f), args({ plain_hex: event.toString('hex') }))).fields as Record<string, any>;
  t.is((await seen(t, verifyAttestation(at, epub))).reason, null);
  await mismatch(verifyAttestation({ ...at, statement: { ...at.statement, predicateType: 'urn:other' } }, epub),
    'statement');
  await mismatch(verifyAttestation({ ...at, public_key: strangerKey }, epub), 'public_key');
});

test('kit verify guard: signatures, keys and hashes verify only as the node spells them — stray low bits, '
  + 'the other alphabet, padding and case are each refused', async (t) => {
  const f = await coreFixture(t);
  const pub = f.identity.public.public_key;
  const r = receiptAt(f, f.clock.now());
  const reason = async (p: Promise<Verdict>, what: string) => (await seen(t, p, what)).reason;
  t.is(await reason(verifyReceipt(r, pub), 'as made'), null);
  const std = Buffer.from(r.signature, 'base64url').toString('base64');
  for (const [what, signature] of Object.entries({
    'stray bits': respelt(r.signature, true), padded: `${r.signature}==`, 'standard base64': std,
    'standard, unpadded': std.replace(/=+$/, ''), 'with a newline': `${r.signature}\n`,
  })) {
    // a signature with no - or _ in it (about one in fifteen) reads the same in both alphabets once unpadded
    if (signature === r.signature) continue;
    t.is(await reason(verifyReceipt({ ...r, signature }, pub), what), 'bad_signature', what);
  }
  t.is(await reason(verifyReceipt(r, respelt(pub, true)), 'a trusted key spelt again'), 'unknown_key');
  t.is(await reason(verifyReceipt(r, [{ public_key: `${pub}=` }]), 'a padded trusted key'), 'unknown_key');

  // the transparency log: note signatures, roots and proof hashes are padded standard base64, once spelt
  const { rs, pub: tpub } = await timestamps(t);
  const last = rs[2]!;
  const lines = (last.tlog_proof as string).split('\n');
  const sigAt = lines.findIndex((l) => l.startsWith('\u2014 '));
  const [dash, name, sig] = lines[sigAt]!.split(' ');
  const variants: Record<string, string[]> = {
    'note signature, stray bits': lines.map((l, i) => (i === sigAt ? `${dash} ${name} ${respelt(sig!, false)}` : l)),
    'note signature, unpadded': lines.map((l, i) => (i === sigAt ? l.replace(/=+$/, '') : l)),
    'proof hash, unpadded': lines.map((l, i) => (i === 2 ? l.replace(/=+$/, '') : l)),
    'proof hash, url alphabet': lines.map((l, i) => (i === 2 ? l.replace(/\+/g, '-').replace(/\//g, '_') : l)),
  };
  for (const [what, text] of Object.entries(variants)) {
    if (text.join('\n') === last.tlog_proof) continue; // nothing of that alphabet in this hash
    const v = await seen(t, verifyTimestampProof({ ...last, tlog_proof: text.join('\n') }, tpub), what);
    t.false(v.valid, what);
    t.true(v.failing.some((c) => /parses/.test(c.name)), what);
  }
  const entry = last.log.entry_base64 as string;
  if (entry.endsWith('=')) {
    t.is(await reason(verifyTimestampProof({ ...last, log: { ...last.log, entry_base64: entry.replace(/=+$/, '') } },
      tpub), 'entry unpadded'), 'entry_mismatch');
  }
  t.is(await reason(verifyTimestampProof({ ...last, token_signature: respelt(last.token_signature, true) }, tpub),
    'token signature spelt again'), 'bad_token_signature');
  const k = f.ctx.kernels;
  const leaves = rs.map((x) => k.merkleLeafHash(Buffer.from(x.log.entry_base64, 'base64')));
  const proof = k.consistencyProof(leaves, 1).map((h) => Buffer.from(h).toString('base64'));
  const cp1 = rs[0]!.log.checkpoint, cp3 = rs[2]!.log.checkpoint;
  t.is(await reason(verifyLogConsistency(cp1, cp3, proof, tpub), 'consistency as made'), null);
  t.is(await reason(verifyLogConsistency(cp1, cp3, [respelt(proof[0]!, false), ...proof.slice(1)], tpub),
    'a consistency hash spelt again'), 'malformed');

  // DSSE: the signature and payload in padded standard base64, once spelt
  const event = Buffer.from('{"door":"open"}');
  const at = (await attestEvent(f.ctx, q(f), args({ plain_hex: event.toString('hex') }))).fields as Record<string, any>;
  const env = at.envelope as { payloadType: string; payload: string; signatures: { keyid: string; sig: string }[] };
  const s0 = env.signatures[0]!;
  t.is(await reason(verifyAttestation(env, pub), 'envelope as made'), null);
  t.is(await reason(verifyAttestation({ ...env, signatures: [{ ...s0, sig: respelt(s0.sig, false) }] }, pub),
    'DSSE signature spelt again'), 'bad_signature');
  t.is(await reason(verifyAttestation({ ...env, payload: respelt(env.payload, false) }, pub),
    'payload spelt again'), 'malformed');

  // sealed messages: lowercase hex, as the node writes it
  const { publicKey, privateKey } = generateKeyPairSync('x25519');
  const priv = new Uint8Array(privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32));
  const sealed = (await sealedMessage(f.ctx, q(f), args({ plain_hex: 'ab'.repeat(8),
    packet_hex: publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex') }))).fields as
    Record<string, any>;
  t.is((await openSealedMessage(sealed, priv)).reason, null);
  t.is((await openSealedMessage({ ...sealed, enc_hex: sealed.enc_hex.toUpperCase() }, priv)).reason, 'malformed');
  t.is((await openSealedMessage({ ...sealed, info_hex: null }, priv)).reason, 'malformed', 'null is no hex');
});
