// MAKE_BCT and VERIFY_BCT (DESIGN.md §8): a BCT packet is an XChaCha20-Poly1305 sealing under the
// node's BCT key, bound to the machine that made it. Layout (docs/verify.md §BCT):
//   "BCT1" (4) ‖ key_id (8) ‖ nonce (24) ‖ ciphertext ‖ tag (16)
//   AAD = the 36 header bytes ‖ u32be(len(machine_id)) ‖ machine_id (UTF-8)
// Opening fails closed: another machine, an unknown key, any flipped bit → valid: false, no plaintext.
// New packets use the current BCT key; the header's key id picks the key to open with, so packets
// sealed before a rotation still open (docs/operations.md "Key rotation").
import { randomBytes } from 'node:crypto';
import { BCT_OVERHEAD } from '../../protocol/services.ts';
import { canonicalDigest, sha256Hex } from '../../protocol/canonical.ts';
import { lp } from '../../protocol/pulse-format.ts';
import { bytesOf, laneOf, type Executor } from './types.ts';

export const BCT_MAGIC = Buffer.from('BCT1');

export function bctAad(header: Uint8Array, machineId: string): Buffer {
  return Buffer.concat([header, lp(machineId)]);
}

export const makeBct: Executor = async (ctx, q, a) => {
  const plain = bytesOf(a.plain_hex);
  const key = ctx.identity.bctKey();
  const keyId = ctx.identity.bctKeyId;
  const header = Buffer.concat([BCT_MAGIC, keyId, randomBytes(24)]);
  const sealed = await ctx.pool.run(
    'xchachaSeal',
    [key, header.subarray(12, 36), plain, bctAad(header, q.machine_id)],
    { priority: laneOf(q) },
  );
  const packet = Buffer.concat([header, sealed]);
  return {
    fields: {
      packet_hex: packet.toString('hex'),
      format: 'BCT1',
      key_id: keyId.toString('hex'),
      plaintext_bytes: plain.length,
    },
    input_digest: sha256Hex(plain),
    output_digest: sha256Hex(packet),
    status: 'ok',
  };
};

export const verifyBct: Executor = async (ctx, q, a) => {
  const packet = bytesOf(a.packet_hex);
  let reason: string | null = null;
  let plain: Uint8Array | null = null;
  const key = packet.length < BCT_OVERHEAD ? undefined : ctx.identity.bctKeyById(packet.subarray(4, 12));
  if (packet.length < BCT_OVERHEAD) reason = 'too_short';
  else if (!packet.subarray(0, 4).equals(BCT_MAGIC)) reason = 'not_bct1';
  else if (!key) reason = 'unknown_key';
  else {
    const header = packet.subarray(0, 36);
    plain = await ctx.pool.run(
      'xchachaOpen',
      [key, header.subarray(12, 36), packet.subarray(36), bctAad(header, q.machine_id)],
      { priority: laneOf(q) },
    );
    if (!plain) reason = 'not_authentic_or_not_this_machine';
  }
  const verdict = plain ? { valid: true, plain_hex: Buffer.from(plain).toString('hex') } : { valid: false, reason };
  return {
    fields: verdict,
    input_digest: sha256Hex(packet),
    output_digest: canonicalDigest(verdict),
    status: plain ? 'valid' : 'invalid',
  };
};
