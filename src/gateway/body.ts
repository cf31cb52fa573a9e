// Reads a JSON request body: at most 1 MiB, a JSON object (or empty: {}) nested ≤ MAX_JSON_DEPTH.
// Bytes being read count against one process-wide budget , of which one client
// address holds at most its share: past either, 503 busy at once; a body refused half-read closes its
// connection after the answer instead of being read on.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ServiceError } from '../errors.ts';
import { AddressedBudget, defaultShare, type BudgetShare } from '../protocol/budgets.ts';
import { MAX_JSON_DEPTH, exceedsJsonDepth } from '../protocol/json-depth.ts';

export const MAX_BODY = 1 << 20;
/** the charset parameter of a Content-Type, quoted or not (RFC 9110 §8.3.1) */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)"?/i;
const DEFAULT_BODY_BUDGET = 16 << 20;

let budget = new AddressedBudget(DEFAULT_BODY_BUDGET, defaultShare(DEFAULT_BODY_BUDGET));
/**
 * Each request's response, kept on the request itself: a WeakMap entry per request costs the garbage collector
 * about 8 µs of CPU per request (an ephemeron to trace), a property next to nothing (measured: docs/performance.md).
 */
const RESPONSE = Symbol('svc.response');
type Tracked = IncomingMessage & { [RESPONSE]?: ServerResponse };

/** Registers the response to a request, so a body refused half-read can close the connection. */
export function trackResponse(req: IncomingMessage, res: ServerResponse): void {
  (req as Tracked)[RESPONSE] = res;
}

/**
 * Sets the process-wide cap on body bytes held by requests being read (SVC_BODY_BUDGET_BYTES) and what
 * one client address may hold of it (SVC_BODY_BUDGET_PER_ADDRESS_BYTES).
 */
export function setBodyBudget(bytes: number, perAddress: number): void {
  budget = new AddressedBudget(bytes, perAddress);
}

/** `client`: the client's address (behind trusted proxies, the one they saw), whose share is charged. */
export async function readJsonBody(req: IncomingMessage, client: string): Promise<Record<string, unknown>> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > MAX_BODY) {
    throw new ServiceError('payload_too_large', `request body is ${declared} bytes; the limit is ${MAX_BODY}`);
  }
  // the bytes are read as they are: a compressed body or one in another charset would be misread
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    const msg = `content-encoding ${encoding} is not accepted: send the JSON uncompressed`;
    throw new ServiceError('invalid_request', msg);
  }
  const charset = CHARSET.exec(String(req.headers['content-type'] ?? ''))?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    const msg = `charset ${charset} is not accepted: request bodies are UTF-8 JSON (RFC 8259 §8.1)`;
    throw new ServiceError('invalid_request', msg);
  }
  const text = await readText(req, client);
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

/** A body being read: its chunks, the bytes held from the budget, and how the read ends. */
interface Reading {
  chunks: Buffer[];
  size: number;
  held: BudgetShare;
  resolve: (text: string) => void;
  reject: (e: unknown) => void;
}
const READING = Symbol('svc.reading');
type Req = IncomingMessage & { [READING]?: Reading };

/**
 * The body as trimmed text; every byte held is taken from the budget first and returned after.
 * Node's parser ends the body at Content-Length: bytes past it are parsed as the next request.
 * Read with 'data'/'end' listeners rather than an async iterator: one promise per body, not one per
 * chunk (a hot path: every POST); the listeners are module functions (no closures made per request)
 * that find the read's state on the request. On a refusal the rest of the body is left unread: the
 * answer goes out with Connection: close.
 */
function readText(req: IncomingMessage, client: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    // release to the budget taken from, even if it is replaced meanwhile
    (req as Req)[READING] = { chunks: [], size: 0, held: budget.share(client), resolve, reject };
    if (req.readableEnded) return onEnd.call(req);
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/** Stops listening and returns the held bytes to the budget; the read's state, if still going. */
function settle(req: Req): Reading | undefined {
  const r = req[READING];
  if (!r) return undefined;
  req[READING] = undefined;
  req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
  r.held.release(r.size);
  return r;
}

function fail(req: Req, e: ServiceError): void {
  const r = settle(req);
  if (!r) return;
  // Node would read the rest of the body to reuse the connection: close it after the answer instead
  if (!req.complete) {
    (req as Tracked)[RESPONSE]?.setHeader('connection', 'close');
    req.pause();
  }
  r.reject(e);
}

function onData(this: Req, b: Buffer): void {
  const r = this[READING]!;
  if (r.size + b.length > MAX_BODY) {
    return fail(this, new ServiceError('payload_too_large', `request body exceeds ${MAX_BODY} bytes`));
  }
  if (!r.held.tryTake(b.length)) {
    const message = r.held.refused === 'address'
      ? `this client address has its share of request bodies being read (${r.held.perAddress} bytes); retry later`
      : 'the gateway is reading too many request bodies at once; retry later';
    return fail(this, new ServiceError('busy', message));
  }
  r.size += b.length;
  r.chunks.push(b);
}

function onEnd(this: Req): void {
  const r = settle(this);
  if (!r) return;
  const whole = r.chunks.length === 1 ? r.chunks[0]! : Buffer.concat(r.chunks, r.size);
  r.resolve(whole.toString('utf8').trim());
}

// the client closed or was timed out mid-body: nobody reads this answer, and it is not our fault
function onError(this: Req, e?: unknown): void {
  const message = `request body ended after ${this[READING]?.size ?? 0} bytes (connection closed)`;
  fail(this, new ServiceError('invalid_request', message, undefined, { cause: e }));
}

function onClose(this: Req): void {
  if (!this.complete) onError.call(this, new Error('the connection closed mid-body'));
}
