// svc/1 request and reply frames (DESIGN.md §2) and their parsing. A request:
//   {"v":"svc/1","id":7,"cmd":"QUOTE","args":{...},"auth":{"machine_id":"m1","token":"..."}}
// A reply: {"id":7,"ok":true,"result":{...}} or {"id":7,"ok":false,"error":{"code","message"}}.
import { ServiceError, type ErrorCode } from '../errors.ts';
import { MAX_JSON_DEPTH, exceedsJsonDepth, pruneJsonBelow } from './json-depth.ts';
import { commandSpec, type CommandSpec } from './registry.ts';
import { VERSIONS } from './versions.ts';
import { MAX_PAYMENT_CHARS } from './x402.ts';

export const PROTOCOL = VERSIONS.coreProtocol;
export const ALPN = VERSIONS.coreProtocol;

export type FrameId = number | string;

export interface RequestFrame {
  v: typeof PROTOCOL;
  id: FrameId;
  cmd: string;
  args: Record<string, unknown>;
  /** payment: an x402 payment (the PAYMENT-SIGNATURE header's text, docs/x402.md) */
  auth?: { machine_id?: string; token?: string; payment?: string };
  /** when the sender stops waiting (Unix ms): a frame read after it is refused unrun (`cancelled`) */
  deadline?: number;
  /** the client a trusted front end speaks for (`{"client": address}`); only the backend listener honours it */
  via?: { client: string };
}

export type ReplyFrame =
  | { id: FrameId | null; ok: true; result: Record<string, unknown> }
  | { id: FrameId | null; ok: false; error: { code: ErrorCode; message: string; details?: Record<string, unknown> } };

export type Parsed =
  | { ok: true; req: RequestFrame; spec: CommandSpec }
  | { ok: false; id: FrameId | null; error: ServiceError };

const isId = (v: unknown): v is FrameId =>
  (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0)
  || (typeof v === 'string' && v.length > 0 && v.length <= 64);

/** Parses one line into a request frame, or an error that names what is wrong with it. */
export function parseRequest(line: string): Parsed {
  // before JSON.parse: a value nested past the limit would overflow the recursive walks after it (canonical JSON)
  if (exceedsJsonDepth(line)) {
    const error = new ServiceError('invalid_request', `the frame nests deeper than ${MAX_JSON_DEPTH} levels`);
    return { ok: false, id: frameIdOf(pruneJsonBelow(line, 1)), error };
  }
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return { ok: false, id: null, error: new ServiceError('bad_frame', 'line is not valid JSON') };
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) {
    return { ok: false, id: null, error: new ServiceError('bad_frame', 'frame must be a JSON object') };
  }
  const f = v as Record<string, unknown>;
  const id = isId(f.id) ? f.id : null;
  if (id === null) {
    const error = new ServiceError('bad_frame', 'id must be a non-negative integer or a string of 1..64 characters');
    return { ok: false, id: null, error };
  }
  if (f.v !== PROTOCOL) {
    return { ok: false, id, error: new ServiceError('unsupported_version', `v must be "${PROTOCOL}"`) };
  }
  if (typeof f.cmd !== 'string') return { ok: false, id, error: new ServiceError('bad_frame', 'cmd must be a string') };
  const spec = commandSpec(f.cmd);
  if (!spec) {
    return { ok: false, id, error: new ServiceError('unknown_command', `unknown command ${f.cmd.slice(0, 64)}`) };
  }
  const args = f.args === undefined ? {} : f.args;
  if (!args || typeof args !== 'object' || Array.isArray(args)) {
    return { ok: false, id, error: new ServiceError('bad_frame', 'args must be an object') };
  }
  let auth: RequestFrame['auth'];
  if (f.auth !== undefined) {
    const a = f.auth as Record<string, unknown> | null;
    if (!a || typeof a !== 'object' || Array.isArray(a)
      || (a.machine_id !== undefined && typeof a.machine_id !== 'string')
      || (a.token !== undefined && typeof a.token !== 'string')
      || (a.payment !== undefined && (typeof a.payment !== 'string' || a.payment.length > MAX_PAYMENT_CHARS))) {
      const error = new ServiceError('bad_frame',
        `auth must be {machine_id?: string, token?: string, payment?: string of at most ${MAX_PAYMENT_CHARS}}`);
      return { ok: false, id, error };
    }
    auth = { machine_id: a.machine_id as string | undefined, token: a.token as string | undefined };
    if (a.payment !== undefined) auth.payment = a.payment as string;
  }
  let via: RequestFrame['via'];
  if (f.via !== undefined) {
    const c = (f.via as { client?: unknown } | null)?.client;
    if (typeof c !== 'string' || c.length < 1 || c.length > 64) {
      const error = new ServiceError('bad_frame', 'via must be {client: string of 1..64 characters}');
      return { ok: false, id, error };
    }
    via = { client: c };
  }
  const req: RequestFrame = { v: PROTOCOL, id, cmd: f.cmd, args: args as Record<string, unknown>, auth };
  if (via) req.via = via;
  if (f.deadline !== undefined) {
    if (typeof f.deadline !== 'number' || !Number.isSafeInteger(f.deadline) || f.deadline < 0) {
      return { ok: false, id, error: new ServiceError('bad_frame', 'deadline must be a time in Unix milliseconds') };
    }
    req.deadline = f.deadline;
  }
  return { ok: true, spec, req };
}

/** The id of a frame, when the text is a JSON object with a valid one (used to answer a frame we refuse). */
function frameIdOf(text: string): FrameId | null {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && isId((v as { id?: unknown }).id) ? (v as { id: FrameId }).id : null;
  } catch {
    return null;
  }
}
