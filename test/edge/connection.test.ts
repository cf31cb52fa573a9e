// serveConnection in-process over a real loopback socket with a stub core, where the server side
// can be observed: replies a peer does not read stop the reading of its requests (what the server
// holds is bounded by its write buffer, not by what the peer sends), and reading resumes on drain.
import test from 'ava';
import { connect, createServer, type Socket } from 'node:net';
import { pino } from 'pino';
import type { Core } from '../../src/core/core.ts';
import { serveConnection } from '../../src/edge/connection.ts';
import { until } from '../support/until.ts';

test('a peer that reads no replies stops being read; once it reads, every request is answered', async (t) => {
  let handled = 0;
  const reply = { blob: 'x'.repeat(7000) }; // about a CAPS reply
  const core = { handle: async () => { handled++; return reply; } } as unknown as Core;
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
  const ids = text.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { id: number; ok: boolean }).id);
  t.is(new Set(ids).size, n, 'each request answered once, after the peer began to read');
  t.is(handled, n);
});
