// Bad input never becomes a 500: random JSON bodies, headers and paths against every route of the
// real gateway + core get an ApiError with a 4xx status (or a 200 when the body happens to be valid).
import test from 'ava';
import fc from 'fast-check';
import { Svcd } from '../support/svcd.ts';
import { COMMANDS } from '../../src/protocol/registry.ts';

test('random bodies on every POST route: never a 5xx, always the ApiError shape on failure', async (t) => {
  const s = await Svcd.start({
    SVC_RATE_PUBLIC_LOW: '100000000/60', SVC_RATE_PAID_EXECUTION: '100000000/60',
  }, ['start']);
  t.teardown(async () => {
    const r = await s.stopAndCheckLedger();
    s.cleanup();
    if (!r.ok) throw new Error(r.problems.join('; '));
  });
  const routes = [
    ...COMMANDS.filter((c) => c.http?.method === 'POST')
      .map((c) => c.http!.path.replace('{service}', 'get-pulse').replace('{quote_id}', 'q_fuzz')),
    '/api/v1/sandbox/quotes/get-pulse', '/api/v1/sandbox/quotes/sbx_q_x/accept', '/api/v1/sandbox/executions/get-pulse',
    '/api/v1/sandbox/receipts/verify', '/mcp',
  ];
  const fields = fc.record({
    machine_id: fc.oneof(fc.string({ maxLength: 140 }), fc.integer()),
    quote_id: fc.string({ maxLength: 20 }),
    bits: fc.oneof(fc.integer(), fc.double(), fc.string()),
    units: fc.integer(),
    network: fc.string(),
    asset: fc.string(),
    plain_hex: fc.string({ maxLength: 40 }),
  }, { requiredKeys: [] });
  const body = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
    fields.map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 200 }),
  );
  const contentType = fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded');
  let seen = 0;
  await fc.assert(fc.asyncProperty(
    fc.constantFrom(...routes), body, contentType, fc.option(fc.string({ maxLength: 60 })),
    async (route, text, type, token) => {
      const headers: Record<string, string> = { 'content-type': type, accept: 'application/json, text/event-stream' };
      if (token && /^[\x21-\x7e]+$/.test(token)) headers.authorization = `Bearer ${token}`;
      const r = await fetch(s.ready.http + route, { method: 'POST', headers, body: text });
      const raw = await r.text();
      seen++;
      if (r.status >= 500) throw new Error(`${route} ${text.slice(0, 80)} → ${r.status} ${raw.slice(0, 200)}`);
      if (route !== '/mcp' && r.status >= 400) {
        const j = JSON.parse(raw);
        if (j.ok !== false || typeof j.error?.code !== 'string' || typeof j.request_id !== 'string') {
          throw new Error(`bad ApiError shape: ${raw.slice(0, 200)}`);
        }
      }
      return true;
    },
  ), { numRuns: 600 });
  t.true(seen >= 600);
});
