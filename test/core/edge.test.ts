// svc/1 on the three listeners: TLS 1.3 + ALPN dual-stack edge, loopback backend, admin socket;
// framing errors, oversize lines, slow writers and pipelined floods; admin commands refused
// everywhere but the admin socket.
import test from 'ava';
import { statSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { Svcd } from '../support/svcd.ts';
import { sharedSvcd } from '../support/start-svcd.ts';

const s = sharedSvcd(test, { SVC_LINE_TIMEOUT_MS: '3000', SVC_MAX_IN_FLIGHT: '8' }, { args: ['core'] });

function rawTls(alpn: string[] | undefined): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const t = tlsConnect({
      host: '127.0.0.1',
      port: s.edgePort,
      rejectUnauthorized: false,
      ...(alpn ? { ALPNProtocols: alpn } : {}),
    }, () => resolve(t));
    t.once('error', reject);
  });
}

/** Writes raw bytes, collects reply lines until `count` lines arrived or the socket closed. */
function exchange(
  sock: TLSSocket, data: string | Buffer, count: number, timeoutMs = 5000,
): Promise<{ lines: any[]; closed: boolean }> {
  return new Promise((resolve) => {
    let buf = '', closed = false;
    const lines: any[] = [];
    const finish = () => { clearTimeout(timer); sock.removeAllListeners('data'); resolve({ lines, closed }); };
    const timer = setTimeout(finish, timeoutMs);
    sock.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) { lines.push(JSON.parse(buf.slice(0, i))); buf = buf.slice(i + 1); }
      if (lines.length >= count) finish();
    });
    sock.once('close', () => { closed = true; finish(); });
    if (data.length) sock.write(data);
  });
}

test('edge: TLS 1.3 with ALPN svc/1 on one dual-stack socket (127.0.0.1 and ::1)', async (t) => {
  t.regex(s.ready.edge, /^\[::\]:\d+$/);
  for (const host of ['127.0.0.1', '::1']) {
    const c = await s.edge(host);
    const h = await c.request('HELLO', { nonce: 'nonce-12345' });
    t.is(h.protocol, 'svc/1');
    t.is((h.edge_proof as any).statement.nonce, 'nonce-12345');
    t.is((h.edge_proof as any).statement.edge_cert_sha256, s.ready.edge_cert_sha256);
    c.close();
  }
  const sock = await rawTls(['svc/1']);
  t.is(sock.getProtocol(), 'TLSv1.3');
  t.is(sock.alpnProtocol, 'svc/1');
  sock.destroy();
});

test('edge: a client that does not negotiate ALPN svc/1 gets an error frame and is closed', async (t) => {
  const sock = await rawTls(undefined);
  const r = await exchange(sock, '', 1);
  t.is(r.lines[0]?.ok, false);
  t.is(r.lines[0]?.error.code, 'bad_frame');
  t.regex(r.lines[0]?.error.message, /ALPN/);
});

test('edge: malformed frames get named errors and the connection stays usable', async (t) => {
  const sock = await rawTls(['svc/1']);
  const bad = [
    'not json', '[1,2]', '{"v":"svc/1","cmd":"HELLO"}', '{"v":"svc/2","id":1,"cmd":"HELLO"}',
    '{"v":"svc/1","id":2,"cmd":"NOPE"}',
    '{"v":"svc/1","id":3,"cmd":"HELLO","args":[]}', '{"v":"svc/1","id":4,"cmd":"QUOTE","args":{"service":"get-pulse"}}',
    '{"v":"svc/1","id":5,"cmd":"QUOTE","args":{"service":"get-pulse","machine_id":"m","bits":0}}',
    '{"v":"svc/1","id":6,"cmd":"QUOTE","args":{"service":"get-pulse","machine_id":"m","colour":"red"}}',
    '{"v":"svc/1","id":7,"cmd":"HELLO","args":{},"auth":"x"}', '{"v":"svc/1","id":8,"cmd":"CAPS"}',
  ];
  const r = await exchange(sock, bad.join('\n') + '\n', bad.length);
  const byId = (id: unknown) => r.lines.find((l) => l.id === id);
  t.deepEqual(r.lines.filter((l) => l.id === null).map((l) => l.error.code), ['bad_frame', 'bad_frame', 'bad_frame']);
  t.is(byId(1).error.code, 'unsupported_version');
  t.is(byId(2).error.code, 'unknown_command');
  t.is(byId(3).error.code, 'bad_frame');
  t.deepEqual([byId(4).error.code, byId(4).error.message], ['invalid_request', 'machine_id is required']);
  t.regex(byId(5).error.message, /bits must be >= 1/);
  t.is(byId(6).error.message, 'unknown field colour');
  t.is(byId(7).error.code, 'bad_frame');
  t.is(byId(8).ok, true, 'the connection still answers after the bad lines');
  t.is(byId(8).result.capability_count, 21);
  sock.destroy();
});

test('edge: a line over 1 MiB gets line_too_long and the connection is closed', async (t) => {
  const sock = await rawTls(['svc/1']);
  const r = await exchange(sock, Buffer.alloc((1 << 20) + 10, 0x61), 1, 30_000);
  t.is(r.lines[0]?.error.code, 'line_too_long');
  const after = await exchange(sock, '', 1, 8000);
  t.true(after.closed || r.closed);
});

test('edge: a slow writer (half a line, then silence) is cut off after the line timeout', async (t) => {
  const sock = await rawTls(['svc/1']);
  const started = Date.now();
  const r = await exchange(sock, '{"v":"svc/1","id":1,"cmd":"HEL', 1, 10_000);
  t.is(r.lines[0]?.error.code, 'bad_frame');
  t.regex(r.lines[0]?.error.message, /no end of line/);
  const waited = Date.now() - started;
  t.true(waited >= 2900 && waited < 9000, `cut after ${waited} ms (line timeout 3000)`);
});

test('edge: a flood of 3,000 pipelined requests is answered in full, ids intact, ' +
  'under a small in-flight bound', async (t) => {
  const sock = await rawTls(['svc/1']);
  const n = 3000;
  const frames = Array.from({ length: n }, (_, i) => JSON.stringify({ v: 'svc/1', id: i, cmd: 'CAPS' }));
  const payload = frames.join('\n') + '\n';
  const r = await exchange(sock, payload, n, 60_000);
  t.is(r.lines.length, n);
  t.deepEqual(new Set(r.lines.map((l) => l.id)).size, n);
  t.true(r.lines.every((l) => l.ok === true));
  sock.destroy();
  const c = await s.edge();
  t.is((await c.request('HELLO')).protocol, 'svc/1', 'still healthy after the flood');
  c.close();
});

test('admin commands: refused on the edge and the backend, served only on the admin socket (mode 0600)', async (t) => {
  for (const open of [() => s.edge(), () => s.backend()]) {
    const c = await open();
    for (const cmd of ['SETTLE_INVOICE', 'RECOVER_RUNTIME', 'ROTATE_TOKEN']) {
      const e = await t.throwsAsync(c.request(cmd, { invoice_id: 'inv_x', reference: 'r', machine_id: 'm' }));
      t.is((e as any).code, 'forbidden', cmd);
    }
    c.close();
  }
  t.is(statSync(s.ready.admin_socket).mode & 0o777, 0o600);
  const a = await s.admin();
  const r = await a.request('RECOVER_RUNTIME');
  t.true(r.pool_restarted as boolean);
  t.true((r.ledger as any).ok);
  a.close();
});

test('backend: plain TCP on 127.0.0.1 only', async (t) => {
  t.regex(s.ready.backend, /^127\.0\.0\.1:\d+$/);
  const c = await s.backend();
  t.is((await c.request('CAPS')).capability_count, 21);
  c.close();
  const reached = await new Promise<boolean>((resolve) => {
    const sock = netConnect({ host: '::1', port: s.backendPort }, () => { sock.destroy(); resolve(true); });
    sock.once('error', () => resolve(false));
  });
  t.false(reached, 'not reachable over ::1');
});

test('svcd refuses a backend bound anywhere but 127.0.0.1', async (t) => {
  const bad = new Svcd({ SVC_BACKEND_HOST: '0.0.0.0' });
  const r = await bad.startExpectingFailure();
  t.is(r.code, 1);
  t.regex(r.output, /SVC_BACKEND_HOST must be 127\.0\.0\.1/);
  bad.cleanup();
});
