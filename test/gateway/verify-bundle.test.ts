// The /verify page's script is built on first use by esbuild (src/gateway/verify-bundle.ts). A node
// that cannot build it (esbuild missing or broken in its install) answers the page and the script 503
// service_unavailable in the ApiError shape, never a 500, says nothing of its paths, and serves
// everything else as usual; a failed build is not remembered: once esbuild is there, the next request
// builds it.
import test from 'ava';
import { fileURLToPath } from 'node:url';
import { sharedSvcd } from '../support/start-svcd.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const hook = fileURLToPath(new URL('../support/hooks/no-esbuild.mjs', import.meta.url));
const withHook = `${process.env.NODE_OPTIONS ?? ''} --import=${hook}`.trim();
const missing = sharedSvcd(test, { NODE_OPTIONS: withHook });
// esbuild missing for the first build only
const repaired = sharedSvcd(test, { NODE_OPTIONS: withHook, HIDE_ESBUILD_TIMES: '1' });

async function unavailable(t: import('ava').ExecutionContext, r: Response): Promise<void> {
  t.is(r.status, 503);
  t.regex(r.headers.get('content-type') ?? '', /^application\/json/);
  const body = await r.json() as { ok: boolean; request_id: string; error: { code: string; message: string } };
  t.is(body.ok, false);
  t.is(body.error.code, 'service_unavailable');
  t.is(body.error.message, 'the verifier page\'s script could not be built on this node');
  t.is(body.request_id, r.headers.get('x-request-id') ?? '');
  t.false(JSON.stringify(body).includes(ROOT), 'no host path');
}

for (const path of ['/assets/verify.js', '/assets/verify.js?v=0123456789abcdef0123456789abcdef', '/verify']) {
  test.serial(`without esbuild: GET ${path} is 503 service_unavailable`, async (t) => {
    await unavailable(t, await fetch(`${missing.ready.http}${path}`));
    await unavailable(t, await fetch(`${missing.ready.http}${path}`));
  });
}

test.serial('without esbuild: the rest of the site and the API answer as usual', async (t) => {
  for (const path of ['/', '/api/v1/health', '/openapi.json', '/llms.txt', '/assets/redoc.standalone.js']) {
    const r = await fetch(`${missing.ready.http}${path}`);
    t.is(r.status, 200, path);
  }
});

test.serial('a failed build is tried again: 503 while esbuild is missing, the script once it is there', async (t) => {
  await unavailable(t, await fetch(`${repaired.ready.http}/assets/verify.js`));
  const page = await fetch(`${repaired.ready.http}/verify`);
  t.is(page.status, 200);
  const src = /<script[^>]+src="(\/assets\/verify\.js\?v=[0-9a-f]{32})"/.exec(await page.text())?.[1];
  t.truthy(src, 'the page names its script by hash');
  const script = await fetch(`${repaired.ready.http}${src}`);
  t.is(script.status, 200);
  t.regex(script.headers.get('content-type') ?? '', /^text\/javascript/);
  t.is(script.headers.get('cache-control'), 'public, max-age=31536000, immutable');
});
