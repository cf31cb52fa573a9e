// serveConnection in-process over a real loopback socket with the real Core (in a temp dir, its
// handle() counted), where the server side can be observed: replies a peer does not read stop the
// reading of its requests (what the server holds is bounded by its write buffer, not by what the peer
// sends), and reading resumes on drain.
import test from 'ava';
import { connect, createServer, type Socket } from 'node:net';
import { pino } from 'pino';
import { serveConnection } from '../../src/edge/connection.ts';
import { openCore } from '../support/core-fixture.ts';
import { until } from '../support/until.ts';

test('a peer that reads no replies stops being read; once it reads, every request is answered', async (t) => {
  // the real core, its handle() wrapped to count what the connection dispatched; CAPS replies are
  // about 7 kB each, and the rate limit is not what is under test here
  const core = await openCore(t, { SVC_RATE_PUBLIC_LOW: '1000000/60' });
  let handled = 0;
  const handle = core.handle.bind(core);
  core.handle = (...args) => { handled++; return handle(...args); };
  let served: Socket | null = null;
  const server = createServer((sock) => {
    served = sock;
    serveConnection(sock, core, {
      listener: 'edge',
      maxInFlight: 8,
      idleTimeoutMs: 60_000,
      lineTimeoutMs: 60_000,
      lineBudget: null,
      log: pino({ level: 'silent' }),
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client = connect({ host: '127.0.0.1', port: (server.address() as { port: number }).port });
  t.teardown(() => { client.destroy(); server.close(); });
  client.pause(); // read nothing
  const n = 5000; // 35 MB of replies: more than the kernel's socket buffers hold
  const requests = Array.from({ length: n }, (_, i) => JSON.stringify({ v: 'svc/1', id: i, cmd: 'CAPS' }));
  client.write(requests.join('\n') + '\n');
  await until('the server stopped reading', () => served !== null && served.isPaused() && served.writableNeedDrain);
  t.true(handled < n / 2, `${handled} of ${n} requests dispatched while the peer read nothing`);

  let text = '';
  client.setEncoding('utf8');
  client.on('data', (d: string) => { text += d; });
  client.resume();
  await until('every reply', () => text.split('\n').length > n);
  const replies = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: number; ok: boolean });
  t.is(new Set(replies.map((r) => r.id)).size, n, 'each request answered once, after the peer began to read');
  t.true(replies.every((r) => r.ok), 'every reply is the core\'s CAPS result');
  t.true(text.length > 16e6, `${text.length} bytes of replies: more than socket buffers hold`);
  t.is(handled, n);
});
