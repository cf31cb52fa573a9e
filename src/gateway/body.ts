// Reads a JSON request body: at most 1 MiB, must be a JSON object (or empty, meaning {}).
import type { IncomingMessage } from 'node:http';
import { ServiceError } from '../errors.ts';

export const MAX_BODY = 1 << 20;

export async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > MAX_BODY) throw new ServiceError('payload_too_large', `request body is ${declared} bytes; the limit is ${MAX_BODY}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new ServiceError('payload_too_large', `request body exceeds ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return {};
  const type = String(req.headers['content-type'] ?? 'application/json');
  if (!/^application\/([\w.+-]*\+)?json\b/i.test(type)) throw new ServiceError('invalid_request', 'content-type must be application/json');
  let v: unknown;
  try { v = JSON.parse(text); } catch { throw new ServiceError('invalid_request', 'request body is not valid JSON'); }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new ServiceError('invalid_request', 'request body must be a JSON object');
  return v as Record<string, unknown>;
}
