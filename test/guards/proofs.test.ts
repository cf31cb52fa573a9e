// Guards on proofs: the receipt signature check (core), the offline pulse verifier and the tlog proof
// verifier (client kit). Each forgery below is built so that exactly one check is wrong — the node's
// own key re-signs everything else — and the test names the checks that must fail, so weakening any
// single check (always true, key hash alone, size or root ignored) makes a test fail.
import test, { type ExecutionContext } from 'ava';
import { createHmac, createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyPublishedPulse, verifyPulse, verifyTlogProof, type PulseResult } from '../../src/client/verify.ts';
import { NodeIdentity } from '../../src/core/node-identity.ts';
import { pulseKey } from '../../src/core/pulse-chain.ts';
import {
  allSignerKeys, issueReceipt, publishNodeKeys, signerKeys, verifyReceipt, type SignedReceipt,
} from '../../src/core/receipts.ts';
import { canonicalJson } from '../../src/protocol/canonical.ts';
import { verifyWithRawKey } from '../../src/protocol/ed25519.ts';
import { PRICE_VERSION, QUOTE_TERMS_VERSION } from '../../src/protocol/pricing.ts';
import { outputHash, signedBytes, type PulseBody, type SignedPulse } from '../../src/protocol/pulse-format.ts';
import { checkpointBody, formatTlogProof, noteKeyHash, signatureLine } from '../../src/protocol/tlog-format.ts';
import { parseNote, parseTlogProof } from '../../src/kit/tlog.ts';
import { coreFixture, type Fixture } from '../support/core-fixture.ts';

/** A receipt's verdict by `id`'s published key set (what VERIFY_RECEIPT and the audit check it with). */
function verdict(id: NodeIdentity, r: SignedReceipt): { valid: boolean; reason?: string } {
  const { valid, reason } = verifyReceipt(id.publishedKeys(), r);
  return reason ? { valid, reason } : { valid };
}

const stranger = (() => {
  const dir = mkdtempSync(join(tmpdir(), 'stranger-'));
  const id = NodeIdentity.loadOrCreate(dir);
  rmSync(dir, { recursive: true, force: true });
  return id;
})();

function receiptOf(f: Fixture) {
  return issueReceipt(f.ctx.kernels, f.identity, {
    service: 'submit-id', command: 'SUBMIT_ID', quote_id: 'q1abc', machine_id: 'm-1', units_charged: 1234n,
    input_digest: 'aa'.repeat(32), output_digest: 'bb'.repeat(32), status: 'ok', at: f.clock.now(),
  });
}

test('receipt guard: verifyReceipt refuses every tampered field, a foreign signature and a cut signature',
  async (t) => {
  const f = await coreFixture(t);
  const r = receiptOf(f);
  t.deepEqual(verdict(f.identity, r), { valid: true });
  for (const field of Object.keys(r.receipt) as (keyof SignedReceipt['receipt'])[]) {
    if (field === 'key_id') continue;
    const v = r.receipt[field];
    const changed = typeof v === 'number' ? v + 1 : `${String(v).slice(0, -1)}${String(v).endsWith('0') ? '1' : '0'}`;
    const forged = { ...r, receipt: { ...r.receipt, [field]: changed } } as SignedReceipt;
    t.deepEqual(verdict(f.identity, forged), { valid: false, reason: 'bad_signature' }, field);
  }
  const resigned = stranger.sign(Buffer.from(JSON.stringify(r.receipt))).toString('base64url');
  t.deepEqual(verdict(f.identity, { ...r, signature: resigned }), { valid: false, reason: 'bad_signature' });
  const cut = Buffer.from(r.signature, 'base64url').subarray(0, 63).toString('base64url');
  t.deepEqual(verdict(f.identity, { ...r, signature: cut }), { valid: false, reason: 'bad_signature' });
  t.deepEqual(verdict(stranger, r), { valid: false, reason: 'unknown_key' });
});

test('receipt guard: a receipt carries the execution\'s facts, signed (Ed25519) over their RFC 8785 bytes, '
  + 'with the HMAC-SHA256 result tag', async (t) => {
  const f = await coreFixture(t);
  const r = receiptOf(f);
  const { receipt_id: receiptId, ...rest } = r.receipt;
  t.regex(receiptId, /^rcpt/);
  t.deepEqual(rest, {
    format: 'svc_receipt_v1', service: 'submit-id', command: 'SUBMIT_ID', quote_id: 'q1abc', machine_id: 'm-1',
    units_charged: '1234', price_version: PRICE_VERSION, quote_terms_version: QUOTE_TERMS_VERSION,
    input_digest: 'aa'.repeat(32), output_digest: 'bb'.repeat(32), status: 'ok',
    issued_at: f.clock.now().toISOString(), node_id: f.identity.nodeId, key_id: f.identity.keyId,
    result_tag: createHmac('sha256', f.identity.resultKey()).update('{"input_digest":"' + 'aa'.repeat(32)
      + '","output_digest":"' + 'bb'.repeat(32) + '","quote_id":"q1abc","service":"submit-id"}').digest('hex'),
  });
  const pub = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'),
    f.identity.publicKeyRaw]), format: 'der', type: 'spki' });
  t.true(verify(null, Buffer.from(canonicalJson(r.receipt)), pub, Buffer.from(r.signature, 'base64url')),
    'node:crypto verifies the signature over the canonical bytes');
});

test('receipt guard: across a key rotation a receipt verifies by the key it names, issued_at inside its window',
  async (t) => {
  const f = await coreFixture(t);
  const t0 = f.clock.now();
  const old = receiptOf(f);
  f.clock.advance(1000);
  f.identity.rotate(f.clock.now());
  // work that read the clock before the switch signs with the key of its time
  const inFlight = issueReceipt(f.ctx.kernels, f.identity, {
    service: 'submit-id', command: 'SUBMIT_ID', quote_id: 'q1abd', machine_id: 'm-1', units_charged: 1n,
    input_digest: 'aa'.repeat(32), output_digest: 'bb'.repeat(32), status: 'ok', at: new Date(t0.getTime() + 500),
  });
  f.clock.advance(1000);
  const fresh = receiptOf(f);
  t.is(inFlight.receipt.key_id, old.receipt.key_id);
  t.not(fresh.receipt.key_id, old.receipt.key_id);
  for (const r of [old, inFlight, fresh]) t.deepEqual(verdict(f.identity, r), { valid: true });
  // each key vouches only for its window: the retired key after it, the new key before it
  const sign = (at: Date, issued: Date): SignedReceipt => {
    const s = f.identity.signerAt(at);
    const receipt = { ...old.receipt, key_id: s.keyId, issued_at: issued.toISOString() };
    return { receipt, signature: s.sign(Buffer.from(canonicalJson(receipt), 'utf8')).toString('base64url') };
  };
  const late = sign(t0, f.clock.now());
  t.is(late.receipt.key_id, old.receipt.key_id);
  t.deepEqual(verdict(f.identity, late), { valid: false, reason: 'outside_key_window' });
  t.deepEqual(verdict(f.identity, sign(f.clock.now(), t0)), { valid: false, reason: 'outside_key_window' });
});

test('receipt guard: a receipt is checked by the key set of the node it names: this node\'s own, another\'s ' +
  'as published on the store (also after its rotation), none for an unknown or ill-typed node id', async (t) => {
  const f = await coreFixture(t);
  const dir = mkdtempSync(join(tmpdir(), 'node-b-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const b = NodeIdentity.loadOrCreate(dir);
  t.not(b.nodeId, f.identity.nodeId);
  t.deepEqual(await signerKeys(f.store, f.identity, f.identity.nodeId), f.identity.publishedKeys());
  t.is(await signerKeys(f.store, f.identity, b.nodeId), undefined, 'not published yet');

  await publishNodeKeys(f.store, b, f.clock.now());
  t.deepEqual(await f.store.get('node_keys', b.nodeId), {
    node_id: b.nodeId, signing: b.publishedKeys(), published_at: f.clock.now().toISOString(),
  });
  t.deepEqual(await signerKeys(f.store, f.identity, b.nodeId), b.publishedKeys());
  t.deepEqual(await signerKeys(f.store, b, f.identity.nodeId), undefined, 'A never published: B knows it not');
  for (const odd of [undefined, null, 42, {}, ['x']]) t.is(await signerKeys(f.store, f.identity, odd), undefined);

  // B's receipt verifies here by B's published keys, and not by this node's own
  const fromB = issueReceipt(f.ctx.kernels, b, {
    service: 'submit-id', command: 'SUBMIT_ID', quote_id: 'q1abc', machine_id: 'm-1', units_charged: 1n,
    input_digest: 'aa'.repeat(32), output_digest: 'bb'.repeat(32), status: 'ok', at: f.clock.now(),
  });
  t.true(verifyReceipt(await signerKeys(f.store, f.identity, fromB.receipt.node_id), fromB).valid);
  t.deepEqual(verdict(f.identity, fromB), { valid: false, reason: 'unknown_key' });
  t.deepEqual(verifyReceipt(undefined, fromB), { valid: false, reason: 'unknown_key' }, 'a node not known here');

  // B rotates and publishes again: its old receipt still verifies, by its retired key
  f.clock.advance(1000);
  b.rotate(f.clock.now());
  await publishNodeKeys(f.store, b, f.clock.now());
  const keys = await signerKeys(f.store, f.identity, b.nodeId);
  t.is(keys?.length, 2);
  t.true(verifyReceipt(keys, fromB).valid);
  const all = await allSignerKeys(f.store, f.identity);
  t.deepEqual([...all.keys()].sort(), [b.nodeId, f.identity.nodeId].sort());
  t.deepEqual(all.get(b.nodeId), b.publishedKeys());
  t.deepEqual(all.get(f.identity.nodeId), f.identity.publishedKeys());
});

test('Ed25519 guard: verifyWithRawKey answers false (never throws) for a short key or a short signature', (t) => {
  const msg = Buffer.from('m');
  const sig = stranger.sign(msg);
  t.true(verifyWithRawKey(stranger.publicKeyRaw, msg, sig));
  t.false(verifyWithRawKey(stranger.publicKeyRaw.subarray(0, 31), msg, sig));
  t.false(verifyWithRawKey(stranger.publicKeyRaw, msg, sig.subarray(0, 63)));
  t.false(verifyWithRawKey(stranger.publicKeyRaw, msg, Buffer.concat([sig, Buffer.of(0)])));
  t.false(verifyWithRawKey(stranger.publicKeyRaw, Buffer.from('n'), sig));
});

// --- pulses -------------------------------------------------------------------------------------

type Signer = { sign(d: Uint8Array): Buffer };
const signPulse = (id: Signer, body: PulseBody): SignedPulse => {
  const sig = id.sign(signedBytes(body));
  return { pulse: body, signature: sig.toString('base64url'), output_hash: outputHash(body, sig) };
};

async function pulseCase(t: ExecutionContext) {
  const f = await coreFixture(t);
  t.teardown(() => f.ctx.chain.stop());
  await f.ctx.chain.start();
  const committed = await f.ctx.chain.emit(f.clock.now());
  const seed = f.ctx.chain.current().seed;
  f.clock.advance(60_000);
  const revealing = await f.ctx.chain.emit(f.clock.now());
  const bits = 256;
  const key = pulseKey(f.ctx.kernels, seed, 'q1pulse', 'm-p');
  const result: PulseResult = {
    quote_id: 'q1pulse', machine_id: 'm-p', bits,
    output_hex: Buffer.from(f.ctx.kernels.pulseExpand(key, new Uint8Array(0), bits)).toString('hex'),
    pulse: { chain_id: committed.pulse.chain_id, index: committed.pulse.index, commit: committed.pulse.commit },
  };
  const pub = f.identity.public.public_key;
  const failing = async (r: PulseResult, k: SignedPulse, k1: SignedPulse, key64 = pub) => {
    const v = await verifyPulse(r, k, k1, key64);
    t.is(v.ok, v.checks.every((c) => c.ok));
    return v.checks.filter((c) => !c.ok).map((c) => c.name.split(' (')[0]!.split(' =')[0]!);
  };
  return { f, committed, revealing, result, failing };
}

test('pulse guard: verifyPulse passes a real pair and names exactly the check each forgery breaks', async (t) => {
  const { f, committed, revealing, result, failing } = await pulseCase(t);
  t.deepEqual(await failing(result, committed, revealing), []);
  // signatures: re-signed by a stranger (output hashes recomputed, links intact) — only signatures fail
  const k1Foreign = signPulse(stranger, revealing.pulse);
  t.deepEqual(await failing(result, committed, k1Foreign), ['pulse k+1 signature']);
  const kForeign = signPulse(stranger, committed.pulse);
  const k1Linked = signPulse(stranger, { ...revealing.pulse, prev_output: kForeign.output_hash });
  t.deepEqual(await failing(result, kForeign, k1Linked), ['pulse k signature', 'pulse k+1 signature']);
  // a body changed after signing, its output hash recomputed to match
  const edited = { ...revealing.pulse, time_start: '2000-01-01T00:00:00.000Z' };
  const sig = Buffer.from(revealing.signature, 'base64url');
  const k1Edited = { pulse: edited, signature: revealing.signature, output_hash: outputHash(edited, sig) };
  t.deepEqual(await failing(result, committed, k1Edited), ['pulse k+1 signature']);
  t.deepEqual(await failing(result, committed, revealing, stranger.public.public_key),
    ['pulse k signed by a trusted key', 'pulse k+1 signed by a trusted key'], 'another node\'s key');
  // output hash
  t.deepEqual(await failing(result, committed, { ...revealing, output_hash: 'cd'.repeat(32) }),
    ['pulse k+1 output_hash']);
  // the result names another pulse
  t.deepEqual(
    await failing({ ...result, pulse: { ...result.pulse, index: result.pulse.index + 1 } }, committed, revealing),
      ['pulse k is the result\'s pulse']);
  t.deepEqual(
    await failing({ ...result, pulse: { ...result.pulse, commit: 'ab'.repeat(32) } }, committed, revealing),
      ['pulse k is the result\'s pulse']);
  t.deepEqual(
    await failing({ ...result, pulse: { ...result.pulse, chain_id: 'chain_other' } }, committed, revealing),
      ['pulse k is the result\'s pulse']);
  // validly signed by the node, but not the next pulse: wrong index, chain or link
  const node = f.identity;
  const skipped = signPulse(node, { ...revealing.pulse, index: revealing.pulse.index + 1 });
  t.deepEqual(await failing(result, committed, skipped),
    ['pulse k+1 follows pulse k']);
  t.deepEqual(await failing(result, committed, signPulse(node, { ...revealing.pulse, chain_id: 'chain_x' })),
    ['pulse k+1 follows pulse k']);
  t.deepEqual(await failing(result, committed, signPulse(node, { ...revealing.pulse, prev_output: 'ee'.repeat(32) })),
    ['pulse k+1 follows pulse k']);
  // validly signed, but naming another node than the key's
  const otherNode = signPulse(node, { ...revealing.pulse, node_id: 'svc-node-0000000000000000' });
  t.deepEqual(await failing(result, committed, otherNode), ['pulse k+1 node_id names a trusted key\'s node']);
  // validly signed, but revealing another seed or none
  // (a seed revealed for another index is no reveal of seed k: its hash check fails with it)
  t.deepEqual(await failing(result, committed, signPulse(node, { ...revealing.pulse, revealed_index: 7 })),
    ['pulse k+1 reveals seed k', 'SHA-256(revealed seed)']);
  const noSeed = signPulse(node, { ...revealing.pulse, revealed_seed: null });
  t.deepEqual(await failing(result, committed, noSeed),
    ['pulse k+1 reveals seed k', 'SHA-256(revealed seed)', 'recomputed output']);
  const otherSeed = signPulse(node, { ...revealing.pulse, revealed_seed: '11'.repeat(32) });
  t.deepEqual(await failing(result, committed, otherSeed), ['SHA-256(revealed seed)', 'recomputed output']);
  // the output itself, its bits, its quote or machine
  const flipped = (result.output_hex[0] === '0' ? '1' : '0') + result.output_hex.slice(1);
  t.deepEqual(await failing({ ...result, output_hex: flipped }, committed, revealing), ['recomputed output']);
  t.deepEqual(await failing({ ...result, bits: 255 }, committed, revealing), ['recomputed output']);
  t.deepEqual(await failing({ ...result, machine_id: 'm-q' }, committed, revealing), ['recomputed output']);
  t.deepEqual(await failing({ ...result, quote_id: 'q1other' }, committed, revealing), ['recomputed output']);
});

test('pulse guard: verifyPublishedPulse (svc pulse) passes a published pair, alone or linked, and refuses a forgery',
  async (t) => {
  const { f, committed, revealing } = await pulseCase(t);
  const pub = f.identity.public.public_key;
  const names = (v: { ok: boolean; checks: { name: string; ok: boolean }[] }) => {
    t.is(v.ok, v.checks.every((c) => c.ok));
    return v.checks.filter((c) => !c.ok).map((c) => c.name.split(' (')[0]!);
  };
  const pair = await verifyPublishedPulse(revealing, committed, pub);
  t.deepEqual(names(pair), []);
  t.true(pair.checks.length > 4, 'the link and the reveal are checked too');
  t.deepEqual(names(await verifyPublishedPulse(committed, undefined, pub)), []);
  const forged = names(await verifyPublishedPulse(signPulse(stranger, revealing.pulse), committed, pub));
  t.true(forged.length > 0 && forged.every((n) => /signature|trusted key/.test(n)), forged.join('; '));
});

// --- transparency-log proofs ----------------------------------------------------------------------

test('tlog guard: verifyTlogProof checks the checkpoint signature itself (not its key hash), ' +
  'its origin, and inclusion under the signed size and root', async (t) => {
  const f = await coreFixture(t);
  const log = f.ctx.logs.timestamps;
  const entries = Array.from({ length: 6 }, (_, i) => Buffer.from(`entry ${i}`));
  let last!: Awaited<ReturnType<typeof log.append>>;
  for (const e of entries) last = await log.append(() => e);
  await log.append(() => Buffer.from('entry 6'));
  const pub = f.identity.public.public_key;
  const entry = entries[5]!;
  const failing = async (proof: string, e: Uint8Array = entry, key = pub, origin: string | undefined = log.origin) =>
    (await verifyTlogProof(proof, e, key, origin)).checks.filter((c) => !c.ok).map((c) => c.name.split(' (')[0]!);
  const SIG = 'checkpoint signed by the node key';
  const INCL = `entry included at index 5 of 6`;
  t.deepEqual(await failing(last.tlogProof), []);
  t.true((await verifyTlogProof(last.tlogProof, entry, pub)).ok, 'without an expected origin');

  // the signature line keeps the right key hash, the signature bytes are not the node's
  const note = parseNote(last.checkpoint);
  const badSig = Buffer.from(note.signatures[0]!.signature);
  badSig[10]! ^= 1;
  const keyHash = noteKeyHash(log.origin, f.identity.publicKeyRaw);
  const forgedNote = `${note.text}\n${signatureLine(log.origin, keyHash, badSig)}`;
  const proof = (checkpoint: string, index = 5, hashes = last.proof) => formatTlogProof(index, hashes, checkpoint);
  t.deepEqual(await failing(proof(forgedNote)), [SIG], 'right key hash, wrong signature');
  const strangerSig = stranger.sign(Buffer.from(note.text, 'utf8'));
  t.deepEqual(await failing(proof(`${note.text}\n${signatureLine(log.origin, keyHash, strangerSig)}`)), [SIG]);
  const otherHash = noteKeyHash('other/origin', f.identity.publicKeyRaw);
  const goodSig = note.signatures[0]!.signature;
  t.deepEqual(await failing(proof(`${note.text}\n${signatureLine(log.origin, otherHash, goodSig)}`)), [SIG],
    'the node\'s signature under a key hash for another origin');
  t.deepEqual(await failing(proof(`${note.text}\n${signatureLine('other/origin', keyHash, goodSig)}`)), [SIG],
    'the node\'s signature and key hash on a line named for another log');
  t.deepEqual(await failing(last.tlogProof, entry, stranger.public.public_key), [SIG], 'checked against another key');

  // checkpoints the node really signed, but for another size or root: inclusion must fail
  const signed = (size: number, root: Uint8Array, origin = log.origin) => {
    const body = checkpointBody(origin, size, root);
    return `${body}\n${signatureLine(origin, noteKeyHash(origin, f.identity.publicKeyRaw),
      f.identity.sign(Buffer.from(body, 'utf8')))}`;
  };
  t.deepEqual(await failing(proof(signed(6, last.root))), [], 'the same checkpoint re-signed passes');
  t.deepEqual(await failing(proof(signed(7, last.root))), [`entry included at index 5 of 7`]);
  t.deepEqual(await failing(proof(signed(5, last.root))), [`entry included at index 5 of 5`]);
  const otherRoot = Buffer.from(last.root);
  otherRoot[0]! ^= 1;
  t.deepEqual(await failing(proof(signed(6, otherRoot))), [INCL]);
  t.deepEqual(await failing(proof(signed(6, last.root, 'svc/test/other'))), ['checkpoint origin is the expected log']);
  // the proof itself: another index, a hash changed, dropped or added, another entry
  t.deepEqual(await failing(proof(last.checkpoint, 4)), ['entry included at index 4 of 6']);
  const changed = last.proof.map((h, i) => (i === 0 ? Buffer.alloc(32, 9) : h));
  t.deepEqual(await failing(proof(last.checkpoint, 5, changed)), [INCL]);
  t.deepEqual(await failing(proof(last.checkpoint, 5, last.proof.slice(1))), [INCL]);
  t.deepEqual(await failing(proof(last.checkpoint, 5, [...last.proof, Buffer.alloc(32)])), [INCL]);
  t.deepEqual(await failing(last.tlogProof, entries[4]!), [INCL]);
  t.deepEqual(await failing('c2sp.org/tlog-proof@v1\nindex 5\n\nnot a note'), ['checkpoint parses']);
  t.is(parseTlogProof(last.tlogProof).index, 5n);
});
