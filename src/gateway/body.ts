// Reads a JSON request body: at most 1 MiB, a JSON object (or empty: {}) nested ≤ MAX_JSON_DEPTH.
// Bytes being read count against one process-wide budget (issue "Trust" 13): past it, 503 busy at
// once; a body refused half-read closes its connection after the answer instead of being read on.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ServiceError } from '../errors.ts';
import { ByteBudget } from '../protocol/budgets.ts';
import { MAX_JSON_DEPTH, exceedsJsonDepth } from '../protocol/json-depth.ts';

export const MAX_BODY = 1 << 20;
const DEFAULT_BODY_BUDGET = 16 << 20;

let budget = new ByteBudget(DEFAULT_BODY_BUDGET);
const responses = new WeakMap<IncomingMessage, ServerResponse>();

/** Registers the response to a request, so a body refused half-read can close the connection. */
export function trackResponse(req: IncomingMessage, res: ServerResponse): void {
  responses.set(req, res);
}

/** Sets the process-wide cap on body bytes held by requests being read (SVC_BODY_BUDGET_BYTES). */
export function setBodyBudget(bytes: number): void {
  budget = new ByteBudget(bytes);
}

export async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > MAX_BODY) {
    throw new ServiceError('payload_too_large', `request body is ${declared} bytes; the limit is ${MAX_BODY}`);
  }
  const text = await readText(req);
  if (!text) return {};
  const type = String(req.headers['content-type'] ?? 'application/json');
  if (!/^application\/([\w.+-]*\+)?json\b/i.test(type)) {
    throw new ServiceError('invalid_request', 'content-type must be application/json');
  }
  // before JSON.parse: a deeper value would overflow JSON.stringify later
  if (exceedsJsonDepth(text)) {
    throw new ServiceError('invalid_request', `request body nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  let v: unknown;
  try { v = JSON.parse(text); } catch { throw new ServiceError('invalid_request', 'request body is not valid JSON'); }
  if (!v || typeof v !== 'object' || Array.isArray(v)) {
    throw new ServiceError('invalid_request', 'request body must be a JSON object');
  }
  return v as Record<string, unknown>;
}

/**
 * The body as trimmed text; every byte held is taken from the budget first and returned after.
 * Node's parser ends the body at Content-Length: bytes past it are parsed as the next request.
 */
async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  const held = budget; // release to the budget taken from, even if it is replaced meanwhile
  try {
    for await (const chunk of req) {
      const b = chunk as Buffer;
      if (size + b.length > MAX_BODY) {
        throw new ServiceError('payload_too_large', `request body exceeds ${MAX_BODY} bytes`);
      }
      if (!held.tryTake(b.length)) {
        throw new ServiceError('busy', 'the gateway is reading too many request bodies at once; retry later');
      }
      size += b.length;
      chunks.push(b);
    }
    return Buffer.concat(chunks, size).toString('utf8').trim();
  } catch (e) {
    // Node would read the rest of the body to reuse the connection: close it after the answer instead
    if (!req.complete) responses.get(req)?.setHeader('connection', 'close');
    if (e instanceof ServiceError) throw e;
    // the client closed or was timed out mid-body: nobody reads this answer, and it is not our fault
    const message = `request body ended after ${size} bytes (connection closed)`;
    throw new ServiceError('invalid_request', message, undefined, { cause: e });
  } finally {
    held.release(size);
  }
}
