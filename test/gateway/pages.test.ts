// The HTML pages in a real browser (Debian chromium via playwright-core): each page renders its
// heading, raises no console error, and every internal link on it answers 200.
import test from 'ava';
import { Svcd } from '../support/svcd.ts';
import { hasChromium, launchChromium, CHROMIUM } from '../support/browser.ts';

const PAGES = ['/', '/docs', '/protocol', '/for-agents', '/pricing', '/status', '/trust', '/.well-known/svc/'];

const title = hasChromium
  ? 'pages render in Chromium with headings, no console errors, and working internal links'
  : `pages in Chromium — SKIPPED: ${CHROMIUM} not found`;
(hasChromium ? test : test.skip)(title, async (t) => {
  const s = await Svcd.start({ SVC_RATE_PUBLIC_LOW: '10000/60' }, ['start']);
  t.teardown(async () => { await s.stop(); s.cleanup(); });
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  const links = new Set<string>();
  for (const p of PAGES) {
    const res = await page.goto(s.ready.http + p);
    t.is(res?.status(), 200, p);
    t.regex(await page.title(), / — svc$/, p);
    t.true(((await page.textContent('h1')) ?? '').length > 3, `${p} has a heading`);
    const hrefs = await page.$$eval('a[href^="/"]', (as) => as.map((a) => a.getAttribute('href')!));
    for (const href of hrefs) links.add(href.split('#')[0]!);
  }
  t.deepEqual(errors, []);
  for (const href of links) t.is((await fetch(s.ready.http + href)).status, 200, `link ${href}`);
  t.true(links.size >= 15);
  // the trust page shows the node key and edge fingerprint the core reports
  await page.goto(`${s.ready.http}/trust`);
  t.true(((await page.textContent('main')) ?? '').includes(s.ready.edge_cert_sha256));
  if (process.env.SVC_SCREENSHOT) await page.screenshot({ path: process.env.SVC_SCREENSHOT, fullPage: true });
});
