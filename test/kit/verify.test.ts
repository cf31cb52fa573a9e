// The kit's offline verifiers on material a real svcd produced (paid executions over svc/1): each
// accepts the real thing, rejects it after one flipped byte, and agrees with the server's own
// verification (core/receipts.ts for receipts, node:crypto for signatures, @hpke/core for sealed
// messages) — with WebCrypto Ed25519 and with the @noble/curves fallback alike.
import test from 'ava';
import { createHash, createPublicKey, generateKeyPairSync, verify as edVerify } from 'node:crypto';
import { CipherSuite, HkdfSha256 } from '@hpke/core';
import { Chacha20Poly1305 } from '@hpke/chacha20poly1305';
import { DhkemX25519HkdfSha256 } from '@hpke/dhkem-x25519';
import { fundMachine, paidExecution } from '../support/svcd.ts';
import { NodeIdentity } from '../../src/core/node-identity.ts';
import { verifyReceipt as serverVerifyReceipt, type SignedReceipt } from '../../src/core/receipts.ts';
import { pae as serverPae } from '../../src/core/executors/attest-event.ts';
import {
  fromHex, openSealedMessage, pae, parseCheckpoint, parseNote, parseTlogProof, toHex, useEd25519Backend,
  verifyAttestation, verifyLogConsistency, verifyLogInclusion, verifyPulse, verifyReceipt, verifyTimestampProof,
  type Verdict,
} from '../../src/kit/verify-api.ts';
import { loadKernels } from '../../src/kit/kernels.ts';
import type { SvcClient } from '../../src/client/client.ts';
import { readJson, sharedTest } from '../helpers.ts';
import { until } from '../support/until.ts';
import { sharedSvcd } from '../support/start-svcd.ts';

let c: SvcClient;
let auth: { token: string };
const M = 'kit-verify';
const results: Record<string, any> = {};

// registered before sharedSvcd's serial after hook: the client is closed when svcd stops
test.after.always(() => c?.close());
const s = sharedSvcd(test, { SVC_PULSE_PERIOD_MS: '1500' }, { args: ['core'] });
test.before(async () => {
  auth = { token: await fundMachine(s, M, 5) };
  c = await s.edge();
});

const paid = (service: string, quote: Record<string, unknown>, exec: Record<string, unknown> = {}) =>
  paidExecution(c, M, auth.token, service, quote, exec);

const flip = (s: string, at = 0) => {
  const b = Buffer.from(s, 'base64url');
  b[at]! ^= 1;
  return b.toString('base64url');
};
const nodesJson = () => ({ nodes: [{ key_id: results.hello.node.key_id, public_key: results.hello.node.public_key }] });

for (const backend of ['webcrypto', 'noble'] as const) {
  test.serial(`${backend}: receipts verify, agree with core/receipts.ts, fail after any flipped byte`, async (t) => {
    useEd25519Backend(backend);
    t.teardown(() => useEd25519Backend(null));
    const ex = await paid('get-pulse', { bits: 256 });
    const r = await c.request('VERIFY_RECEIPT', { receipt_id: ex.receipt_id, machine_id: M });
    results.hello = { node: { key_id: r.key_id, public_key: r.public_key } };
    const identity = NodeIdentity.loadOrCreate(s.dataDir);
    const server = (x: SignedReceipt) => {
      const v = serverVerifyReceipt(identity.publishedKeys(), x);
      return { valid: v.valid, ...(v.reason ? { reason: v.reason } : {}) };
    };
    const kit = async (x: unknown, keys: Parameters<typeof verifyReceipt>[1] = nodesJson()) => {
      const v = await verifyReceipt(x, keys);
      return { valid: v.valid, ...(v.reason ? { reason: v.reason } : {}) };
    };
    t.deepEqual(await kit(r), { valid: true });
    t.deepEqual(await kit(r), server(r as unknown as SignedReceipt));
    t.deepEqual(await kit(r, r.public_key as string), { valid: true }, 'a bare base64url key works too');
    // every field changed, and the signature flipped at every byte: both sides say bad_signature
    const body = r.receipt as Record<string, unknown>;
    for (const field of Object.keys(body).filter((f) => f !== 'key_id')) {
      const v = body[field];
      const forged = { ...r, receipt: { ...body, [field]: typeof v === 'number' ? v + 1 : `${String(v)}x` } };
      t.deepEqual(await kit(forged), server(forged as unknown as SignedReceipt), field);
      t.false((await kit(forged)).valid, field);
    }
    for (let at = 0; at < 64; at += 7) {
      const forged = { ...r, signature: flip(r.signature as string, at) };
      t.deepEqual(await kit(forged), { valid: false, reason: 'bad_signature' });
      t.deepEqual(await kit(forged), server(forged as unknown as SignedReceipt));
    }
    const otherKey = { ...r, receipt: { ...body, key_id: '0000000000000000' } };
    t.deepEqual(await kit(otherKey), server(otherKey as unknown as SignedReceipt), 'unknown_key on both sides');
    const stranger = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' })
      .subarray(-32);
    t.deepEqual(await kit(r, stranger.toString('base64url')), { valid: false, reason: 'unknown_key' });
    t.deepEqual(await kit({ receipt: 'nope' }), { valid: false, reason: 'malformed' });
  });

  test.serial(`${backend}: a GET_PULSE output recomputes from pulses k and k+1; every forgery fails`, async (t) => {
    useEd25519Backend(backend);
    t.teardown(() => useEd25519Backend(null));
    const ex = await paid('get-pulse', { bits: 1001 });
    const result: any = { ...ex, machine_id: M };
    const index = (ex.pulse as any).index as number;
    const reveal: any = await until('pulse k+1 is published',
      () => c.request('PULSE', { index: index + 1 }).catch(() => null), { every: 100 });
    const committed = await c.request('PULSE', { index });
    t.truthy(reveal, 'pulse k+1 was published');
    const ok = await verifyPulse(reveal, committed, { result: result as any });
    t.true(ok.valid, JSON.stringify(ok.checks));
    t.true(ok.checks.length >= 10 && ok.checks.every((x) => x.ok));
    t.true((await verifyPulse(reveal)).valid, 'one pulse alone: signature and output hash');
    // independent: node:crypto over the canonical bytes the kit hashed
    const spki = createPublicKey({
      key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(reveal.public_key, 'base64url')]),
      format: 'der', type: 'spki',
    });
    const { canonicalJson } = await import('../../src/protocol/canonical.ts');
    const sig = Buffer.from(reveal.signature, 'base64url');
    t.true(edVerify(null, Buffer.from(canonicalJson(reveal.pulse)), spki, sig));
    const no = async (v: Promise<Verdict>, reason: string) => {
      const r = await v;
      t.false(r.valid);
      t.is(r.reason, reason, JSON.stringify(r.checks.filter((x) => !x.ok)));
    };
    const flipHex = (h: string) => (h[0] === '0' ? '1' : '0') + h.slice(1);
    await no(verifyPulse(reveal, committed, { result: { ...result, output_hex: flipHex(result.output_hex) } as any }),
      'bad_output');
    await no(verifyPulse(reveal, committed, { result: { ...result, machine_id: 'other' } as any }), 'bad_output');
    await no(verifyPulse({ ...reveal, signature: flip(reveal.signature) }, committed), 'bad_signature');
    const badHash = { ...reveal, output_hash: flipHex(reveal.output_hash) };
    await no(verifyPulse(badHash, committed), 'bad_output_hash');
    const badPrev = { ...committed, output_hash: flipHex(committed.output_hash as string) };
    await no(verifyPulse(reveal, badPrev), 'bad_output_hash');
    await no(verifyPulse({ ...reveal, pulse: { ...reveal.pulse, revealed_seed: flipHex(reveal.pulse.revealed_seed) } },
      committed), 'bad_signature');
    await no(verifyPulse(committed, reveal), 'not_next');
    await no(verifyPulse(reveal, committed, { nodeKeys: flip(reveal.public_key) }), 'unknown_key');
    await no(verifyPulse('garbage'), 'malformed');
  });
}

test.serial('TIMESTAMP_PROOF: token, log inclusion and consistency between two signed checkpoints', async (t) => {
  const k = await loadKernels();
  const digests = [0, 1, 2].map((i) => createHash('sha256').update(`doc ${i}`).digest());
  const rs: any[] = [];
  for (const d of digests) rs.push(await paid('timestamp-proof', { bytes: 32 }, { plain_hex: d.toString('hex') }));
  const keys = rs[0].log.public_key as string;
  for (const [i, r] of rs.entries()) {
    const v = await verifyTimestampProof(r, keys, { digest: digests[i] });
    t.true(v.valid, JSON.stringify(v.checks));
  }
  const last = rs[2];
  const entry = Buffer.from(last.log.entry_base64, 'base64');
  t.true((await verifyLogInclusion(last.tlog_proof, entry, keys, { origin: last.log.origin })).valid);
  const reasons = async (r: unknown, opts = {}) => (await verifyTimestampProof(r, keys, opts)).reason;
  t.is(await reasons(last, { digest: digests[0] }), 'digest_mismatch');
  t.is(await reasons({ ...last, token_signature: flip(last.token_signature) }), 'bad_token_signature');
  t.is(await reasons({ ...last, token: { ...last.token, time: '2000-01-01T00:00:00.000Z' } }), 'entry_mismatch');
  const lines = (last.tlog_proof as string).split('\n');
  const hashLine = Buffer.from(lines[2]!, 'base64');
  hashLine[5]! ^= 1;
  lines[2] = hashLine.toString('base64');
  t.is(await reasons({ ...last, tlog_proof: lines.join('\n') }), 'not_included');
  t.is((await verifyLogInclusion(last.tlog_proof, entry, keys, { origin: 'svc/elsewhere' })).reason, 'wrong_origin');

  // consistency: the fresh node's timestamp log holds exactly these three entries
  const leaves = rs.map((r) => k.merkleLeafHash(Buffer.from(r.log.entry_base64, 'base64')));
  const proof = k.consistencyProof(leaves, 1);
  const cp1 = rs[0].log.checkpoint as string, cp3 = rs[2].log.checkpoint as string;
  const good = await verifyLogConsistency(cp1, cp3, proof, keys);
  t.true(good.valid, JSON.stringify(good.checks));
  t.true((await verifyLogConsistency(cp1, cp3, proof.map((h) => Buffer.from(h).toString('base64')), keys)).valid);
  const bad = proof.map((h) => h.slice());
  bad[0]![0]! ^= 1;
  t.is((await verifyLogConsistency(cp1, cp3, bad, keys)).reason, 'inconsistent');
  t.is((await verifyLogConsistency(cp3, cp1, proof, keys)).reason, 'inconsistent');
  const forgedNote = cp3.replace(/\n\n— /, '\n\n— x');
  t.false((await verifyLogConsistency(cp1, forgedNote, proof, keys)).valid);
});

test.serial('ATTEST_EVENT: DSSE over PAE verifies, agrees with node:crypto, binds the event', async (t) => {
  const event = Buffer.from('{"door":"open","at":"2026-11-22T10:00:00Z"}');
  const r = await paid('attest-event', { bytes: event.length }, { plain_hex: event.toString('hex') });
  const keys = r.public_key as string;
  const v = await verifyAttestation(r, keys, { event });
  t.true(v.valid, JSON.stringify(v.checks));
  t.deepEqual(v.statement, r.statement);
  const env = r.envelope as any;
  const body = Buffer.from(env.payload, 'base64');
  t.deepEqual(Buffer.from(pae(env.payloadType, body)), serverPae(env.payloadType, body), 'one PAE');
  t.is((await verifyAttestation(r, keys, { event: Buffer.from('other') })).reason, 'subject_mismatch');
  const flipped = Buffer.from(env.payload, 'base64');
  flipped[10]! ^= 1;
  const tampered = { ...env, payload: flipped.toString('base64') };
  t.is((await verifyAttestation({ envelope: tampered }, keys)).reason, 'bad_signature');
  const sig = Buffer.from(env.signatures[0].sig, 'base64');
  sig[3]! ^= 1;
  const badSig = { ...env, signatures: [{ ...env.signatures[0], sig: sig.toString('base64') }] };
  t.is((await verifyAttestation(badSig, keys)).reason, 'bad_signature');
  t.is((await verifyAttestation(env, { nodes: [] })).reason, 'unknown_key');
});

test.serial('SEALED_MESSAGE: the recipient opens it with the kit, as @hpke/core does; nobody else can', async (t) => {
  const { publicKey, privateKey } = generateKeyPairSync('x25519');
  const pub = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const priv = new Uint8Array(privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32));
  const plain = Buffer.from('meet at the usual place, 10:00 sharp; bring the key');
  const r = await paid('sealed-message', { bytes: plain.length + 32 },
    { plain_hex: plain.toString('hex'), packet_hex: pub.toString('hex') });
  const v = await openSealedMessage(r, priv);
  t.true(v.valid, JSON.stringify(v.checks));
  t.deepEqual(Buffer.from(v.plaintext!), plain);
  const suite = new CipherSuite({
    kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Chacha20Poly1305(),
  });
  const recipient = await suite.createRecipientContext({
    recipientKey: await suite.kem.importKey('raw', priv.buffer as ArrayBuffer, false),
    enc: Buffer.from(r.enc_hex as string, 'hex'), info: Buffer.from(r.info_hex as string, 'hex'),
  });
  t.deepEqual(Buffer.from(await recipient.open(Buffer.from(r.ciphertext_hex as string, 'hex'))), plain);
  const ct = Buffer.from(r.ciphertext_hex as string, 'hex');
  ct[0]! ^= 1;
  const altered = await openSealedMessage({ ...r, ciphertext_hex: ct.toString('hex') }, priv);
  t.deepEqual([altered.valid, altered.reason, altered.plaintext], [false, 'not_authentic', null]);
  const other = new Uint8Array(generateKeyPairSync('x25519').privateKey.export({ format: 'der', type: 'pkcs8' })
    .subarray(-32));
  t.is((await openSealedMessage(r, other)).reason, 'not_authentic');
});

test('encodings: hex refuses odd lengths, other characters and non-strings; the tlog parsers name the bad line',
  (t) => {
  t.deepEqual(fromHex('00aBfF'), Uint8Array.of(0, 0xab, 0xff));
  t.deepEqual(fromHex(''), new Uint8Array(0));
  t.is(toHex(Uint8Array.of(0, 0xab, 0xff)), '00abff');
  for (const bad of ['0', 'abc', 'zz', '0g', ' 00', '00 ', '+1', '0x00']) t.throws(() => fromHex(bad), undefined, bad);
  t.throws(() => fromHex(7 as unknown as string));
  const sig = Buffer.alloc(68, 1).toString('base64');
  t.is(parseNote(`text\n\n\u2014 name ${sig}\n`).signatures[0]!.signature.length, 64);
  for (const b of ['!!!!', `${sig.slice(0, -1)}-`, `${sig}x`, `${sig}===`]) {
    t.throws(() => parseNote(`text\n\n\u2014 name ${b}\n`), { message: /^note: bad signature line/ }, b);
  }
  const root = Buffer.alloc(32, 2).toString('base64');
  t.is(parseCheckpoint(`origin\n1\n${root}\n`).root.length, 32);
  for (const b of ['!!!!', `${root}x`, root.replace('A', '_')]) {
    t.throws(() => parseCheckpoint(`origin\n1\n${b}\n`), { message: 'checkpoint: malformed origin, size or root' }, b);
  }
  const proof = (line: string) => `c2sp.org/tlog-proof@v1\nindex 0\n${line}\n\norigin\n1\n${root}\n`;
  t.is(parseTlogProof(proof(root)).proof.length, 1);
  for (const b of ['!!!!', `${root}x`, root.replace('A', '-')]) {
    t.throws(() => parseTlogProof(proof(b)), { message: 'tlog-proof: proof line is not base64' }, b);
  }
});

// the kit's HPKE (src/kit/hpke.ts: RFC 9180 on the kernels' HMAC and ChaCha20-Poly1305, so it runs
// wherever the kernels do, without WebCrypto) against the RFC's own vectors, not only against @hpke/core
sharedTest(test, 'SEALED_MESSAGE: the kit opens RFC 9180 A.2 (X25519, HKDF-SHA256, ChaCha20Poly1305, base) '
  + 'at sequence 0, and nothing else', 'hpke/rfc9180_x25519_sha256_base_psk.json', async (t, path) => {
  const all = readJson(path) as any[];
  const base = all.filter((x) => x.mode === 0 && x.kem_id === 0x20 && x.kdf_id === 1 && x.aead_id === 3);
  t.true(base.length >= 1);
  for (const v of base) {
    const sealed = (e: { ct: string; aad: string }) => ({ enc_hex: v.enc, ciphertext_hex: e.ct, info_hex: v.info,
      aad_hex: e.aad, suite: { kem_id: 0x20, kdf_id: 1, aead_id: 3, mode: 'base' } });
    const [e0, e1] = v.encryptions as { pt: string; aad: string; ct: string }[];
    const got = await openSealedMessage(sealed(e0!), fromHex(v.skRm));
    t.true(got.valid, JSON.stringify(got.checks));
    t.is(toHex(got.plaintext!), e0!.pt);
    // sequence 1 has another nonce: a single-shot open must refuse it
    t.is((await openSealedMessage(sealed(e1!), fromHex(v.skRm))).reason, 'not_authentic');
    const flipped = (e0!.ct.slice(0, -1) + ((parseInt(e0!.ct.slice(-1), 16) ^ 1).toString(16)));
    t.is((await openSealedMessage(sealed({ ...e0!, ct: flipped }), fromHex(v.skRm))).reason, 'not_authentic');
    t.is((await openSealedMessage(sealed({ ...e0!, aad: '00' }), fromHex(v.skRm))).reason, 'not_authentic');
    t.is((await openSealedMessage(sealed(e0!), fromHex(v.skEm))).reason, 'not_authentic', 'another key');
    t.is((await openSealedMessage({ ...sealed(e0!), info_hex: '00' }, fromHex(v.skRm))).reason, 'not_authentic');
  }
});
