// Headless Debian chromium via playwright-core (no browser download), launched the way this
// machine needs: no sandbox as root, and no background networking (the network is closed).
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import type { Need } from './needs.ts';

export const CHROMIUM = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
/** What a browser test needs (testNeeding): Debian's chromium. */
export const CHROMIUM_NEED: Need = {
  what: CHROMIUM, present: hasChromium, hint: 'apt install chromium, or set SVC_CHROMIUM',
};

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
}

/** What a loopback file server answers for a path: its media type and bytes, or null for 404. */
export type ServeFile = (path: string) => { type: string; body: Uint8Array } | null;

/**
 * Serves files on a loopback port, opens `page` in headless Chromium, waits until the page sets
 * window[global], and returns that value and the text of its #status element.
 */
export async function runPage(
  serve: ServeFile, page: string, global: string, timeoutMs = 60_000,
): Promise<{ value: unknown; status: string }> {
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => {
    const f = serve(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    if (!f) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-type': f.type }).end(f.body);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as { port: number }).port;
  const browser = await launchChromium();
  try {
    const p = await browser.newPage();
    await p.goto(`http://127.0.0.1:${port}${page}`);
    await p.waitForFunction((g) => (window as any)[g] !== undefined, global, { timeout: timeoutMs });
    const value = await p.evaluate((g) => (window as any)[g], global);
    return { value, status: (await p.textContent('#status')) ?? '' };
  } finally {
    await browser.close();
    server.close();
  }
}
