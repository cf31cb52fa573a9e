// Guards of the BCT executors (src/core/executors/bct.ts), in process on a real kernel pool: a packet
// MAKE_BCT seals opens with VERIFY_BCT for the machine that made it and for no other; every byte of it is
// covered (magic, key id, nonce, ciphertext, tag), each refusal names its reason and reveals no plaintext,
// and a packet sealed before a key rotation still opens after it. Fast enough for every Stryker mutant.
import test, { type ExecutionContext } from 'ava';
import { BCT_MAGIC, makeBct, verifyBct } from '../../src/core/executors/bct.ts';
import type { ExecutionArgs } from '../../src/core/executors/types.ts';
import { createQuote, type QuoteRecord } from '../../src/core/quotes.ts';
import { canonicalDigest, sha256Hex } from '../../src/protocol/canonical.ts';
import { commandSpec } from '../../src/protocol/registry.ts';
import { BCT_OVERHEAD } from '../../src/protocol/services.ts';
import { validateArgs } from '../../src/protocol/validate.ts';
import { coreFixture, type Fixture } from '../support/core-fixture.ts';

const M = 'm-bct', OTHER = 'm-other';

function quoteFor(f: Fixture, service: 'make-bct' | 'verify-bct', machineId: string, bytes: number): QuoteRecord {
  const a = { service, machine_id: machineId, bytes };
  validateArgs(commandSpec('QUOTE')!, a); // the schema's defaults, as the core applies them
  return createQuote(f.ctx, a);
}

async function make(f: Fixture, plain: Buffer, machineId = M) {
  const q = quoteFor(f, 'make-bct', machineId, plain.length);
  const args: ExecutionArgs = { machine_id: machineId, quote_id: q.quote_id, plain_hex: plain.toString('hex') };
  return makeBct(f.ctx, q, args);
}

async function verify(f: Fixture, packet: Buffer, machineId = M) {
  const q = quoteFor(f, 'verify-bct', machineId, packet.length);
  return verifyBct(f.ctx, q, { machine_id: machineId, quote_id: q.quote_id, packet_hex: packet.toString('hex') });
}

/** The verdict for `packet`, checked to be a refusal with `reason`, no plaintext and its digests. */
async function refused(t: ExecutionContext, f: Fixture, packet: Buffer, reason: string, machineId = M) {
  const o = await verify(f, packet, machineId);
  const verdict = { valid: false, reason };
  t.deepEqual(o.fields, verdict, reason);
  t.is(o.status, 'invalid');
  t.is(o.input_digest, sha256Hex(packet));
  t.is(o.output_digest, canonicalDigest(verdict));
}

test('BCT guard: a sealed packet opens for its machine only, with its layout, digests and plaintext', async (t) => {
  const f = await coreFixture(t, {}, { pool: true });
  const plain = Buffer.from('the plaintext, sealed to one machine');
  const made = await make(f, plain);
  const packet = Buffer.from(made.fields.packet_hex as string, 'hex');
  t.is(packet.length, plain.length + BCT_OVERHEAD);
  t.deepEqual(packet.subarray(0, 4), BCT_MAGIC);
  t.is(made.fields.key_id, f.identity.bctKeyId.toString('hex'));
  t.deepEqual(packet.subarray(4, 12), f.identity.bctKeyId);
  t.like(made, { status: 'ok', input_digest: sha256Hex(plain), output_digest: sha256Hex(packet) });
  t.like(made.fields, { format: 'BCT1', plaintext_bytes: plain.length });
  const again = Buffer.from((await make(f, plain)).fields.packet_hex as string, 'hex');
  t.notDeepEqual(again.subarray(12, 36), packet.subarray(12, 36), 'a fresh nonce per packet');

  const opened = await verify(f, packet);
  const verdict = { valid: true, plain_hex: plain.toString('hex') };
  t.deepEqual(opened.fields, verdict);
  t.is(opened.status, 'valid');
  t.is(opened.input_digest, sha256Hex(packet));
  t.is(opened.output_digest, canonicalDigest(verdict));
  await refused(t, f, packet, 'not_authentic_or_not_this_machine', OTHER);
});

test('BCT guard: every byte counts: a flipped bit anywhere is refused with the reason of its region', async (t) => {
  const f = await coreFixture(t, {}, { pool: true });
  const packet = Buffer.from((await make(f, Buffer.from('twelve bytes'))).fields.packet_hex as string, 'hex');
  for (let i = 0; i < packet.length; i++) {
    const bad = Buffer.from(packet);
    bad[i]! ^= 0x01;
    const reason = i < 4 ? 'not_bct1' : i < 12 ? 'unknown_key' : 'not_authentic_or_not_this_machine';
    await refused(t, f, bad, reason);
  }
});

test('BCT guard: lengths: shorter than the overhead is too_short; exactly the overhead is an empty plaintext',
  async (t) => {
    const f = await coreFixture(t, {}, { pool: true });
    const empty = Buffer.from((await make(f, Buffer.alloc(0))).fields.packet_hex as string, 'hex');
    t.is(empty.length, BCT_OVERHEAD);
    t.deepEqual((await verify(f, empty)).fields, { valid: true, plain_hex: '' });
    await refused(t, f, empty.subarray(0, BCT_OVERHEAD - 1), 'too_short');
    await refused(t, f, Buffer.alloc(0), 'too_short');
    // the magic is checked before the key: a short-enough packet of zeros is not a BCT1 packet at all
    await refused(t, f, Buffer.alloc(BCT_OVERHEAD), 'not_bct1');
  });

test('BCT guard: after a key rotation new packets name the new key, and packets sealed before still open',
  async (t) => {
    const f = await coreFixture(t, {}, { pool: true });
    const plain = Buffer.from('sealed before the rotation');
    const before = Buffer.from((await make(f, plain)).fields.packet_hex as string, 'hex');
    const oldId = f.identity.bctKeyId;
    f.identity.rotate(f.clock.now());
    t.notDeepEqual(f.identity.bctKeyId, oldId);
    const after = Buffer.from((await make(f, plain)).fields.packet_hex as string, 'hex');
    t.deepEqual(after.subarray(4, 12), f.identity.bctKeyId);
    for (const p of [before, after]) {
      t.deepEqual((await verify(f, p)).fields, { valid: true, plain_hex: plain.toString('hex') });
    }
    // the old packet's key id over the new packet's body: the old key does not open it
    const mixed = Buffer.concat([after.subarray(0, 4), oldId, after.subarray(12)]);
    await refused(t, f, mixed, 'not_authentic_or_not_this_machine');
  });
