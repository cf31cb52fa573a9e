// On the real svcd: held lines, bodies and handshakes closed by their limits
// with RSS within 100 MB of baseline and others served; connection caps; deep JSON a 400, not a
// crash. Limits are shortened through env vars so it runs in seconds; it asserts bounds, not durations.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { connect as netConnect, createServer } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { Svcd } from '../support/svcd.ts';
import { until } from '../support/until.ts';
import { sharedSvcd } from '../support/start-svcd.ts';
import { held, heldTcp, heldTls, type Held } from '../support/raw-wire.ts';

const RSS_BOUND = 100e6;
const HOLDERS = 1000;
const PARTIAL = 200_000; // bytes each holder sends: 1,000 x 200 kB = 200 MB offered, over the bound
const SOURCES = Array.from({ length: 100 }, (_, i) => `127.0.0.${i + 2}`); // 10 holders per address
const PER_ADDRESS = 16;
const QUEUE_MS = 300;

const s = sharedSvcd(test, {
  SVC_HANDSHAKE_TIMEOUT_MS: '1000',
  SVC_LINE_TIMEOUT_MS: '4000',
  SVC_HTTP_HEADERS_TIMEOUT_MS: '1000',
  SVC_HTTP_REQUEST_TIMEOUT_MS: '4000',
  SVC_EDGE_MAX_CONNECTIONS: '1200',
  SVC_EDGE_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
  SVC_HTTP_MAX_CONNECTIONS: '1200',
  SVC_HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
  SVC_RATE_PUBLIC_LOW: '1000000/60', // the rate limit is not what is under test here
  SVC_CONNECTION_QUEUE_MS: String(QUEUE_MS),
});
let base: string;
let httpPort: number;
test.before(async () => {
  base = s.ready.http!;
  httpPort = Number(new URL(base).port);
  // warm both listeners (TLS, the gateway's pool, lazy modules) so baselines measure only the attack
  for (let i = 0; i < 20; i++) await stillServed({ is: () => undefined });
});

/** svcd's resident memory in bytes (VmRSS). */
function rss(): number {
  const status = readFileSync(`/proc/${s.proc!.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** Samples svcd's RSS until the returned function is called; that returns the peak. */
function watchRss(): () => number {
  let peak = rss();
  const timer = setInterval(() => { peak = Math.max(peak, rss()); }, 20);
  return () => { clearInterval(timer); return Math.max(peak, rss()); };
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/** A client socket and everything the server sent it until it closed. */
/** Opens `n` connections with `open` (source address by index), at most 50 handshakes at a time. */
async function openMany(n: number, open: (source: string) => Promise<Held>): Promise<Held[]> {
  const all: Held[] = [];
  for (let i = 0; i < n; i += 50) {
    const wave = Array.from({ length: Math.min(50, n - i) }, (_, j) => open(SOURCES[(i + j) % SOURCES.length]!));
    all.push(...await Promise.all(wave));
  }
  return all;
}

const edgeTls = (localAddress: string) => heldTls(s.edgePort, localAddress);

/**
 * A handshake the server dropped on a loaded machine (its handshake deadline passed while 50 others
 * were in the CPU queue) is retried: what is under test is what holders do once connected.
 */
async function retryHandshake(open: () => Promise<Held>, attempts = 4): Promise<Held> {
  for (let i = 1; ; i++) {
    try {
      return await open();
    } catch (e) {
      if (i >= attempts) throw e;
    }
  }
}

const tcp = heldTcp;

/** A connection to a unix socket, held. */
const heldUnix = (path: string): Promise<Held> => new Promise((resolve, reject) => {
  const socket = netConnect({ path }, () => resolve(h));
  socket.once('error', reject);
  const h = held(socket);
});

interface Reply { id: unknown; ok: boolean; error?: { code: string; message: string } }
const replyLines = (h: Held) => h.data.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Reply);

async function stillServed(t: { is: (a: unknown, b: unknown, m?: string) => void }): Promise<void> {
  const c = await s.edge();
  t.is((await c.request('HELLO', { nonce: 'meanwhile-1' })).protocol, 'svc/1', 'the edge serves others meanwhile');
  c.close();
  const health = await fetch(`${base}/api/v1/health`);
  t.is(health.status, 200, 'the gateway serves others meanwhile');
}

/** The HTTP/1.1 responses in `data`, in order, with their JSON bodies (each framed by content-length). */
function responses(data: string): { status: number; body: any }[] {
  const out: { status: number; body: any }[] = [];
  let rest = Buffer.from(data);
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return out;
    const head = rest.subarray(0, end).toString();
    const length = Number(/^content-length: *(\d+)/im.exec(head)?.[1] ?? 0);
    const body = rest.subarray(end + 4, end + 4 + length).toString();
    out.push({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1]), body: body ? JSON.parse(body) : null });
    rest = rest.subarray(end + 4 + length);
  }
}

/** Log lines svcd wrote at error level (pino level >= 50) since `from` characters of its stdout. */
const errorLogs = (from: number) => s.stdout.slice(from).split('\n').filter((l) => /"level":(5\d|6\d)/.test(l));

test.serial(`edge: ${HOLDERS} TLS connections holding partial lines: memory bounded, all closed`, async (t) => {
  const baseline = rss();
  const peak = watchRss();
  const line = `{"v":"svc/1","id":1,"cmd":"HELLO","args":{"nonce":"${'a'.repeat(PARTIAL)}`;
  const partial = Buffer.from(line.slice(0, PARTIAL));
  const holders = await openMany(HOLDERS, async (source) => {
    const h = await retryHandshake(() => edgeTls(source));
    h.socket.write(partial);
    return h;
  });
  await stillServed(t);
  await until('every holder closed', () => holders.every((h) => h.closed));
  const grew = peak() - baseline;
  t.true(grew < RSS_BOUND, `RSS grew by ${mb(grew)} (baseline ${mb(baseline)})`);
  const first = holders.map((h) => replyLines(h)[0]);
  const busy = first.filter((r) => r?.error?.code === 'busy').length;
  const timedOut = first.filter((r) => r?.error?.code === 'bad_frame' && /no end of line/.test(r.error.message)).length;
  // what the others got, counted by kind, so a failure says which limit misbehaved. Every holder was
  // closed (above); on a loaded machine a few may see the close before the frame that preceded it (the
  // server's TLS close raced their still-running 200 kB write), so the count of frames is not asserted,
  // only that no frame was anything but the two limits' answers
  const other = new Map<string, number>();
  let silent = 0;
  for (const r of first) {
    const expected = r?.error?.code === 'busy'
      || (r?.error?.code === 'bad_frame' && /no end of line/.test(r.error.message));
    if (expected) continue;
    if (!r) { silent++; continue; }
    const kind = `${r.error?.code ?? 'ok'}: ${r.error?.message ?? ''}`;
    other.set(kind, (other.get(kind) ?? 0) + 1);
  }
  t.deepEqual([...other], [], 'each frame a holder got is busy or bad_frame (line deadline)');
  t.true(busy > 0 && timedOut > 0, `both limits acted: ${busy} busy, ${timedOut} line deadline`);
  t.log(`edge: +${mb(grew)} peak; ${busy} refused by the line budget, ${timedOut} cut at the line deadline, `
    + `${silent} closed before their frame was read`);
  await stillServed(t);
});

test.serial(`HTTP: ${HOLDERS} connections holding partial bodies: memory bounded, all closed`, async (t) => {
  const logFrom = s.stdout.length;
  const baseline = rss();
  const peak = watchRss();
  const head = 'POST /api/v1/sandbox/quotes/get-pulse HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n'
    + 'content-length: 1000000\r\n\r\n';
  const body = `{"machine_id":"${'a'.repeat(PARTIAL)}`.slice(0, PARTIAL);
  const holders = await openMany(HOLDERS, async (source) => {
    const h = await tcp(httpPort, source);
    h.socket.write(head + body);
    return h;
  });
  await stillServed(t);
  await until('every holder closed', () => holders.every((h) => h.closed));
  const grew = peak() - baseline;
  t.true(grew < RSS_BOUND, `RSS grew by ${mb(grew)} (baseline ${mb(baseline)})`);
  const first = holders.map((h) => responses(h.data)[0]);
  const busy = first.filter((r) => r?.status === 503 && r.body?.error?.code === 'busy').length;
  const timedOut = first.filter((r) => r?.status === 408 && r.body?.error?.code === 'request_timeout').length;
  // as on the edge: every holder closed; a few may lose the answer to the close on a loaded machine
  const silent = first.filter((r) => r === undefined).length;
  const others = first.filter((r) => r !== undefined && !(r.status === 503 && r.body?.error?.code === 'busy')
    && !(r.status === 408 && r.body?.error?.code === 'request_timeout'));
  t.deepEqual(others, [], 'each answer is 503 busy or 408 request_timeout');
  t.true(busy > 0 && timedOut > 0, `both limits acted: ${busy} busy, ${timedOut} timed out`);
  t.log(`HTTP: +${mb(grew)} peak; ${busy} refused by the body budget, ${timedOut} cut at the request timeout, `
    + `${silent} closed before their answer was read`);
  await stillServed(t);
  // busy is an answer to a caller, not a fault: nothing an operator is paged for
  t.deepEqual(errorLogs(logFrom), [], 'nothing logged at error level');
});

test.serial('edge: handshakes that never finish are closed (nothing, half a ClientHello, a trickle)', async (t) => {
  // a real ClientHello, captured from a TLS client talking to a plain TCP listener
  const hello = await new Promise<Buffer>((resolve) => {
    const cap = createServer((sock) => sock.once('data', (d: Buffer) => { sock.destroy(); cap.close(); resolve(d); }));
    cap.listen(0, '127.0.0.1', () => {
      const port = (cap.address() as { port: number }).port;
      const c = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['svc/1'] });
      c.on('error', () => { /* the capture listener hangs up */ });
    });
  });
  const silent = await tcp(s.edgePort, '127.0.0.1');
  const half = await tcp(s.edgePort, '127.0.0.1');
  half.socket.write(hello.subarray(0, hello.length >> 1));
  const trickle = await tcp(s.edgePort, '127.0.0.1');
  let sent = 0;
  const drip = setInterval(() => {
    if (sent < hello.length - 1 && !trickle.closed) trickle.socket.write(hello.subarray(sent, ++sent));
  }, 100);
  try {
    await until('the three closed by the server', () => silent.closed && half.closed && trickle.closed, { ms: 15_000 });
  } finally {
    clearInterval(drip);
  }
  t.is(silent.data, '', 'nothing was answered to a client that sent nothing');
  t.true(sent < hello.length - 1, `the trickle was cut before its ClientHello was whole (${sent}/${hello.length})`);
  await stillServed(t);
});

test.serial('caps: over the per-address cap a connection waits for a slot, then is answered (busy, 429) '
  + 'and closed; others are not affected', async (t) => {
  const source = '127.0.0.250';
  const edge = await Promise.all(Array.from({ length: PER_ADDRESS }, () => edgeTls(source)));
  // one more from the same address waits, unread, for a slot: one closes, and it is served
  const waiter = edgeTls(source);
  edge.shift()!.socket.destroy();
  const admitted = await waiter;
  admitted.socket.write('{"v":"svc/1","id":1,"cmd":"CAPS"}\n');
  await until('a reply on the connection that waited', () => replyLines(admitted).length === 1);
  t.is(replyLines(admitted)[0]!.ok, true, 'the waiting connection took the freed slot');
  edge.push(admitted);
  // none closes: after SVC_CONNECTION_QUEUE_MS it gets a busy frame and the door
  const over = await edgeTls(source);
  await until('the connection over the edge cap closed', () => over.closed);
  const refusal = replyLines(over)[0]!;
  t.deepEqual([refusal.id, refusal.ok, refusal.error?.code], [null, false, 'busy']);
  t.regex(refusal.error!.message, /holds its 16 connections.*retry after 1 s/);
  const other = await edgeTls('127.0.0.251');
  t.false(other.closed, 'another address is admitted');

  const http = await Promise.all(Array.from({ length: PER_ADDRESS }, () => tcp(httpPort, source)));
  const overHttp = await tcp(httpPort, source);
  overHttp.socket.write('GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n');
  await until('the connection over the HTTP cap closed', () => overHttp.closed);
  const [answer] = responses(overHttp.data);
  t.is(answer?.status, 429, overHttp.data);
  t.is(answer?.body.error.code, 'rate_limited');
  t.regex(overHttp.data, /\r\nretry-after: 1\r\n/i);
  t.regex(overHttp.data, /\r\nconnection: close\r\n/i);
  http[0]!.socket.write('GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n');
  await until('a response on an admitted HTTP connection', () => /\r\n\r\n\{/.test(http[0]!.data));
  t.regex(http[0]!.data, /^HTTP\/1\.1 200/);
  for (const h of [...edge, other, ...http]) h.socket.destroy();
});

test.serial('caps: the total per listener is enforced (a small svcd: edge 6, backend 2, admin 2)', async (t) => {
  const small = await Svcd.start({
    SVC_EDGE_MAX_CONNECTIONS: '6', SVC_BACKEND_MAX_CONNECTIONS: '2', SVC_ADMIN_MAX_CONNECTIONS: '2',
  });
  t.teardown(async () => { await small.stop(); small.cleanup(); });
  const opened: Held[] = [];
  const open = async (port: number, source: string) => {
    const h = await heldTcp(port, source);
    opened.push(h);
    return h;
  };
  try {
    const edge = await Promise.all(SOURCES.slice(0, 6).map((a) => open(small.edgePort, a)));
    const over = await heldTls(small.edgePort, SOURCES[6]!);
    opened.push(over);
    await until('the 7th edge connection closed', () => over.closed);
    t.is(replyLines(over)[0]?.error?.code, 'busy', 'refused with a busy frame');
    t.false(edge.some((h) => h.closed), 'the first 6 stay open');
    const backend = await Promise.all([0, 1].map(() => open(small.backendPort, '127.0.0.1')));
    const overBackend = await open(small.backendPort, '127.0.0.1');
    await until('the 3rd backend connection closed', () => overBackend.closed);
    t.is(replyLines(overBackend)[0]?.error?.code, 'busy', 'refused with a busy frame');
    t.regex(replyLines(overBackend)[0]!.error!.message, /holds its 2 connections/);
    const admin = await Promise.all(Array.from({ length: 3 }, () => heldUnix(join(small.dataDir, 'admin.sock'))));
    opened.push(...admin);
    await until('the 3rd admin connection closed', () => admin[2]!.closed);
    t.is(replyLines(admin[2]!)[0]?.error?.code, 'busy', 'the admin socket has a cap too');
    t.false(admin[0]!.closed || admin[1]!.closed);
    backend[0]!.socket.write('{"v":"svc/1","id":1,"cmd":"CAPS"}\n');
    await until('a reply on an admitted backend connection', () => replyLines(backend[0]!).length === 1);
    t.is(replyLines(backend[0]!)[0]!.ok, true);
  } finally {
    for (const h of opened) h.socket.destroy(); // svcd's shutdown would wait for them
  }
});

test.serial('deep nesting: 50,000 deep on HTTP (incl. /mcp) is 400, 60,000 deep on svc/1 an error frame', async (t) => {
  const logFrom = s.stdout.length;
  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const call = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"x":';
  const mcp = `${call}${deep(50_000)}}}}`;
  const bodies: [string, string][] = [
    ['/mcp', mcp],
    ['/api/v1/quotes/get-pulse', `{"machine_id":"m","x":${deep(50_000)}}`],
    ['/api/v1/sandbox/quotes/get-pulse', `{"machine_id":"m","x":${deep(50_000)}}`],
  ];
  for (const [path, body] of bodies) {
    const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const j = await r.json() as { ok: boolean; error: { code: string; message: string; source: string } };
    t.is(r.status, 400, path);
    t.deepEqual([j.ok, j.error.code, j.error.source], [false, 'invalid_request', 'api'], path);
    t.regex(j.error.message, /deeper than 64 levels/, path);
  }
  const h = await edgeTls('127.0.0.1');
  h.socket.write(`{"v":"svc/1","id":7,"cmd":"QUOTE","args":{"service":"get-pulse","x":${deep(60_000)}}}\n`);
  h.socket.write('{"v":"svc/1","id":8,"cmd":"CAPS"}\n');
  await until('two replies', () => replyLines(h).length === 2);
  const [first, second] = [replyLines(h).find((l) => l.id === 7), replyLines(h).find((l) => l.id === 8)];
  t.deepEqual([first?.ok, first?.error?.code], [false, 'invalid_request'], 'answered with its own id');
  t.regex(first?.error?.message ?? '', /deeper than 64 levels/);
  t.is(second?.ok, true, 'the connection stays usable');
  h.socket.destroy();
  await stillServed(t);
  t.deepEqual(errorLogs(logFrom), [], 'nothing logged at error level');
});

test.serial('HTTP: what Node rejects before Koa is an ApiError (malformed, extra bytes, timeouts)', async (t) => {
  const exchange = async (raw: string) => {
    const h = await tcp(httpPort, '127.0.0.1');
    h.socket.write(raw);
    await until('closed by the server', () => h.closed);
    return responses(h.data);
  };
  const garbage = await exchange('NOT HTTP AT ALL\r\n\r\n');
  t.like(garbage, [{ status: 400, body: { ok: false, error: { code: 'invalid_request', source: 'api' } } }]);
  t.regex(garbage[0]!.body.request_id, /^[0-9a-f-]{36}$/);
  // a body longer than its Content-Length: the extra bytes are parsed as the next request, and
  // Node's parser meets them before the first request is answered: a 400 and the door
  const past = await exchange('POST /api/v1/sandbox/quotes/get-pulse HTTP/1.1\r\nHost: x\r\n'
    + 'content-type: application/json\r\ncontent-length: 2\r\n\r\n{}{"machine_id":"smuggled"}');
  t.true(past.length >= 1, 'answered');
  t.true(past.every((r) => r.status === 400 && r.body.error.code === 'invalid_request'), JSON.stringify(past));
  t.regex(past.at(-1)!.body.error.message, /malformed HTTP request/);
  t.notRegex(JSON.stringify(past), /smuggled/);
  const silent = await exchange('');
  t.like(silent, [{ status: 408, body: { ok: false, error: { code: 'request_timeout', source: 'api' } } }],
    'no request at all: closed by the headers timeout');
  // HTTP/1.1 without Host (RFC 9112 §3.2: a 400): Node answered that itself, with an empty body
  const hostless = await exchange('GET /api/v1/health HTTP/1.1\r\nConnection: close\r\n\r\n');
  t.like(hostless, [{ status: 400, body: { ok: false, error: { code: 'invalid_request', source: 'api' } } }]);
  t.regex(hostless[0]!.body.error.message, /Host/);
  const old = await exchange('GET /api/v1/health HTTP/1.0\r\n\r\n');
  t.like(old, [{ status: 200, body: { ok: true } }], 'HTTP/1.0 has no Host to require');
  const slowHeaders = await exchange('GET /api/v1/health HTTP/1.1\r\nHost: x\r\n');
  t.like(slowHeaders, [{ status: 408, body: { error: { code: 'request_timeout' } } }], 'headers never finished');
});
