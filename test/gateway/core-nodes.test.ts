// The gateway's calls over several core nodes (src/gateway/core-call.ts svc1Caller, SVC_CORE_NODES):
// which calls go to another node when one fails, on real sockets. The nodes here are svc/1 endpoints
// that fail on purpose — one answers every request, one drops the connection as soon as a request line
// arrives (a node that died with the call sent: outcome unknown), one port has no listener (the call
// never left). A real core cannot be made to die between reading a line and answering it on demand;
// the cluster tests (test/cluster/) kill real nodes under load.
import test from 'ava';
import { createServer, type Server } from 'node:net';
import { ConnectionError } from '../../src/client/client.ts';
import { coreNodes, replaySafe, svc1Caller } from '../../src/gateway/core-call.ts';
import { CoreError, toHttpError } from '../../src/gateway/http-errors.ts';
import { freePort } from '../support/cluster.ts';
import { until } from '../support/until.ts';

interface Node { port: number; lines: string[]; server: Server }

/** A svc/1 endpoint: `answer` replies ok with its name; `drop` closes the connection on the first line it reads. */
async function node(t: import('ava').ExecutionContext, kind: 'answer' | 'drop', port = 0): Promise<Node> {
  const lines: string[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buf = '';
    socket.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        lines.push(line);
        if (kind === 'drop') { socket.destroy(); return; }
        const { id, cmd } = JSON.parse(line) as { id: number; cmd: string };
        socket.write(`${JSON.stringify({ id, ok: true, result: { node: kind, cmd } })}\n`);
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => {
    server.close(() => r());
    for (const s of sockets) s.destroy();
  }));
  return { port: (server.address() as { port: number }).port, lines, server };
}

const tcp = (port: number) => ({ kind: 'tcp' as const, host: '127.0.0.1', port });
const accept = { quote_id: 'q_x', machine_id: 'm' };

test('outcome unknown: a money command without an idempotency key is not sent again: 502 edge_unavailable',
  async (t) => {
  const dying = await node(t, 'drop');
  const live = await node(t, 'answer');
  const core = svc1Caller([tcp(dying.port), tcp(live.port)]);
  t.teardown(() => core.close());
  // the first call of a fresh caller goes to the first node (none in flight anywhere: in turn)
  const e = await t.throwsAsync(core.call('ACCEPT_QUOTE', accept, { token: 't' }));
  t.true(e instanceof ConnectionError && e.sent, String(e));
  t.is(dying.lines.length, 1, 'it reached the node that died');
  t.is(live.lines.length, 0, 'and was not sent to the other');
  const http = toHttpError(e, 'r1');
  t.deepEqual([http.status, http.body.error.code, http.body.error.source], [502, 'edge_unavailable', 'svc']);
  t.regex(http.body.error.message, /outcome is unknown/);
});

test('outcome unknown: a keyed money command and a free one go to the next node', async (t) => {
  for (const [cmd, args] of [
    ['ACCEPT_QUOTE', { ...accept, idempotency_key: 'k1' }], ['HEALTH', {}], ['QUOTE', { service: 'get-pulse' }],
  ] as const) {
    const dying = await node(t, 'drop');
    const live = await node(t, 'answer');
    const core = svc1Caller([tcp(dying.port), tcp(live.port)]);
    t.teardown(() => core.close());
    t.deepEqual(await core.call(cmd, { ...args }), { node: 'answer', cmd }, cmd);
    t.deepEqual([dying.lines.length, live.lines.length], [1, 1], `${cmd}: sent to both, answered once`);
  }
  t.true(replaySafe('VERIFY_RECEIPT', {}));
  for (const cmd of ['ACCEPT_QUOTE', 'FUND_ACCOUNT', 'GET_PULSE', 'ATTEST_EVENT', 'BALANCE']) {
    t.false(replaySafe(cmd, {}), cmd);
  }
});

test('a call that could not be sent goes to the next node; the down node is tried again once it is back', async (t) => {
  const port = await freePort(); // nothing listens there yet
  const live = await node(t, 'answer');
  const states: string[] = [];
  const core = svc1Caller([tcp(port), tcp(live.port)], {
    backoff: { baseMs: 20, maxMs: 200 }, onNodeState: (e) => states.push(`${e.node} ${e.state}`),
  });
  t.teardown(() => core.close());
  // not sent anywhere it could take effect: a money command without a key goes on too
  for (let i = 0; i < 6; i++) {
    t.deepEqual(await core.call('GET_PULSE', { quote_id: 'q' }), { node: 'answer', cmd: 'GET_PULSE' });
  }
  t.is(live.lines.length, 6);
  const back = await node(t, 'answer', port);
  await until('the node that came back gets calls', async () => {
    await core.call('HEALTH', {});
    return back.lines.length > 0;
  }, { every: 50 });
  t.is(states[0], `127.0.0.1:${port} down`);
  t.is(states[states.length - 1], `127.0.0.1:${port} up`, 'told when it is back');
  t.false(states.includes(`127.0.0.1:${live.port} down`));
  // both live again: calls one after another alternate
  const before = [back.lines.length, live.lines.length];
  for (let i = 0; i < 4; i++) await core.call('HEALTH', {});
  t.deepEqual([back.lines.length - before[0]!, live.lines.length - before[1]!], [2, 2]);
});

test('every node down: the call tries each once and fails not sent (edge unavailable, retry later)', async (t) => {
  const [a, b] = [await freePort(), await freePort()];
  const core = svc1Caller([tcp(a), tcp(b)]);
  t.teardown(() => core.close());
  const e = await t.throwsAsync(core.call('ACCEPT_QUOTE', accept));
  t.true(e instanceof ConnectionError && !e.sent, String(e));
  t.regex(toHttpError(e, 'r').body.error.message, /retry later/);
});

test('an error the core answered is the core\'s: not sent to another node', async (t) => {
  const port = await freePort();
  const refusing = createServer((socket) => {
    socket.on('data', (d: Buffer) => {
      const { id } = JSON.parse(d.toString('utf8').split('\n')[0]!) as { id: number };
      socket.write(`${JSON.stringify({ id, ok: false, error: { code: 'quote_not_issued', message: 'no' } })}\n`);
    });
  });
  await new Promise<void>((r) => refusing.listen(port, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => { refusing.close(() => r()); }));
  const live = await node(t, 'answer');
  const core = svc1Caller([tcp(port), tcp(live.port)]);
  t.teardown(() => core.close());
  const e = await t.throwsAsync(core.call('ACCEPT_QUOTE', accept));
  t.true(e instanceof CoreError && e.inner.code === 'quote_not_issued', String(e));
  t.is(live.lines.length, 0);
});

test('SVC_CORE_NODES: HOST:PORT list; unset is this host\'s backend; bad entries are refused by name', (t) => {
  t.deepEqual(coreNodes(undefined, 9444), [tcp(9444)]);
  t.deepEqual(coreNodes(' ', 9444), [tcp(9444)]);
  t.deepEqual(coreNodes('127.0.0.1:7001, 127.0.0.1:7002', 9444), [tcp(7001), tcp(7002)]);
  t.deepEqual(coreNodes('[::1]:7001', 9444), [{ kind: 'tcp', host: '::1', port: 7001 }]);
  t.throws(() => coreNodes('127.0.0.1', 9444), { message: /SVC_CORE_NODES: "127.0.0.1" is not HOST:PORT/ });
  t.throws(() => coreNodes('127.0.0.1:70000', 9444), { message: /is not HOST:PORT/ });
  t.throws(() => coreNodes('127.0.0.1:7001,127.0.0.1:7001', 9444), { message: /listed twice/ });
});
