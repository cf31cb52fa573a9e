// HTTP for embedders on a real svcd: pulses by index and latest (cached, CORS), /kernels.wasm as
// application/wasm with the manifest's SHA-256, preflights answered 204 on public routes, and no
// CORS header ever on an authenticated route — with or without a machine token.
import test from 'ava';
import { createHash } from 'node:crypto';
import { startSvcd } from '../support/start-svcd.ts';
import { fundMachine } from '../support/svcd.ts';
import { verifyPulse } from '../../src/kit/verify-api.ts';

test('pulses, kernels.wasm and CORS as an embedder in a browser meets them', async (t) => {
  const s = await startSvcd(t);
  const base = s.ready.http!;
  const latest = await fetch(`${base}/api/v1/pulses/latest`);
  t.is(latest.status, 200);
  t.regex(latest.headers.get('content-type') ?? '', /^application\/json/);
  t.is(latest.headers.get('access-control-allow-origin'), '*');
  t.is(latest.headers.get('cache-control'), 'public, max-age=5');
  const body = await latest.json() as any;
  t.true(body.ok);
  t.true((await verifyPulse(body)).valid, 'what the route returns is what verifyPulse takes');

  const zero = await fetch(`${base}/api/v1/pulses/0`);
  t.is(zero.status, 200);
  t.is(zero.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  const etag = zero.headers.get('etag')!;
  t.regex(etag, /^W\/"[0-9a-f]{64}"$/);
  t.is((await zero.json() as any).pulse.index, 0);
  t.is((await fetch(`${base}/api/v1/pulses/0`, { headers: { 'if-none-match': etag } })).status, 304);
  t.is((await fetch(`${base}/api/v1/pulses/999999`)).status, 404);
  const bad = await fetch(`${base}/api/v1/pulses/-1`);
  t.is(bad.status, 400);
  t.is((await bad.json() as any).error.code, 'invalid_request');
  // the registry's schema decides: a safe integer in decimal, nothing else (16 digits can be too many)
  for (const index of ['9007199254740992', '99999999999999999', '01', '1e3', '0x1', '1.0']) {
    const r = await fetch(`${base}/api/v1/pulses/${index}`);
    t.deepEqual([r.status, (await r.json() as any).error.code], [400, 'invalid_request'], index);
  }
  t.is((await fetch(`${base}/api/v1/pulses/${Number.MAX_SAFE_INTEGER}`)).status, 404);

  const pre = await fetch(`${base}/api/v1/pulses/latest`, {
    method: 'OPTIONS', headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET' },
  });
  t.is(pre.status, 204);
  t.is(pre.headers.get('access-control-allow-origin'), '*');
  t.regex(pre.headers.get('access-control-allow-methods') ?? '', /GET/);
  t.notRegex(pre.headers.get('access-control-allow-headers') ?? '', /authorization/i);

  const manifest = await (await fetch(`${base}/.well-known/svc/svc_public_manifest.json`)).json() as any;
  const wasm = await fetch(`${base}/kernels.wasm`);
  t.is(wasm.status, 200);
  t.is(wasm.headers.get('content-type'), 'application/wasm');
  t.is(wasm.headers.get('access-control-allow-origin'), '*');
  const bytes = Buffer.from(await wasm.arrayBuffer());
  t.is(createHash('sha256').update(bytes).digest('hex'), manifest.kernels.sha256);
  t.is(wasm.headers.get('etag'), `"${manifest.kernels.sha256}"`);
  t.is((await fetch(`${base}/kernels.wasm`, { headers: { 'if-none-match': `"${manifest.kernels.sha256}"` } })).status,
    304);
  t.is(manifest.kernels.url, `${base}/kernels.wasm`);
  t.true(WebAssembly.validate(bytes));

  // authenticated routes: never CORS, with a valid machine token or without one, preflight or not
  const token = await fundMachine(s, 'cors-m', 1);
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json', origin: 'https://x.example' };
  const bal = await fetch(`${base}/api/v1/balance`, {
    method: 'POST', headers: auth, body: JSON.stringify({ machine_id: 'cors-m' }),
  });
  t.is(bal.status, 200);
  t.is(bal.headers.get('access-control-allow-origin'), null);
  const inv = await fetch(`${base}/api/v1/invoices/inv_nope?machine_id=cors-m`, { headers: auth });
  t.is(inv.headers.get('access-control-allow-origin'), null);
  const exec = await fetch(`${base}/api/v1/executions/get-pulse`, {
    method: 'OPTIONS', headers: { origin: 'https://x.example', 'access-control-request-method': 'POST' },
  });
  t.not(exec.status, 204);
  t.is(exec.headers.get('access-control-allow-origin'), null);
  // public ones do: the free receipt verification and the index
  t.is((await fetch(`${base}/api/v1`)).headers.get('access-control-allow-origin'), '*');
});
