// A receipt, a pulse and a transparency-log checkpoint produced by a real svcd, verified twice: by the
// product's verifiers (verifyReceipt's bytes, verifyWithRawKey, verifyTlogProof) and by a second
// implementation written here — @noble/curves Ed25519 over bytes canonicalized by json-canonicalize
// (the product's is src/protocol/jcs.ts), and a C2SP signed-note parse by hand. Both must accept the real
// artefacts and both must refuse each tampered one.
import test from 'ava';
import { createHash } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { canonicalize as jcs } from 'json-canonicalize';
import { verifyTlogProof } from '../../src/client/verify.ts';
import { verifyWithRawKey } from '../../src/protocol/ed25519.ts';
import { canonicalJson } from '../../src/protocol/canonical.ts';
import { startSvcd } from '../support/start-svcd.ts';
import { fundMachine, paidExecution } from '../support/svcd.ts';

const b64u = (s: string) => new Uint8Array(Buffer.from(s, 'base64url'));
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
/** The second implementation: strict RFC 8032 Ed25519 over json-canonicalize's bytes. */
const nobleJson = (value: unknown, sig: Uint8Array, pub: Uint8Array) =>
  ed25519.verify(sig, utf8(jcs(value)), pub, { zip215: false });
const productJson = (value: unknown, sig: Uint8Array, pub: Uint8Array) =>
  verifyWithRawKey(pub, utf8(canonicalJson(value)), sig);

/** A C2SP checkpoint note checked by hand: key hash over origin, Ed25519 by @noble/curves. */
function nobleNote(note: string, origin: string, pub: Uint8Array): boolean {
  const split = note.indexOf('\n\n');
  const text = note.slice(0, split + 1);
  const keyHash = createHash('sha256').update(origin).update(Buffer.of(0x0a, 0x01)).update(pub).digest().subarray(0, 4);
  return note.slice(split + 2).split('\n').filter(Boolean).some((line) => {
    const [dash, name, b64] = line.split(' ');
    const raw = Buffer.from(b64 ?? '', 'base64');
    return dash === '\u2014' && name === origin && raw.length === 68 && raw.subarray(0, 4).equals(keyHash)
      && ed25519.verify(raw.subarray(4), utf8(text), pub, { zip215: false });
  });
}

test('second implementation: a real receipt, pulse and checkpoint verify under @noble/curves over ' +
  'json-canonicalize bytes, and every tampered copy is refused by both', async (t) => {
  const s = await startSvcd(t);
  const token = await fundMachine(s, 'oracle-m', 1);
  const c = await s.edge();
  t.teardown(() => c.close());
  const run = (service: string, bytes: number, plain: string) =>
    paidExecution(c, 'oracle-m', token, service, { bytes }, { plain_hex: plain });

  // receipt
  const done = await run('submit-id', 3, 'abcdef');
  const v = await c.request('VERIFY_RECEIPT', { receipt_id: done.receipt_id, machine_id: 'oracle-m' });
  const pub = b64u(v.public_key as string);
  const receipt = v.receipt as Record<string, unknown>;
  const sig = b64u(v.signature as string);
  t.true(v.valid as boolean);
  t.is(jcs(receipt), canonicalJson(receipt), 'both canonicalizers give the same bytes');
  t.true(nobleJson(receipt, sig, pub), 'noble accepts the real receipt');
  t.true(productJson(receipt, sig, pub), 'the product accepts the real receipt');
  for (const [field, value] of [['units_charged', '1'], ['machine_id', 'oracle-x'], ['status', 'invalid'],
    ['output_digest', '00'.repeat(32)], ['issued_at', '2000-01-01T00:00:00.000Z']] as const) {
    const forged = { ...receipt, [field]: value };
    t.false(nobleJson(forged, sig, pub), `noble refuses a receipt with another ${field}`);
    t.false(productJson(forged, sig, pub), `the product refuses a receipt with another ${field}`);
  }
  const flipped = Uint8Array.from(sig);
  flipped[0]! ^= 1;
  t.false(nobleJson(receipt, flipped, pub));
  t.false(productJson(receipt, flipped, pub));
  const { result_tag: _dropped, ...withoutTag } = receipt;
  t.false(nobleJson(withoutTag, sig, pub), 'a dropped field');
  t.false(productJson(withoutTag, sig, pub));

  // pulse
  const p = await c.request('PULSE', {});
  const pulse = p.pulse as Record<string, unknown>;
  const psig = b64u(p.signature as string);
  t.deepEqual(b64u(p.public_key as string), pub);
  t.true(nobleJson(pulse, psig, pub), 'noble accepts the real pulse');
  t.true(productJson(pulse, psig, pub), 'the product accepts the real pulse');
  const outHash = createHash('sha256').update(jcs(pulse)).update(psig).digest('hex');
  t.is(outHash, p.output_hash as string, 'output_hash = SHA-256(canonical bytes ‖ signature), recomputed');
  for (const forged of [{ ...pulse, index: (pulse.index as number) + 1 }, { ...pulse, commit: 'ab'.repeat(32) },
    { ...pulse, status: 'gap' }]) {
    t.false(nobleJson(forged, psig, pub));
    t.false(productJson(forged, psig, pub));
  }

  // transparency-log checkpoint
  const digest = createHash('sha256').update('oracle document').digest('hex');
  const ts = await run('timestamp-proof', 32, digest);
  const log = ts.log as { origin: string; entry_base64: string; public_key: string };
  const proofText = ts.tlog_proof as string;
  const note = proofText.slice(proofText.indexOf('\n\n') + 2);
  const entry = Buffer.from(log.entry_base64, 'base64');
  t.true(nobleNote(note, log.origin, pub), 'noble accepts the real checkpoint');
  t.true((await verifyTlogProof(proofText, entry, log.public_key, log.origin)).ok, 'the product accepts it');
  t.is(entry.toString('utf8'), jcs(ts.token), 'the logged entry is the canonical token');
  t.true(nobleJson(ts.token, b64u(ts.token_signature as string), pub), 'the token signature, independently');
  const lines = note.split('\n');
  const tampered = [
    [lines[0], String(Number(lines[1]) + 1), ...lines.slice(2)].join('\n'),
    [lines[0], lines[1], Buffer.alloc(32, 1).toString('base64'), ...lines.slice(3)].join('\n'),
    note.replace(log.origin, `${log.origin}x`),
  ];
  for (const bad of tampered) {
    t.false(nobleNote(bad, log.origin, pub), 'noble refuses a tampered checkpoint');
    const badProof = proofText.slice(0, proofText.indexOf('\n\n') + 2) + bad;
    t.false((await verifyTlogProof(badProof, entry, log.public_key, log.origin)).ok, 'the product refuses it');
  }
});
