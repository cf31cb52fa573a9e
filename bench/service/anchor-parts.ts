// What the bare anchor (anchor.ts) does for a free quote, shared with the CPU ladder's app (ladder.ts),
// whose first steps are that same app: the anchor's Ajv and its quote body's check, its body reader,
// and the quote record it answers with (svcd's fields, so the reply is about as many bytes as svcd's).
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Ajv2020 } from 'ajv/dist/2020.js';

export type Json = Record<string, unknown>;

// the same shapes svcd's schemas check for these bodies (machine id, quote id, bits, ttl), closed objects
export const text = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' };
export const ajv = new Ajv2020({ useDefaults: true });
export const quoteBody = ajv.compile({
  type: 'object',
  properties: {
    machine_id: text,
    bits: { type: 'integer', minimum: 1, maximum: 65536, default: 256 },
    quote_ttl_ms: { type: 'integer', minimum: 1000, maximum: 86_400_000, default: 60_000 },
  },
  required: ['machine_id'],
  additionalProperties: false,
});

export async function readJson(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
}

/** A quote record with svcd's fields, so the reply is about as many bytes as svcd's. */
export function newQuote(body: Json): Json {
  const now = Date.now();
  return {
    quote_id: `q_${randomBytes(15).toString('base64url')}`,
    service: 'get-pulse',
    command: 'GET_PULSE',
    machine_id: body.machine_id,
    state: 'issued',
    bits: body.bits,
    bytes: 0,
    max_output: 8192,
    priority: 'normal',
    price: {
      service: 'get-pulse',
      bits: body.bits,
      input_bytes: 0,
      estimated_ms: 2,
      priority_class: 'standard',
      quote_units: 23125,
      usd_estimate: '0.00023125',
    },
    quote_units: 23125,
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + (body.quote_ttl_ms as number)).toISOString(),
  };
}
