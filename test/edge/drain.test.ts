// The svc/1 listeners' drain on a real core: every open connection gets a shutting_down notice (id
// null), a line read after it is answered shutting_down unrun, the connection closes once the peer has
// closed its side, and the listener is closed to new connections. The svc/1 client heeds the notice:
// its requests in flight are answered, and its next one goes to a new connection.
import test from 'ava';
import { pino } from 'pino';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { ConnectionError, SvcClient } from '../../src/client/client.ts';
import { startListeners } from '../../src/edge/servers.ts';
import { openCore } from '../support/core-fixture.ts';
import { frame } from '../support/raw-wire.ts';
import { until } from '../support/until.ts';

const ENV = {
  SVC_EDGE_PORT: '0', SVC_BACKEND_PORT: '0', SVC_EDGE_HOST: '127.0.0.1', SVC_KERNEL_THREADS: '1',
  SVC_LOG_LEVEL: 'silent',
};

interface Lines { socket: TLSSocket; lines: () => any[]; ended: () => boolean }

function open(port: number): Promise<Lines> {
  return new Promise((resolve, reject) => {
    let buf = '';
    let ended = false;
    const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['svc/1'] },
      () => resolve({
        socket, lines: () => buf.split('\n').filter(Boolean).map((l) => JSON.parse(l)), ended: () => ended,
      }));
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => { buf += d; });
    socket.on('end', () => { ended = true; });
    socket.on('close', () => { ended = true; });
    socket.once('error', reject);
  });
}

test('drain: a notice on every connection, later lines answered shutting_down unrun, closed once the peer '
  + 'closes; no new connection', async (t) => {
  const core = await openCore(t, ENV);
  const listeners = await startListeners(core, pino({ level: 'silent' }));
  const port = Number(listeners.addresses.edge.split(':').pop());
  const c = await open(port);
  c.socket.write(frame(1, 'HELLO'));
  await until('HELLO answered', () => c.lines().length === 1);

  const closing = listeners.close(10_000);
  await until('the notice', () => c.lines().length === 2);
  t.deepEqual([c.lines()[1].id, c.lines()[1].ok, c.lines()[1].error.code], [null, false, 'shutting_down']);
  c.socket.write(frame(2, 'QUOTE', { service: 'get-pulse', machine_id: 'm', bits: 64 }));
  await until('the late line answered', () => c.lines().length === 3);
  t.deepEqual([c.lines()[2].id, c.lines()[2].error.code], [2, 'shutting_down'], 'answered, not run');
  t.false(c.ended(), 'open while the client has not closed its side (nor been quiet 0.5 s)');
  c.socket.end();
  await until('closed once the peer closed its side', () => c.ended());
  t.deepEqual(await closing, { drained: 1, cut: 0 });
  await t.throwsAsync(open(port), { code: 'ECONNREFUSED' }, 'the listener is closed');
});

test('drain: a peer that ignores the notice is closed after a quiet half second; the svc/1 client heeds it',
  async (t) => {
    const core = await openCore(t, ENV);
    const listeners = await startListeners(core, pino({ level: 'silent' }));
    const port = Number(listeners.addresses.edge.split(':').pop());
    const deaf = await open(port);
    const client = await SvcClient.connect({ kind: 'tls', host: '127.0.0.1', port, insecure: true });
    t.is((await client.request('HELLO', {})).protocol, 'svc/1');
    const t0 = Date.now();
    const closing = listeners.close(10_000);
    await until('the deaf peer closed', () => deaf.ended());
    t.true(Date.now() - t0 >= 400, 'after the quiet half second');
    t.deepEqual(await closing, { drained: 2, cut: 0 });
    // the client closed its side on the notice; its next request opens a new connection, refused now
    const e = await t.throwsAsync(client.request('HELLO', {}), { instanceOf: ConnectionError });
    t.false(e.sent, 'refused before it was sent: safe to send elsewhere');
    client.close();
  });
