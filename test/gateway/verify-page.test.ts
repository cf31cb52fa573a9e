// The browser verifier (/verify) in headless Chromium against a real svcd: the page loads the bundled
// kit, the kernels and the manifest's key set, then the network is cut and it checks real material
// from paid executions — a receipt (valid; invalid once a field is changed, saying why), a pulse, two
// consecutive pulses, a timestamp proof, an event log proof, an attestation — and calls garbage what
// it is, asking the server nothing. Malformed material (lone surrogates, 1e400, wrong types, another
// encoding of a signature, a log field changed) is an invalid verdict naming the failed check, an
// unreadable file or anything that throws is a message in the result, and nothing reaches the console.
// The same with the @noble/curves fallback when the browser's WebCrypto has no Ed25519.
import test from 'ava';
import type { BrowserContext, Page } from 'playwright-core';
import { hasChromium, launchChromium, CHROMIUM } from '../support/browser.ts';
import { testNeeding } from '../support/needs.ts';
import { fundMachine, paidExecution } from '../support/svcd.ts';
import { sharedSvcd } from '../support/start-svcd.ts';
import { until } from '../support/until.ts';
import type { SvcClient } from '../../src/client/client.ts';
import { canonicalJson } from '../../src/protocol/canonical.ts';

const M = 'verify-page';
let c: SvcClient;
test.after.always(() => c?.close());
const s = sharedSvcd(test, { SVC_RATE_PUBLIC_LOW: '10000/60', SVC_PULSE_PERIOD_MS: '1500' });
let base: string;
const material: Record<string, any> = {};

test.before(async () => {
  base = s.ready.http!;
  const token = await fundMachine(s, M, 5);
  c = await s.edge();
  const ex = await paidExecution(c, M, token, 'get-pulse', { bits: 256 });
  material.receipt = await c.request('VERIFY_RECEIPT', { receipt_id: ex.receipt_id, machine_id: M });
  material.timestamp = await paidExecution(c, M, token, 'timestamp-proof', { bytes: 32 },
    { plain_hex: 'ab'.repeat(32) });
  const summary = Buffer.from(JSON.stringify({
    count: 3, head_hash: 'cd'.repeat(32), from: '2026-11-22T00:00:00Z', to: '2026-11-22T01:00:00Z',
  }));
  material.events = await paidExecution(c, M, token, 'machine-event-log', { bytes: summary.length },
    { plain_hex: summary.toString('hex') });
  const event = Buffer.from('door opened');
  material.attestation = await paidExecution(c, M, token, 'attest-event', { bytes: event.length },
    { plain_hex: event.toString('hex') });
  // a pulse and its successor, as GET /api/v1/pulses/{index} serves them (the HTTP envelope included)
  const latest = await (await fetch(`${base}/api/v1/pulses/latest`)).json() as { pulse: { index: number } };
  await until('the next pulse', async () => (await fetch(`${base}/api/v1/pulses/${latest.pulse.index + 1}`)).ok,
    { ms: 60_000, every: 200 });
  material.pulse = latest;
  material.next = await (await fetch(`${base}/api/v1/pulses/${latest.pulse.index + 1}`)).json();
});

interface Shown { state: string; verdict: string; checks: { ok: boolean; text: string }[]; reason: string }

/** Puts `text` in the document box, presses Verify and reads what the page shows. */
async function verify(page: Page, text: string): Promise<Shown> {
  await page.evaluate(() => { delete document.getElementById('result')!.dataset.state; });
  await page.fill('#doc', text);
  await page.click('#check');
  return shown(page);
}

async function shown(page: Page): Promise<Shown> {
  await page.waitForFunction(() => document.getElementById('result')!.dataset.state !== undefined);
  return page.evaluate(() => {
    const r = document.getElementById('result')!;
    return {
      state: r.dataset.state!,
      verdict: document.getElementById('verdict')?.textContent ?? '',
      checks: Array.from(r.querySelectorAll('ul.checks li')).map((li) => ({
        ok: li.classList.contains('ok'), text: li.textContent ?? '',
      })),
      reason: r.querySelector('p:last-child code')?.textContent ?? '',
    };
  });
}

/**
 * Opens /verify, waits until the kit is ready, then cuts the network; counts every request after that, and
 * every error the page throws or logs (`errors`: none may appear).
 */
async function openOffline(
  context: BrowserContext,
): Promise<{ page: Page; backend: string; after: string[]; errors: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const res = await page.goto(`${base}/verify`);
  if (res?.status() !== 200) throw new Error(`/verify: ${res?.status()}`);
  await page.waitForSelector('#verifier[data-ready]');
  const backend = (await page.getAttribute('#verifier', 'data-ready'))!;
  if (errors.length) throw new Error(errors.join('\n'));
  const after: string[] = [];
  context.on('request', (r) => after.push(r.url()));
  await context.setOffline(true);
  return { page, backend, after, errors };
}

/** Copies of real material broken the ways pasted JSON breaks: each must be invalid, saying which check failed. */
function malformed(): [string, string, RegExp][] {
  const { receipt, pulse, timestamp, events, attestation } = material;
  const json = (v: unknown) => JSON.stringify(v);
  const flipLowBits = (sig: string) => {
    // the last character of 86 base64url carries 2 bits and 4 stray ones: a second spelling of the same bytes
    const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    return sig.slice(0, -1) + abc[abc.indexOf(sig.at(-1)!) ^ 1];
  };
  return [
    ['a lone surrogate in a receipt', json(receipt).replace(`"machine_id":"${receipt.receipt.machine_id}"`,
      `"machine_id":"${receipt.receipt.machine_id}\\ud800"`), /^Invalid signed receipt\. Failed check: signature/],
    ['a receipt signature spelt another way', json({ ...receipt, signature: flipLowBits(receipt.signature) }),
      /^Invalid signed receipt\. Failed check: signature/],
    ['base64 for base64url', json({ ...receipt, signature: Buffer.from(receipt.signature, 'base64url')
      .toString('base64') }), /^Invalid signed receipt\. Failed check: signature/],
    ['1e400 as a pulse index', json(pulse).replace(`"index":${pulse.pulse.index}`, '"index":1e400'),
      /^Invalid signed pulse\. Failed check: pulse signature/],
    ['a lone surrogate in a pulse', json(pulse).replace('"format":"svc_pulse_v1"', '"format":"svc_pulse_v1\\udc00"'),
      /^Invalid signed pulse\. Failed check: pulse signature/],
    ['1e400 as a timestamp serial', json(timestamp).replace(`"serial":${timestamp.token.serial}`, '"serial":1e400'),
      /^Invalid timestamp proof\. Failed check: the logged entry/],
    ['a timestamp whose log.tree_size was changed', json({ ...timestamp, log: { ...timestamp.log,
      tree_size: timestamp.log.tree_size + 1 } }), /^Invalid timestamp proof\. Failed check: log fields/],
    ['a timestamp of the wrong types', json({ ...timestamp, token_signature: 7, log: [] }),
      /^Invalid timestamp proof\. Failed check: a token, its signature/],
    ['an event log whose entry was changed', json({ ...events, entry: { ...events.entry, index: 99 } }),
      /^Invalid machine event log proof\. Failed check: the logged entry/],
    ['an attestation whose signatures are numbers', json({ ...attestation, envelope: { ...attestation.envelope,
      signatures: [1, 2] } }), /^Invalid attestation \(DSSE envelope\)\. Failed check: a DSSE envelope/],
    ['a pulse pair of the wrong types', json([{ ...pulse, pulse: { ...pulse.pulse, index: 'x' } }, material.next]),
      /^Invalid two consecutive pulses .*\. Failed check: pulse k(\+1)? is a signed pulse/],
  ];
}

const chromium = { what: CHROMIUM, present: hasChromium, hint: 'apt install chromium, or set SVC_CHROMIUM' };

for (const mode of ['webcrypto', 'noble'] as const) {
  testNeeding(test, `${mode}: offline after load, real receipts, pulses and proofs are checked in the page`,
    chromium, async (t) => {
      const browser = await launchChromium();
      t.teardown(() => browser.close());
      const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
      if (mode === 'noble') {
        // a browser without Ed25519 in WebCrypto: the kit's probe fails and it verifies with @noble/curves
        await context.addInitScript(() => {
          const importKey = crypto.subtle.importKey.bind(crypto.subtle);
          crypto.subtle.importKey = ((...a: Parameters<typeof importKey>) => (JSON.stringify(a[2]).includes('Ed25519')
            ? Promise.reject(new DOMException('unsupported', 'NotSupportedError')) : importKey(...a))) as never;
        });
      }
      const { page, backend, after, errors } = await openOffline(context);
      t.is(backend, mode);
      // the key set came from the manifest and is shown
      const keys = JSON.parse(await page.inputValue('#keys')) as { public_key: string; keys: unknown[] };
      t.is(keys.public_key, material.receipt.public_key);
      t.true((await page.textContent('#keys-table'))!.includes(material.receipt.public_key as string));

      const receipt = await verify(page, JSON.stringify(material.receipt, null, 2));
      t.is(receipt.state, 'valid', JSON.stringify(receipt));
      t.regex(receipt.verdict, /^Valid signed receipt/);
      t.true(receipt.checks.length >= 3 && receipt.checks.every((x) => x.ok), JSON.stringify(receipt.checks));

      const tampered = { ...material.receipt, receipt: { ...material.receipt.receipt, units_charged: '1' } };
      const bad = await verify(page, JSON.stringify(tampered));
      t.is(bad.state, 'invalid');
      t.regex(bad.verdict, /^Invalid signed receipt\. Failed check: signature/);
      t.is(bad.reason, 'bad_signature');
      t.true(bad.checks.some((x) => !x.ok && /signature/.test(x.text)));

      const pulse = await verify(page, JSON.stringify(material.pulse));
      t.is(pulse.state, 'valid', JSON.stringify(pulse));
      t.regex(pulse.verdict, /^Valid signed pulse/);
      const pair = await verify(page, JSON.stringify([material.next, material.pulse]));
      t.is(pair.state, 'valid', JSON.stringify(pair));
      t.true(pair.checks.some((x) => x.ok && /SHA-256\(revealed seed\)/.test(x.text)));
      const forgedPulse = { ...material.pulse, output_hash: '00'.repeat(32) };
      t.is((await verify(page, JSON.stringify(forgedPulse))).reason, 'bad_output_hash');

      const ts = await verify(page, JSON.stringify(material.timestamp));
      t.is(ts.state, 'valid', JSON.stringify(ts));
      t.regex(ts.verdict, /^Valid timestamp proof/);

      const events = await verify(page, JSON.stringify(material.events));
      t.is(events.state, 'valid', JSON.stringify(events));
      t.regex(events.verdict, /^Valid machine event log proof/);
      const moved = { ...material.events, log: { ...material.events.log, entry_base64: 'Zm9yZ2Vk' } };
      t.is((await verify(page, JSON.stringify(moved))).reason, 'entry_mismatch', 'the entry is not the logged one');
      // another entry at the same index, logged bytes and entry in agreement: the log does not include it
      const { entry, ...noEntry } = material.events;
      const other = Buffer.from(canonicalJson({ ...entry, summary: { ...entry.summary, count: 4 } }));
      const forged = { ...noEntry, log: { ...material.events.log, entry_base64: other.toString('base64') } };
      t.is((await verify(page, JSON.stringify(forged))).reason, 'not_included');
      const attestation = await verify(page, JSON.stringify(material.attestation));
      t.is(attestation.state, 'valid', JSON.stringify(attestation));
      t.regex(attestation.verdict, /^Valid attestation/);
      const bare = await verify(page, material.timestamp.tlog_proof as string);
      t.is(bare.state, 'unrecognised');
      t.regex(bare.verdict, /bare transparency-log proof/);

      for (const garbage of ['hello', '{"just": "json"}', '[1, 2]']) {
        const g = await verify(page, garbage);
        t.is(g.state, 'unrecognised', garbage);
        t.regex(g.verdict, /not a receipt, pulse or proof/, garbage);
      }

      // the file picker and the drop zone take the same path
      await page.evaluate(() => { delete document.getElementById('result')!.dataset.state; });
      await page.setInputFiles('#file', {
        name: 'receipt.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(material.receipt)),
      });
      t.is((await shown(page)).state, 'valid', 'chosen file');
      await page.evaluate(() => { delete document.getElementById('result')!.dataset.state; });
      await page.evaluate((text) => {
        const dt = new DataTransfer();
        dt.items.add(new File([text], 'tampered.json', { type: 'application/json' }));
        document.getElementById('drop')!.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true }));
      }, JSON.stringify(tampered));
      t.is((await shown(page)).state, 'invalid', 'dropped file');

      // malformed material: an invalid verdict that names the check, never an error
      for (const [what, text, verdict] of malformed()) {
        const m = await verify(page, text);
        t.is(m.state, 'invalid', what);
        t.regex(m.verdict, verdict, what);
        t.true(m.reason.length > 0 && m.checks.some((x) => !x.ok), what);
      }
      for (const deep of ['['.repeat(200_000) + ']'.repeat(200_000), '{"receipt":{},"signature":"' + 'A'.repeat(1e6)
        + '"}']) {
        t.regex((await verify(page, deep)).state, /^(unrecognised|invalid)$/, deep.slice(0, 20));
      }
      // a file the browser cannot read, and anything that throws in the page's own code: said in the result
      await page.evaluate(() => { delete document.getElementById('result')!.dataset.state; });
      // (as text: the test's compiler would wrap a function's inner functions in a helper the page lacks)
      await page.evaluate(`(() => {
        const f = new File(['{}'], 'locked.json', { type: 'application/json' });
        f.text = () => Promise.reject(new DOMException('the file is locked', 'NotReadableError'));
        // a DataTransfer would copy the file: the drop handler is handed this one through the event
        const ev = new DragEvent('drop', { bubbles: true, cancelable: true });
        Object.defineProperty(ev, 'dataTransfer', { value: { files: [f], getData: () => '' } });
        document.getElementById('drop').dispatchEvent(ev);
      })()`);
      const unread = await shown(page);
      t.is(unread.state, 'error');
      t.regex(unread.verdict, /^The file "locked\.json" could not be read: the file is locked/);
      await page.evaluate(`(() => {
        window.sorted = Array.prototype.sort;
        Array.prototype.sort = () => { throw new Error('sort is broken'); };
      })()`);
      const broken = await verify(page, JSON.stringify([material.next, material.pulse]));
      await page.evaluate('Array.prototype.sort = window.sorted');
      t.is(broken.state, 'error');
      t.regex(broken.verdict, /^The check could not be completed: sort is broken/);

      // other keys pasted: the real receipt names a key they do not hold
      await page.fill('#keys', 'A'.repeat(43));
      const stranger = await verify(page, JSON.stringify(material.receipt));
      t.is(stranger.reason, 'unknown_key');

      t.deepEqual(errors, [], 'nothing thrown or logged as an error in the page');
      t.deepEqual(after, [], 'no request left the page after it loaded');
    });
}

test('the page and its script: CSP allowing only its own script and WASM, an immutable hashed bundle', async (t) => {
  const page = await fetch(`${base}/verify`);
  const html = await page.text();
  const csp = page.headers.get('content-security-policy') ?? '';
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /script-src 'self' 'wasm-unsafe-eval'(;|$)/);
  t.regex(csp, /connect-src 'self'/);
  t.notRegex(html, /<script(?![^>]*\bsrc=)/, 'no inline script');
  const src = /<script type="module" src="([^"]+)"/.exec(html)?.[1] ?? '';
  t.regex(src, /^\/assets\/verify\.js\?v=[0-9a-f]{32}$/);
  const js = await fetch(base + src, { headers: { 'accept-encoding': 'identity' } });
  const body = Buffer.from(await js.arrayBuffer());
  t.is(js.status, 200);
  t.is(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
  t.is(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  const { createHash } = await import('node:crypto');
  t.is(src.split('=')[1], createHash('sha256').update(body).digest('hex').slice(0, 32), 'the version is its hash');
  t.is(js.headers.get('etag'), `"${src.split('=')[1]}"`);
  const again = { 'accept-encoding': 'identity', 'if-none-match': js.headers.get('etag')! };
  t.is((await fetch(base + src, { headers: again })).status, 304);
  // without the current hash the script is not promised forever
  const unversioned = await fetch(`${base}/assets/verify.js`);
  t.regex(unversioned.headers.get('cache-control') ?? '', /^public, max-age=300$/);
  t.is(unversioned.headers.get('access-control-allow-origin'), null);
  const trust = await (await fetch(`${base}/trust`)).text();
  t.true(trust.includes('href="/verify"'), '/trust links the verifier');
  const sitemap = await (await fetch(`${base}/sitemap.xml`)).text();
  t.true(sitemap.includes(`${base}/verify</loc>`));
  t.true((await (await fetch(`${base}/llms.txt`)).text()).includes(`${base}/verify`));
});
