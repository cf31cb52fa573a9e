// CORS as a page on another origin meets it, in Chromium: the public routes' response headers a script
// needs (the request id, a pulse's ETag, an idempotent replay's mark, RateLimit, RateLimit-Policy and a
// 429's Retry-After) are readable, exactly as svcd sends them; what a browser hides it hides.
import test from 'ava';
import { EXPOSED_HEADERS } from '../../src/gateway/embed-routes.ts';
import { CHROMIUM_NEED, runPage } from '../support/browser.ts';
import { testNeeding } from '../support/needs.ts';
import { startSvcd } from '../support/start-svcd.ts';

const QUOTE = '/api/v1/quotes/get-pulse';

/** The page: a pulse, then quotes (one key twice: a replay) until one is refused; each response's readable headers. */
const page = (base: string) => `<!doctype html><meta charset="utf-8"><p id="status">running</p><script type="module">
const seen = (r) => ({ status: r.status, headers: Object.fromEntries(r.headers) });
const out = { pulse: seen(await fetch('${base}/api/v1/pulses/0')), quotes: [] };
for (let i = 0; i < 12; i++) {
  const key = i < 2 ? 'same-key' : 'key-' + i;
  const r = await fetch('${base}${QUOTE}', { method: 'POST', headers: { 'content-type': 'application/json',
    'idempotency-key': key }, body: JSON.stringify({ machine_id: 'cors-page', bits: 256 }) });
  out.quotes.push(seen(r));
  if (r.status === 429) break;
}
document.getElementById('status').textContent = 'done';
window.result = out;
</script>`;

testNeeding(test, 'a page on another origin reads every header the public routes send for it', CHROMIUM_NEED,
  async (t) => {
    const s = await startSvcd(t, { SVC_RATE_PUBLIC_LOW: '5/60' });
    const base = s.ready.http!;
    // what svcd sends, seen from Node (no CORS filter): the names a page must be able to read
    const direct = await fetch(`${base}${QUOTE}`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: 'http://elsewhere.example' },
      body: JSON.stringify({ machine_id: 'cors-node', bits: 256 }),
    });
    const wanted = EXPOSED_HEADERS.map((h) => h.toLowerCase());
    const sent: string[] = [];
    direct.headers.forEach((_, h) => { if (wanted.includes(h)) sent.push(h); });
    t.deepEqual(sent.sort(), ['ratelimit', 'ratelimit-policy', 'x-request-id']);
    t.is(direct.headers.get('access-control-expose-headers'), EXPOSED_HEADERS.join(', '));

    const { value } = await runPage((p) => (p === '/cors.html'
      ? { type: 'text/html', body: Buffer.from(page(base)) } : null), '/cors.html', 'result');
    const r = value as { pulse: Seen; quotes: Seen[] };
    t.regex(r.pulse.headers.etag ?? '', /^W\/"[0-9a-f]{64}"$/, 'a pulse\'s ETag');
    t.truthy(r.pulse.headers['x-request-id']);
    const [first, replay] = r.quotes;
    for (const q of r.quotes.slice(0, -1)) {
      t.is(q.status, 200);
      t.regex(q.headers.ratelimit ?? '', /^"public_low";r=\d+;t=\d+$/);
      t.is(q.headers['ratelimit-policy'], '"public_low";q=5;w=60');
      t.regex(q.headers['x-request-id'] ?? '', /\S/);
    }
    t.is(first!.headers['idempotent-replayed'], undefined);
    t.is(replay!.headers['idempotent-replayed'], 'true', 'the replay\'s mark');
    const refused = r.quotes.at(-1)!;
    t.is(refused.status, 429);
    t.regex(refused.headers['retry-after'] ?? '', /^\d+$/, 'a 429\'s Retry-After');
    t.regex(refused.headers.ratelimit ?? '', /;r=0;/);
    t.is(refused.headers['set-cookie'], undefined);
  });

interface Seen { status: number; headers: Record<string, string> }

test('the exposed list names what the routes send, none of an older draft\'s RateLimit-Limit/-Remaining/-Reset',
  (t) => {
  t.deepEqual(EXPOSED_HEADERS, ['X-Request-Id', 'ETag', 'Idempotent-Replayed', 'RateLimit', 'RateLimit-Policy',
    'Retry-After']);
});
