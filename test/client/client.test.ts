// The client kit against a real svcd: pipelined replies matched by id, a dropped connection fails
// only the requests on it and the next request reconnects, and a restarted server is reached again.
import test from 'ava';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { Svcd } from '../support/svcd.ts';
import { SvcClient } from '../../src/client/client.ts';

test('pipelining: 200 requests in flight on one connection resolve to their own replies', async (t) => {
  const s = await Svcd.start();
  t.teardown(async () => { await s.stop(); s.cleanup(); });
  const c = await s.edge();
  const nonces = Array.from({ length: 200 }, (_, i) => `nonce-${String(i).padStart(4, '0')}`);
  const replies = await Promise.all(nonces.map((n) => c.request('HELLO', { nonce: n })));
  t.deepEqual(replies.map((r) => (r.edge_proof as any).statement.nonce), nonces);
  c.close();
  t.is(((await t.throwsAsync(c.request('CAPS'))) as Error).message, 'client closed');
});

test('close: a request still waiting for its reply is rejected, never left pending', async (t) => {
  // a real TCP peer that reads and never answers
  const sockets: Socket[] = [];
  let received!: () => void;
  const arrived = new Promise<void>((r) => { received = r; });
  const server = createServer((socket) => { sockets.push(socket.on('data', () => received())); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => {
    server.close(() => r());
    for (const s of sockets) s.destroy();
  }));
  const c = await SvcClient.connect({ kind: 'tcp', host: '127.0.0.1', port: (server.address() as AddressInfo).port });
  const waiting = c.request('CAPS');
  await arrived; // the request is on the wire: only its reply is missing
  c.close();
  t.is(((await t.throwsAsync(waiting)) as Error).message, 'client closed');
});

test('reconnect: after the server restarts, the same client reaches it again on the next request', async (t) => {
  const s = await Svcd.start();
  t.teardown(async () => { await s.stop(); s.cleanup(); });
  const c = await SvcClient.connect({
    kind: 'tls', host: '127.0.0.1', port: s.edgePort, pin: s.ready.edge_cert_sha256,
  });
  t.is((await c.request('CAPS')).capability_count, 21);
  await s.stop();
  const down = await t.throwsAsync(c.request('CAPS'));
  t.is(down!.name, 'ConnectionError');
  s.env.SVC_EDGE_PORT = String(s.edgePort); // come back on the same port, data dir and certificate
  await s.start();
  t.is((await c.request('CAPS')).capability_count, 21);
  t.true(c.reconnects >= 1);
  c.close();
});
