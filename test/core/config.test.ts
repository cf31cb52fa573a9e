// Configuration is checked whole before anything starts:
// integers are written as integers (no ' ', '0x10', '1e3' or ' 80'), SVC_BASE_URL is an absolute http(s)
// URL (a bad one served readyz 200 while every discovery document was 500), and a data dir whose admin
// socket path would not fit a unix socket is refused by name (Node cut the path and bound the socket
// outside the data dir, after creating keys and a ledger).
import test from 'ava';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/core/config.ts';
import { BIN, runBin } from '../support/svcd.ts';

test('integers: digits only; anything Number() would stretch is refused naming the variable', (t) => {
  for (const raw of [' ', ' 80', '80 ', '0x10', '1e3', '1.0', '+5', '08a', '٣']) {
    t.throws(() => loadConfig({ SVC_EDGE_PORT: raw }), { message: /^SVC_EDGE_PORT must be an integer in 0\.\.65535/ },
      JSON.stringify(raw));
  }
  t.is(loadConfig({ SVC_EDGE_PORT: '8443' }).edgePort, 8443);
  t.is(loadConfig({ SVC_EDGE_PORT: '0' }).edgePort, 0);
  t.is(loadConfig({ SVC_EDGE_PORT: '' }).edgePort, 9443, 'empty is unset: the default');
  t.throws(() => loadConfig({ SVC_GATEWAY_PROCESSES: '0x2' }), { message: /SVC_GATEWAY_PROCESSES must be auto/ });
});

test('SVC_BASE_URL: an absolute http(s) URL without query or fragment, or refused at start', (t) => {
  for (const bad of ['notaurl', '/relative', 'ftp://example.com', 'https://', 'https://x.example/?a=1',
    'https://x.example/#top', 'javascript:alert(1)']) {
    t.throws(() => loadConfig({ SVC_BASE_URL: bad }), { message: /^SVC_BASE_URL must be an absolute http/ }, bad);
  }
  t.is(loadConfig({ SVC_BASE_URL: 'https://svc.example.com' }).baseUrl, 'https://svc.example.com');
  t.is(loadConfig({ SVC_BASE_URL: 'https://svc.example.com/base/' }).baseUrl, 'https://svc.example.com/base/');
  t.is(loadConfig({}).baseUrl, null);
});

test('a data dir too long for its admin socket is refused by name, before anything is written', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'svc-longdir-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, 'd'.repeat(Math.max(1, 110 - root.length)));
  t.throws(() => loadConfig({ SVC_DATA_DIR: dir }), { message: /^SVC_DATA_DIR is too long for its admin socket/ });
  const r = await runBin(BIN.svcd, ['core'], { SVC_DATA_DIR: dir });
  t.is(r.code, 1, r.stderr);
  t.regex(r.stderr, /SVC_DATA_DIR is too long/);
  t.false(existsSync(dir), 'nothing created in it');
  t.deepEqual(readdirSync(root), [], 'and no socket left beside it');
});

test('SVC_LOG_LEVEL: one of pino\'s levels, or refused naming the variable', (t) => {
  t.throws(() => loadConfig({ SVC_LOG_LEVEL: 'bogus' }), { message: /^SVC_LOG_LEVEL must be one of fatal, error/ });
  t.is(loadConfig({ SVC_LOG_LEVEL: 'debug' }).logLevel, 'debug');
  t.is(loadConfig({}).logLevel, 'info');
});

test('a second svcd on a data dir another one holds says so, instead of "Database failed to open"', async (t) => {
  const { startSvcd } = await import('../support/start-svcd.ts');
  const s = await startSvcd(t, {}, { args: ['core'] });
  const r = await runBin(BIN.svcd, ['core'], { SVC_DATA_DIR: s.dataDir, SVC_EDGE_PORT: '0', SVC_BACKEND_PORT: '0' });
  t.is(r.code, 1, r.stdout);
  t.regex(r.stderr, /the ledger in .* is held by another process: is svcd already running on this data dir\?/);
});

test('TLS files that are not a certificate and its key fail at start naming SVC_TLS_CERT / SVC_TLS_KEY', async (t) => {
  const { writeFileSync } = await import('node:fs');
  const { generateKeyPairSync } = await import('node:crypto');
  const root = mkdtempSync(join(tmpdir(), 'svc-tls-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
    .export({ type: 'pkcs8', format: 'pem' });
  writeFileSync(join(root, 'garbage.pem'), 'not a certificate\n');
  writeFileSync(join(root, 'key.pem'), other);
  const env = (cert: string) => ({
    SVC_DATA_DIR: join(root, `d-${cert}`), SVC_TLS_CERT: join(root, cert), SVC_TLS_KEY: join(root, 'key.pem'),
    SVC_EDGE_PORT: '0', SVC_BACKEND_PORT: '0',
  });
  // a real certificate with a key that is not its own: OpenSSL said only "key values mismatch"
  const { loadTlsMaterial } = await import('../../src/core/tls-material.ts');
  const made = await loadTlsMaterial({ dataDir: root, certFile: null, keyFile: null, hosts: ['127.0.0.1'] });
  writeFileSync(join(root, 'real.pem'), made.cert);
  for (const cert of ['garbage.pem', 'missing.pem', 'real.pem']) {
    const r = await runBin(BIN.svcd, ['core'], env(cert));
    t.is(r.code, 1, r.stdout);
    t.regex(r.stderr, new RegExp(`SVC_TLS_CERT / SVC_TLS_KEY \\(${root}/${cert.replace('.', '\\.')}, `), cert);
  }
});

test('a listener that cannot bind names its settings: an edge host that does not resolve, an HTTP port in use',
  async (t) => {
    const { createServer } = await import('node:net');
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    t.teardown(() => busy.close());
    const port = (busy.address() as { port: number }).port;
    const root = mkdtempSync(join(tmpdir(), 'svc-bind-'));
    t.teardown(() => rmSync(root, { recursive: true, force: true }));
    const base = { SVC_EDGE_PORT: '0', SVC_BACKEND_PORT: '0', SVC_HTTP_PORT: '0', SVC_GATEWAY_PROCESSES: '0' };
    const edgeEnv = { ...base, SVC_DATA_DIR: join(root, 'a'), SVC_EDGE_HOST: 'no-such-host.invalid' };
    const edge = await runBin(BIN.svcd, ['core'], edgeEnv);
    t.is(edge.code, 1, edge.stdout);
    t.regex(edge.stderr, /SVC_EDGE_HOST \/ SVC_EDGE_PORT \(no-such-host\.invalid, 0\): cannot listen: /);
    const httpEnv = { ...base, SVC_DATA_DIR: join(root, 'b'), SVC_HTTP_PORT: String(port) };
    const http = await runBin(BIN.svcd, ['start'], httpEnv);
    t.is(http.code, 1, http.stdout);
    const named = `SVC_HTTP_HOST / SVC_HTTP_PORT \\(127\\.0\\.0\\.1, ${port}\\): cannot listen: .*EADDRINUSE`;
    t.regex(http.stderr, new RegExp(named));
  });
