// The HTML pages in a real browser (Debian chromium via playwright-core), every page of the route
// table at a phone width (390 px) and a desktop width (1280 px): it renders its heading, has a
// page-specific description and a viewport meta, never scrolls sideways, raises no console error
// (a Content-Security-Policy violation is one), asks nothing of another origin, shows no
// snake_case identifier outside code, and every internal link on it answers 200. The API reference
// page renders the operations of openapi.json from the Redoc bundle the gateway serves itself.
import test from 'ava';
import { gunzipSync } from 'node:zlib';
import { CHROMIUM_NEED, launchChromium } from '../support/browser.ts';
import { testNeeding } from '../support/needs.ts';
import { PUBLIC_ROUTES, publicRoute } from '../../src/discovery/routes.ts';
import { sharedSvcd } from '../support/start-svcd.ts';

// every HTML page the gateway serves, from the one route table (a new page is tested without a line here)
const PAGES = PUBLIC_ROUTES.filter((r) => r.method === 'GET' && r.type.startsWith('text/html')).map((r) => r.path);
const WIDTHS = [390, 1280];
const REFERENCE = publicRoute('pageReference').path;
const BUNDLE = publicRoute('assetRedoc').path;

const s = sharedSvcd(test, { SVC_RATE_PUBLIC_LOW: '10000/60' });
let base: string;
test.before(() => { base = s.ready.http!; });

test('the route table has the contract\'s pages and the API reference', (t) => {
  for (const p of ['/', '/docs', '/protocol', '/for-agents', '/pricing', '/status', '/trust', REFERENCE]) {
    t.true(PAGES.includes(p), p);
  }
});

test('the Redoc bundle is served from the package: JavaScript, cached, revalidated, gzip when asked', async (t) => {
  const r = await fetch(base + BUNDLE, { headers: { 'accept-encoding': 'identity' } });
  const body = Buffer.from(await r.arrayBuffer());
  t.is(r.status, 200);
  t.is(r.headers.get('content-type'), 'text/javascript; charset=utf-8');
  t.regex(r.headers.get('cache-control') ?? '', /^public, max-age=\d{5,}$/);
  t.is(r.headers.get('x-content-type-options'), 'nosniff');
  t.true(body.length > 500_000, `${body.length} bytes`);
  t.true(body.includes('Redoc'));
  t.false(body.includes('https://cdn.redoc.ly/'), 'the bundle asks no CDN for its logo');
  const etag = r.headers.get('etag')!;
  const again = await fetch(base + BUNDLE, { headers: { 'accept-encoding': 'identity', 'if-none-match': etag } });
  t.is(again.status, 304);
  // undici's fetch would decode gzip itself: read the raw bytes with node:http
  const { request } = await import('node:http');
  const gz = await new Promise<{ headers: Record<string, unknown>; bytes: Buffer }>((resolve, reject) => {
    request(base + BUNDLE, { headers: { 'accept-encoding': 'gzip, br' } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ headers: res.headers, bytes: Buffer.concat(parts) }));
    }).on('error', reject).end();
  });
  t.is(gz.headers['content-encoding'], 'gzip');
  t.regex(String(gz.headers.vary), /accept-encoding/i);
  t.true(gz.bytes.length < body.length / 2);
  t.true(gunzipSync(gz.bytes).equals(body));
  t.not(gz.headers.etag, etag, 'each encoding has its own ETag');
});

const chromium = CHROMIUM_NEED;
testNeeding(test, 'every page at 390 and 1280 px: no sideways scroll, a description, no console error, '
  + 'same origin only', chromium, async (t) => {
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const origin = new URL(base).origin;
  const links = new Set<string>();
  const descriptions = new Map<string, string>();
  for (const width of WIDTHS) {
    const context = await browser.newContext({ viewport: { width, height: 844 } });
    const offOrigin: string[] = [];
    // nothing may leave for another origin (no CDN, no fonts, no telemetry): record and refuse it
    await context.route((u) => u.origin !== origin, (route) => {
      offOrigin.push(route.request().url());
      return route.abort();
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`${page.url()}: ${m.text()}`); });
    page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
    for (const p of PAGES) {
      const where = `${p} at ${width} px`;
      const res = await page.goto(base + p);
      t.is(res?.status(), 200, where);
      t.truthy(res?.headers()['content-security-policy'], `${where}: served with a CSP`);
      if (p === REFERENCE) {
        // Redoc fetches /openapi.json and renders each operation with its method and path
        await page.waitForSelector('.redoc-wrap .api-content h2', { timeout: 60_000 });
      }
      t.regex(await page.title(), / — svc$/, where);
      t.true(((await page.textContent('h1')) ?? '').length > 3, `${where}: has a heading`);
      const facts = await page.evaluate(() => {
        // (no named helpers in here: tsx would wrap them in a __name() the page does not have)
        const el = document.documentElement;
        // the elements that stick out, to say what overflows when something does
        const wide = Array.from(document.querySelectorAll('body *'))
          .filter((e) => e.getBoundingClientRect().right > el.clientWidth + 0.5)
          .slice(0, 3).map((e) => `${e.tagName.toLowerCase()}: ${(e.textContent ?? '').slice(0, 40)}`);
        // visible prose outside code, links and the reference renderer
        const walker = document.createTreeWalker(document.querySelector('main')!, NodeFilter.SHOW_TEXT);
        const prose: string[] = [];
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          if (!n.parentElement!.closest('code, pre, a, redoc, .redoc-wrap, script, style')) prose.push(n.textContent!);
        }
        return {
          scrollWidth: el.scrollWidth, clientWidth: el.clientWidth, wide,
          description: document.querySelector('meta[name="description"]')?.getAttribute('content') ?? '',
          viewport: document.querySelector('meta[name="viewport"]')?.getAttribute('content') ?? '',
          prose: prose.join(' '),
        };
      });
      t.true(facts.scrollWidth <= facts.clientWidth,
        `${where}: scrollWidth ${facts.scrollWidth} > ${facts.clientWidth} (${facts.wide.join(' | ')})`);
      t.regex(facts.viewport, /width=device-width/, `${where}: viewport meta`);
      t.true(facts.description.length >= 60 && facts.description.length <= 200,
        `${where}: description of ${facts.description.length} characters`);
      descriptions.set(p, facts.description);
      t.deepEqual(facts.prose.match(/\b[a-z]+_[a-z_]+\b/g) ?? [], [], `${where}: machine identifiers outside code`);
      const hrefs = await page.$$eval('main a[href^="/"], header a[href^="/"], footer a[href^="/"]',
        (as) => as.map((a) => a.getAttribute('href')!));
      for (const href of hrefs) links.add(href.split('#')[0]!);
    }
    t.deepEqual(errors, [], `console errors at ${width} px`);
    t.deepEqual(offOrigin, [], `requests to other origins at ${width} px`);
    await context.close();
  }
  t.is(new Set(descriptions.values()).size, PAGES.length, 'each page has its own description');
  for (const href of links) t.is((await fetch(base + href)).status, 200, `link ${href}`);
  t.true(links.size >= 15);
});

testNeeding(test, 'the API reference renders the operations of openapi.json, offline', chromium, async (t) => {
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  const csp = (await page.goto(base + REFERENCE))?.headers()['content-security-policy'] ?? '';
  await page.waitForSelector('.redoc-wrap .api-content h2', { timeout: 60_000 });
  const text = (await page.textContent('.redoc-wrap')) ?? '';
  const spec = await (await fetch(`${base}/openapi.json`)).json() as { paths: Record<string, object> };
  for (const path of ['/api/v1/executions/get-pulse', '/api/v1/invoices', '/api/v1/receipts/verify', '/mcp']) {
    t.truthy(spec.paths[path], path);
    t.true(text.includes(path), `${path} is rendered`);
  }
  t.true(text.includes('svc public gateway'), 'the document title');
  // what the page loaded: itself, the bundle and the document, all from svcd (the worker is a blob:)
  const loaded = requests.filter((u) => !u.startsWith('blob:') && !u.startsWith('data:'));
  t.deepEqual(loaded.filter((u) => new URL(u).origin !== new URL(base).origin), []);
  t.true(loaded.some((u) => u.endsWith(BUNDLE)) && loaded.some((u) => u.endsWith('/openapi.json')));
  // the reference page is the only one allowed a script, and only its own origin's
  t.regex(csp, /script-src 'self'(;|$)/);
  const other = (await fetch(`${base}/docs`)).headers.get('content-security-policy') ?? '';
  t.regex(other, /default-src 'none'/);
  t.notRegex(other, /script-src/);
});

testNeeding(test, 'the status page is a table of the status document\'s facts', chromium, async (t) => {
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  await page.goto(`${base}/status`);
  const rows = await page.$$eval('main table tr', (trs) => trs.map((tr) =>
    Array.from(tr.querySelectorAll('th, td')).map((c) => (c.textContent ?? '').trim())));
  const status = await (await fetch(`${base}/.well-known/svc/status.json`)).json() as {
    edge: { node_id: string; pulse: { chain_id: string; latest_index: number }; pool: { threads: number } };
  };
  const cell = (label: string) => rows.find((r) => r[0] === label)?.slice(1).join(' ');
  t.true(rows.length >= 6, JSON.stringify(rows));
  t.regex(cell('Core edge') ?? '', /^ok\b/);
  t.is(cell('Node'), status.edge.node_id);
  t.is(cell('Pulse chain'), status.edge.pulse.chain_id);
  t.is(cell('Latest pulse index'), String(status.edge.pulse.latest_index));
  t.is(cell('Kernel worker threads'), String(status.edge.pool.threads));
  t.false(rows.flat().some((c) => /^[[{]/.test(c)), 'no raw JSON in a cell');
});

test('the trust page shows the edge certificate hash svcd pinned and the node key HELLO proves', async (t) => {
  const html = await (await fetch(`${base}/trust`)).text();
  const c = await s.edge();
  t.teardown(() => c.close());
  const hello = await c.request('HELLO', { nonce: 'trust-page' });
  const proof = hello.edge_proof as { public_key: string; statement: { edge_cert_sha256: string } };
  // the values come from svcd's ready file and from the edge itself, not from the gateway that renders the page
  t.is(proof.statement.edge_cert_sha256, s.ready.edge_cert_sha256);
  t.true(html.includes(`<code class="hash">${s.ready.edge_cert_sha256}</code>`), 'edge certificate SHA-256');
  t.regex(proof.public_key, /^[A-Za-z0-9_-]{43}$/);
  t.true(html.includes(`<code class="hash">${proof.public_key}</code>`), 'signing key');
  t.true(html.includes(`<code class="hash">${hello.node_id as string}</code>`), 'node id');
});

test('the pricing page states the unit policy as a sentence', async (t) => {
  const html = await (await fetch(`${base}/pricing`)).text();
  const text = html.replace(/<style>[\s\S]*?<\/style>/, '').replace(/<[^>]+>/g, '');
  t.notRegex(text, /not parity not backed/);
  t.regex(text, /not backed by any asset, not redeemable and earns no yield/);
});

test('the home page, /docs and /for-agents point to the MCP endpoint and the embedding kit', async (t) => {
  for (const p of ['/', '/docs', '/for-agents']) {
    const html = await (await fetch(base + p)).text();
    t.true(html.includes(`<code>POST ${base}/mcp</code>`), `${p}: MCP endpoint`);
    const kit = ['<code>@svc/kit/kernels</code>', '<code>@svc/kit/verify</code>'];
    t.true(kit.every((c) => html.includes(c)), `${p}: kit`);
    t.true(html.includes(`href="${REFERENCE}"`), `${p}: links the API reference`);
  }
  const llms = await (await fetch(`${base}/llms.txt`)).text();
  t.true(llms.includes(`${base}${REFERENCE}`), 'llms.txt lists the API reference');
});

test('/for-agents and llms.txt say how to pay per request with x402, and where to see if a node takes it',
  async (t) => {
    const html = await (await fetch(`${base}/for-agents`)).text();
    const section = html.slice(html.indexOf('<h2 id="x402">'));
    t.true(section.startsWith('<h2 id="x402">Paying per request (x402)</h2>'));
    for (const x of ['GET /api/v1/payment', 'PAYMENT-REQUIRED', 'PAYMENT-SIGNATURE', 'PAYMENT-RESPONSE', '402']) {
      t.true(section.includes(`<code>${x}</code>`), `/for-agents: ${x}`);
    }
    t.regex(section, /claimed by a machine token needs that token/);
    t.regex(html, /href="\/for-agents#x402"/, 'the MCP paragraph points at it');
    const llms = await (await fetch(`${base}/llms.txt`)).text();
    const x402 = llms.slice(llms.indexOf('## Paying per request (x402)'), llms.indexOf('## Services'));
    t.true(x402.length > 200, 'llms.txt has the section');
    t.true(x402.includes(`GET ${base}/api/v1/payment`), 'where to see whether the node takes x402');
    // the flow, in order: the free quote, the 402 with PAYMENT-REQUIRED, the payment, the 200 with PAYMENT-RESPONSE
    const order = ['POST /api/v1/quotes/{service}', 'POST /api/v1/executions/{service}', '402 payment_required',
      'PAYMENT-REQUIRED', 'PAYMENT-SIGNATURE', '200 with PAYMENT-RESPONSE', 'receipt name the payment'];
    const at = order.map((x) => x402.indexOf(x));
    t.true(at.every((i) => i >= 0), JSON.stringify(Object.fromEntries(order.map((x, i) => [x, at[i]]))));
    t.deepEqual([...at].sort((a, b) => a - b), at, 'in the order they happen');
    t.regex(x402, /claimed by a machine token needs that token/);
    t.regex(x402, /svc_execute_get_pulse/);
  });
