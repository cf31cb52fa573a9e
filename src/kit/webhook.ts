// Checking a webhook svc sent (docs/settlement.md "Webhooks"): its Svc-Signature header is
// `t=<Unix seconds>,v1=<hex HMAC-SHA256 over "t.body">` with the endpoint's secret, Stripe's scheme. A
// receiver checks it over the raw body as received (before parsing it), and the timestamp against its own
// clock, so a captured request cannot be sent again later. WebCrypto's HMAC, in every runtime the kit runs in.
import { Checks, why, type Verdict } from './verdict.ts';

export interface WebhookOptions {
  /** the receiver's clock, ms since the epoch (default: Date.now()) */
  now?: number;
  /** how far the signature's time may be from `now`, seconds (default 300) */
  toleranceSec?: number;
}

const encoder = new TextEncoder();

function parts(header: string): { t: number; v1: string[] } | null {
  let t = NaN;
  const v1: string[] = [];
  for (const item of header.split(',')) {
    const [k, v] = item.trim().split('=', 2);
    if (k === 't' && v && /^\d{1,12}$/.test(v)) t = Number(v);
    if (k === 'v1' && v && /^[0-9a-f]{64}$/.test(v)) v1.push(v);
  }
  return Number.isSafeInteger(t) && v1.length ? { t, v1 } : null;
}

async function hmacHex(secret: string, text: string): Promise<string> {
  const subtle = globalThis.crypto.subtle;
  const key = await subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await subtle.sign('HMAC', key, encoder.encode(text)));
  return Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Compares two hex strings of one length in time that does not depend on where they differ. */
function sameHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Whether `body` (the raw text received) came from the node holding `secret`, signed within the tolerance of
 * `now`: a verdict (reasons `malformed`, `stale_signature`, `bad_signature`), never a throw.
 */
export async function verifyWebhook(
  header: unknown, body: unknown, secret: unknown, opts: WebhookOptions = {},
): Promise<Verdict> {
  const c = new Checks();
  try {
    const ok = typeof header === 'string' && typeof body === 'string' && typeof secret === 'string' && secret !== '';
    if (!c.add('malformed', 'header, body and secret are text', ok)) return c.verdict();
    const p = parts(header as string);
    if (!c.add('malformed', 'Svc-Signature has t= and v1=', p !== null)) return c.verdict();
    const now = typeof opts.now === 'number' ? opts.now : Date.now();
    const tolerance = typeof opts.toleranceSec === 'number' ? opts.toleranceSec : 300;
    const skew = Math.abs(now / 1000 - p!.t);
    c.add('stale_signature', `signed within ${tolerance} s of now`, skew <= tolerance, `${Math.round(skew)} s`);
    const want = await hmacHex(secret as string, `${p!.t}.${body as string}`);
    c.add('bad_signature', 'HMAC-SHA256 of "t.body" matches v1', p!.v1.some((v) => sameHex(v, want)));
  } catch (e) {
    c.add('malformed', 'the webhook can be read', false, why(e));
  }
  return c.verdict();
}
