// Issued quotes are not stored: the quote_id carries the terms, MAC'd with a node
// secret, and the core keeps a record only from ACCEPT_QUOTE on (written in the same synced batch
// as the reservation). A free quote costs no write and leaves nothing on disk; a quote lost in a
// crash is one nobody had paid for. Expiry is part of the terms, so an id is worthless after it.
//
// quote_id = "q1" + base64url(body ‖ tag), body (big-endian):
//   created_ms u48 · ttl_ms u32 · service u8 · priority u8 · bits u32 · bytes u32 · max_output u32
//   · quote_units u48 · nonce 6 B · machine hint 6 B · flags u8 [· input digest 32 B when flags & 1]
//   tag = HMAC-SHA256(key, "svc/quote/v1" ‖ body ‖ machine_id)[:16]
// 43 bytes (75 with a digest) + 16 → 81 (124) characters: inside the 128 every id may have.
// The machine hint (SHA-256(machine_id)[:6]) tells "another machine's quote" (409) from "no such
// quote" (404) without a read; the tag, over the full machine_id, is what makes the id unforgeable.
import { timingSafeEqual } from 'node:crypto';
import { Kernels } from '../kernels/kernels.ts';
import '../kernels/wasm.ts';
import { SERVICES, type ServiceName } from '../protocol/services.ts';
import { randomBytesPooled } from './ids.ts';

export const QUOTE_ID_PREFIX = 'q1';
const PRIORITIES = ['low', 'normal', 'high'] as const;
const TAG_BYTES = 16;
const BODY_BYTES = 43;
const DIGEST_BYTES = 32;
const DOMAIN = Buffer.from('svc/quote/v1');

export interface QuoteTerms {
  created_ms: number;
  ttl_ms: number;
  service: ServiceName;
  priority: (typeof PRIORITIES)[number];
  bits: number;
  bytes: number;
  max_output: number;
  quote_units: number;
  /** the SHA-256 of the quoted input, hex (MAKE_BCT/VERIFY_BCT quoted with their input) */
  input_digest: string | null;
}

// Every free quote computes both of these, and every ACCEPT and EXECUTE checks them: they run on this
// module's own kernel instance (a few microseconds each, against node:crypto's object per hash), the
// MAC with its key's pads absorbed once per key.
let kernels: Kernels | null = null;
const k = () => (kernels ??= Kernels.create());
const macs = new WeakMap<Uint8Array, (message: Uint8Array) => Uint8Array>();

const hint = (machineId: string) => Buffer.from(k().sha256(Buffer.from(machineId)).buffer, 0, 6);

function tag(key: Uint8Array, body: Buffer, machineId: string): Buffer {
  let mac = macs.get(key);
  if (!mac) macs.set(key, mac = k().hmacSha256Keyed(key));
  const message = Buffer.concat([DOMAIN, body, Buffer.from(machineId)]);
  const t = mac(message);
  return Buffer.from(t.buffer, t.byteOffset, TAG_BYTES);
}

export function encodeQuoteId(key: Uint8Array, machineId: string, t: QuoteTerms): string {
  const body = Buffer.alloc(BODY_BYTES + (t.input_digest ? DIGEST_BYTES : 0));
  let o = body.writeUIntBE(t.created_ms, 0, 6);
  o = body.writeUInt32BE(t.ttl_ms, o);
  o = body.writeUInt8(SERVICES.findIndex((s) => s.service === t.service), o);
  o = body.writeUInt8(PRIORITIES.indexOf(t.priority), o);
  o = body.writeUInt32BE(t.bits, o);
  o = body.writeUInt32BE(t.bytes, o);
  o = body.writeUInt32BE(t.max_output, o);
  o = body.writeUIntBE(t.quote_units, o, 6);
  o += randomBytesPooled(6).copy(body, o);
  o += hint(machineId).copy(body, o);
  o = body.writeUInt8(t.input_digest ? 1 : 0, o);
  if (t.input_digest) Buffer.from(t.input_digest, 'hex').copy(body, o);
  return QUOTE_ID_PREFIX + Buffer.concat([body, tag(key, body, machineId)]).toString('base64url');
}

export type Decoded = { ok: true; terms: QuoteTerms } | { ok: false; why: 'not_a_quote' | 'other_machine' };

/** The terms of a quote_id issued by this node to `machineId`, or why not. */
export function decodeQuoteId(key: Uint8Array, machineId: string, quoteId: string): Decoded {
  if (!quoteId.startsWith(QUOTE_ID_PREFIX)) return { ok: false, why: 'not_a_quote' };
  const raw = Buffer.from(quoteId.slice(QUOTE_ID_PREFIX.length), 'base64url');
  const bodyLen = raw.length - TAG_BYTES;
  if (bodyLen !== BODY_BYTES && bodyLen !== BODY_BYTES + DIGEST_BYTES) return { ok: false, why: 'not_a_quote' };
  // the id must be the canonical encoding of its bytes: no second spelling of one quote
  if (QUOTE_ID_PREFIX + raw.toString('base64url') !== quoteId) return { ok: false, why: 'not_a_quote' };
  const body = raw.subarray(0, bodyLen);
  if (!body.subarray(36, 42).equals(hint(machineId))) return { ok: false, why: 'other_machine' };
  if (!timingSafeEqual(raw.subarray(bodyLen), tag(key, body, machineId))) return { ok: false, why: 'not_a_quote' };
  const service = SERVICES[body.readUInt8(10)]?.service;
  const priority = PRIORITIES[body.readUInt8(11)];
  const flags = body.readUInt8(42);
  if (!service || !priority || flags !== (bodyLen > BODY_BYTES ? 1 : 0)) return { ok: false, why: 'not_a_quote' };
  return {
    ok: true,
    terms: {
      created_ms: body.readUIntBE(0, 6), ttl_ms: body.readUInt32BE(6), service, priority,
      bits: body.readUInt32BE(12), bytes: body.readUInt32BE(16), max_output: body.readUInt32BE(20),
      quote_units: body.readUIntBE(24, 6), input_digest: flags ? body.subarray(BODY_BYTES).toString('hex') : null,
    },
  };
}
