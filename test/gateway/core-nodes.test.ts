// The gateway's calls over several core nodes (src/gateway/core-call.ts svc1Caller, SVC_CORE_NODES):
// which calls go to another node when one fails, on real sockets. The nodes here are svc/1 endpoints
// that fail on purpose — one answers every request, one drops the connection as soon as a request line
// arrives (a node that died with the call sent: outcome unknown), one reads and never answers (a node
// that hangs with its connections open), one port has no listener (the call never left). A real core
// cannot be made to die between reading a line and answering it on demand; the cluster tests
// (test/cluster/) kill real nodes under load, and the last test here stops a real `svcd core` (SIGSTOP).
import test from 'ava';
import { randomInt } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { ConnectionError } from '../../src/client/client.ts';
import { byAffinity, coreNodes, replaySafe, svc1Caller } from '../../src/gateway/core-nodes.ts';
import { CoreError, toHttpError } from '../../src/gateway/http-errors.ts';
import { api, describe } from '../support/cluster.ts';
import { Svcd, fundMachine } from '../support/svcd.ts';
import { until } from '../support/until.ts';

interface Node { port: number; lines: string[]; server: Server }

/**
 * A svc/1 endpoint: `answer` replies ok with its name; `drop` closes the connection on the first line it
 * reads; `hang` reads every line and answers none; `slow` answers HEALTH at once and everything else
 * after SLOW_MS (a live node running one long call).
 */
type Kind = 'answer' | 'drop' | 'hang' | 'slow';
const SLOW_MS = 1000;
async function node(t: import('ava').ExecutionContext, kind: Kind, port = 0, host = '127.0.0.1'): Promise<Node> {
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
        if (kind === 'hang') continue;
        const { id, cmd } = JSON.parse(line) as { id: number; cmd: string };
        const reply = () => socket.write(`${JSON.stringify({ id, ok: true, result: { node: kind, cmd } })}\n`);
        if (kind === 'slow' && cmd !== 'HEALTH') setTimeout(reply, SLOW_MS);
        else reply();
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(port, host, () => r()));
  t.teardown(() => new Promise<void>((r) => {
    server.close(() => r());
    for (const s of sockets) s.destroy();
  }));
  return { port: (server.address() as { port: number }).port, lines, server };
}

const tcp = (port: number, host = '127.0.0.1') => ({ kind: 'tcp' as const, host, port });

/**
 * A loopback address of its own (Linux answers all of 127/8) and a port nothing listens on there: a node
 * that is down. Not 127.0.0.1, where the other tests' servers and clients take ephemeral ports, one of
 * which could land on this one between choosing it and using it.
 */
async function downNode(): Promise<{ host: string; port: number }> {
  const host = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, host, () => r()));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((r) => { probe.close(() => r()); });
  return { host, port };
}
/** The calls a node read, and the HEALTH probes the caller's connections sent it of their own. */
const calls = (n: Node) => n.lines.filter((l) => !l.includes('"cmd":"HEALTH"')).length;
const probes = (n: Node) => n.lines.length - calls(n);
const accept = { quote_id: 'q_x', machine_id: 'm' };

/**
 * A machine_id whose calls go first to the node at `port` of `ports` (a machine's token commands go to
 * the node its affinity names, byAffinity, whatever the order of the list).
 */
function machineOn(port: number, ports: number[]): string {
  const nodes = ports.map((p) => ({ name: `127.0.0.1:${p}` }));
  for (let i = 0; ; i++) if (byAffinity(nodes, `m:m${i}`)[0]!.name === `127.0.0.1:${port}`) return `m${i}`;
}

test('outcome unknown: a money command without an idempotency key is not sent again: 502 edge_unavailable',
  async (t) => {
  const dying = await node(t, 'drop');
  const live = await node(t, 'answer');
  const core = svc1Caller([tcp(dying.port), tcp(live.port)]);
  t.teardown(() => core.close());
  // the machine's calls go to the node that dies
  const machine_id = machineOn(dying.port, [dying.port, live.port]);
  const e = await t.throwsAsync(core.call('ACCEPT_QUOTE', { ...accept, machine_id }, { token: 't' }));
  t.true(e instanceof ConnectionError && e.sent, String(e));
  t.is(dying.lines.length, 1, 'it reached the node that died');
  t.is(live.lines.length, 0, 'and was not sent to the other');
  const http = toHttpError(e, 'r1');
  t.deepEqual([http.status, http.body.error.code, http.body.error.source], [502, 'edge_unavailable', 'svc']);
  t.regex(http.body.error.message, /outcome is unknown/);
});

test('outcome unknown: a keyed money command, a free one and a read go to the next node', async (t) => {
  for (const [cmd, args] of [
    ['ACCEPT_QUOTE', { ...accept, idempotency_key: 'k1' }], ['HEALTH', {}], ['QUOTE', { service: 'get-pulse' }],
    ['BALANCE', { machine_id: 'm' }], ['INVOICE_STATUS', { invoice_id: 'inv_x', machine_id: 'm' }],
  ] as const) {
    const dying = await node(t, 'drop');
    const live = await node(t, 'answer');
    const core = svc1Caller([tcp(dying.port), tcp(live.port)]);
    t.teardown(() => core.close());
    const machine = 'machine_id' in args ? { machine_id: machineOn(dying.port, [dying.port, live.port]) } : {};
    t.deepEqual(await core.call(cmd, { ...args, ...machine }), { node: 'answer', cmd }, cmd);
    t.deepEqual([dying.lines.length, live.lines.length], [1, 1], `${cmd}: sent to both, answered once`);
  }
  t.true(replaySafe('VERIFY_RECEIPT', {}));
  for (const cmd of ['ACCEPT_QUOTE', 'FUND_ACCOUNT', 'GET_PULSE', 'ATTEST_EVENT', 'SETTLE_INVOICE']) {
    t.false(replaySafe(cmd, {}), cmd);
  }
});

test('a call that could not be sent goes to the next node; the down node is tried again once it is back', async (t) => {
  const { host, port } = await downNode(); // nothing listens there yet
  const live = await node(t, 'answer');
  const states: string[] = [];
  const core = svc1Caller([tcp(port, host), tcp(live.port)], {
    backoff: { baseMs: 20, maxMs: 200 }, onNodeState: (e) => states.push(`${e.node} ${e.state}`),
  });
  t.teardown(() => core.close());
  // not sent anywhere it could take effect: a money command without a key goes on too
  for (let i = 0; i < 6; i++) {
    t.deepEqual(await core.call('GET_PULSE', { quote_id: 'q' }), { node: 'answer', cmd: 'GET_PULSE' });
  }
  t.is(live.lines.length, 6);
  const back = await node(t, 'answer', port, host);
  await until('the node that came back gets calls', async () => {
    await core.call('HEALTH', {});
    return back.lines.length > 0;
  }, { every: 50 });
  t.is(states[0], `${host}:${port} down`);
  t.is(states[states.length - 1], `${host}:${port} up`, 'told when it is back');
  t.false(states.includes(`127.0.0.1:${live.port} down`));
  // both live again: calls one after another alternate
  const before = [back.lines.length, live.lines.length];
  for (let i = 0; i < 4; i++) await core.call('HEALTH', {});
  t.deepEqual([back.lines.length - before[0]!, live.lines.length - before[1]!], [2, 2]);
});

test('a node that reads and never answers: after the reply timeout it is down, its free and keyed calls go on, '
  + 'an unkeyed money call is 502; calls meanwhile go to the live node at once', async (t) => {
  const hung = await node(t, 'hang');
  const live = await node(t, 'answer');
  const states: string[] = [];
  const core = svc1Caller([tcp(hung.port), tcp(live.port)], {
    replyTimeoutMs: 300, backoff: { baseMs: 60_000, maxMs: 60_000 },
    onNodeState: (e) => states.push(`${e.node} ${e.state}`),
  });
  t.teardown(() => core.close());
  // the machine's calls go to the hung node
  const t0 = Date.now();
  const machine_id = machineOn(hung.port, [hung.port, live.port]);
  const unkeyed = core.call('ACCEPT_QUOTE', { ...accept, machine_id }, { token: 't' })
    .then(() => null, (e: unknown) => e);
  const e = await unkeyed;
  const waited = Date.now() - t0;
  t.true(e instanceof ConnectionError && e.sent, String(e));
  t.regex((e as Error).message, /no reply in 300 ms/);
  t.true(waited >= 300, `failed after ${waited} ms, not before the timeout`);
  t.deepEqual(toHttpError(e, 'r').status, 502);
  t.deepEqual([calls(hung), calls(live)], [1, 0], 'sent to the hung node only');
  t.is(probes(hung), 1, 'asked HEALTH after half the timeout, unanswered');
  t.deepEqual(states, [`127.0.0.1:${hung.port} down`]);
  // down: every call goes to the live node now, without waiting
  for (const [cmd, args] of [['HEALTH', {}], ['ACCEPT_QUOTE', { ...accept, idempotency_key: 'k' }]] as const) {
    t.deepEqual(await core.call(cmd, { ...args }), { node: 'answer', cmd });
  }
  t.deepEqual([calls(hung), live.lines.length], [1, 2], 'both on the live node (one of them a HEALTH)');
});

test('a free call on a node that hangs goes on to the next node once the reply timeout has passed', async (t) => {
  const hung = await node(t, 'hang');
  const live = await node(t, 'answer');
  const core = svc1Caller([tcp(hung.port), tcp(live.port)], { replyTimeoutMs: 300 });
  t.teardown(() => core.close());
  t.deepEqual(await core.call('QUOTE', { service: 'get-pulse' }), { node: 'answer', cmd: 'QUOTE' });
  t.deepEqual([calls(hung), calls(live)], [1, 1], 'tried the hung node first, answered by the other');
});

test('a live node slow on one call is not cut: the connection asks it HEALTH meanwhile, and the call '
  + 'completes past the reply timeout', async (t) => {
  const slow = await node(t, 'slow');
  const states: string[] = [];
  const core = svc1Caller([tcp(slow.port)], { replyTimeoutMs: 300, onNodeState: (e) => states.push(e.state) });
  t.teardown(() => core.close());
  const t0 = Date.now();
  t.deepEqual(await core.call('BVM_EXEC', { quote_id: 'q' }), { node: 'slow', cmd: 'BVM_EXEC' });
  t.true(Date.now() - t0 >= SLOW_MS, 'answered after its full time, more than 3 reply timeouts');
  t.is(calls(slow), 1, 'sent once');
  t.true(probes(slow) >= 2, `asked how it is, and answered (${probes(slow)} probes)`);
  t.deepEqual(states, [], 'never marked down');
});

test('every node down: the call tries each once and fails not sent (edge unavailable, retry later)', async (t) => {
  const [a, b] = [await downNode(), await downNode()];
  const core = svc1Caller([tcp(a.port, a.host), tcp(b.port, b.host)]);
  t.teardown(() => core.close());
  const e = await t.throwsAsync(core.call('ACCEPT_QUOTE', accept));
  t.true(e instanceof ConnectionError && !e.sent, String(e));
  t.regex(toHttpError(e, 'r').body.error.message, /retry later/);
});

test('an error the core answered is the core\'s: not sent to another node', async (t) => {
  const refusing = createServer((socket) => {
    socket.on('data', (d: Buffer) => {
      const { id } = JSON.parse(d.toString('utf8').split('\n')[0]!) as { id: number };
      socket.write(`${JSON.stringify({ id, ok: false, error: { code: 'quote_not_issued', message: 'no' } })}\n`);
    });
  });
  await new Promise<void>((r) => refusing.listen(0, '127.0.0.1', () => r()));
  const { port } = refusing.address() as { port: number };
  t.teardown(() => new Promise<void>((r) => { refusing.close(() => r()); }));
  const live = await node(t, 'answer');
  const core = svc1Caller([tcp(port), tcp(live.port)]);
  t.teardown(() => core.close());
  const machine_id = machineOn(port, [port, live.port]);
  const e = await t.throwsAsync(core.call('ACCEPT_QUOTE', { ...accept, machine_id }));
  t.true(e instanceof CoreError && e.inner.code === 'quote_not_issued', String(e));
  t.is(live.lines.length, 0);
});

test('calls fill one connection up to `fill` in flight before a second opens; past every fill, the least busy',
  async (t) => {
    const n = await node(t, 'slow');
    let opened = 0;
    n.server.on('connection', () => { opened++; });
    const caller = svc1Caller(tcp(n.port), { connections: 3, fill: 2, replyTimeoutMs: 0 });
    t.teardown(() => caller.close());
    const burst = (k: number) => Promise.all(Array.from({ length: k }, () => caller.call('QUOTE', {})));
    await burst(2);
    t.is(opened, 1, 'two calls in flight fit on the first connection');
    await burst(5);
    t.is(opened, 3, 'five: the first two connections full, the fifth call on the third');
    await burst(7);
    t.is(opened, 3, 'never more than `connections`');
    t.is(calls(n), 14);
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

test('a real svcd core stopped with SIGSTOP behind a gateway: quotes go on from the other node, the gateway '
  + 'logs it down, and takes it back once it runs again', async (t) => {
  // two independent nodes (a free quote needs no shared state) and one `svcd gateway` over both
  const nodes = [new Svcd(), new Svcd()];
  const gateway = new Svcd();
  t.teardown(async () => {
    for (const n of nodes) n.proc?.kill('SIGCONT'); // a stopped process would not see SIGTERM
    await Promise.all([gateway, ...nodes].map(async (s) => { await s.stop(); s.cleanup(); }));
  });
  await Promise.all(nodes.map((n) => n.start(['core'])));
  const [a, b] = nodes.map((n) => `127.0.0.1:${n.backendPort}`);
  Object.assign(gateway.env, {
    SVC_CORE_NODES: `${a},${b}`, SVC_CORE_REPLY_TIMEOUT_MS: '1000', SVC_LOG_LEVEL: 'info', // 'up' is info
  });
  await gateway.start(['gateway']);
  const base = gateway.ready.http!;
  const quote = (i: number) => api(base, '/api/v1/quotes/get-pulse', { machine_id: `m-hang-${i}`, bits: 64 });
  for (let i = 0; i < 4; i++) t.is(describe(await quote(i)), '200', 'both nodes serve');

  nodes[0]!.proc!.kill('SIGSTOP');
  const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => quote(10 + i)));
  t.deepEqual(answers.map(describe), Array(8).fill('200'), 'every quote answered while node A hangs');
  await until('the gateway logs node A down', () => gateway.stdout.includes(`"node":"${a}","state":"down"`));
  t.false(gateway.stdout.includes(`"node":"${b}","state":"down"`));

  nodes[0]!.proc!.kill('SIGCONT');
  await until('node A is back in the rotation', async () => {
    t.is(describe(await quote(99)), '200');
    return gateway.stdout.includes(`"node":"${a}","state":"up"`);
  }, { every: 200 });
});

test('affinity: a machine\'s token calls and a client\'s sandbox calls go to one node from every gateway; a lost '
  + 'node moves only its own keys', async (t) => {
  const names = ['10.0.0.11:9444', '10.0.0.12:9444', '10.0.0.13:9444'].map((name) => ({ name }));
  const keys = Array.from({ length: 3000 }, (_, i) => `m:machine-${i}`);
  const pick = (nodes: { name: string }[], k: string) => byAffinity(nodes, k)[0]!.name;
  const share = new Map<string, number>();
  for (const k of keys) share.set(pick(names, k), (share.get(pick(names, k)) ?? 0) + 1);
  for (const [n, c] of share) t.true(c > 750 && c < 1250, `${n}: ${c} of 3000`);
  t.true(keys.every((k) => pick(names, k) === pick([...names].reverse(), k)), 'the list\'s order does not matter');
  const without = names.filter((n) => n.name !== '10.0.0.12:9444');
  const moved = keys.filter((k) => pick(names, k) !== pick(without, k));
  t.true(moved.every((k) => pick(names, k) === '10.0.0.12:9444'), 'only the lost node\'s keys move');

  // two gateways listing the same three nodes in another order: one machine, one node; one client's sandbox, one node
  const nodes = await Promise.all([node(t, 'answer'), node(t, 'answer'), node(t, 'answer')]);
  const g1 = svc1Caller(nodes.map((n) => tcp(n.port)));
  const g2 = svc1Caller(nodes.map((n) => tcp(n.port)).reverse());
  t.teardown(() => { g1.close(); g2.close(); });
  const reached = async (call: () => Promise<unknown>) => {
    const before = nodes.map(calls);
    await call();
    return nodes.findIndex((n, i) => calls(n) > before[i]!);
  };
  for (const m of ['alice', 'bob', 'carol']) {
    const on = new Set<number>();
    for (let i = 0; i < 4; i++) {
      on.add(await reached(() => (i % 2 ? g1 : g2).call('BALANCE', { machine_id: m }, { token: 't' })));
    }
    t.is(on.size, 1, `${m}'s calls all reach one node`);
  }
  const sandbox = new Set<number>();
  for (const cmd of ['SANDBOX_QUOTE', 'SANDBOX_ACCEPT', 'SANDBOX_EXECUTE', 'SANDBOX_VERIFY', 'SANDBOX_QUOTE']) {
    sandbox.add(await reached(() => (sandbox.size % 2 ? g1 : g2).call(cmd, {}, undefined, '203.0.113.7')));
  }
  t.is(sandbox.size, 1, 'one client\'s sandbox lives on one node');
  const free = new Set<number>();
  for (let i = 0; i < 6; i++) free.add(await reached(() => g1.call('QUOTE', {}, undefined, '203.0.113.7')));
  t.is(free.size, 3, 'calls without affinity go round the nodes');
});

test('a call read by a node after its gateway gave up (the node was stopped) is refused unrun: the accept never '
  + 'lands behind the 502', async (t) => {
  const node = new Svcd({ SVC_METRICS_PORT: '0' });
  const gateway = new Svcd();
  t.teardown(async () => {
    node.proc?.kill('SIGCONT');
    await Promise.all([gateway, node].map(async (s) => { await s.stop(); s.cleanup(); }));
  });
  await node.start(['core']);
  Object.assign(gateway.env, { SVC_CORE_NODES: `127.0.0.1:${node.backendPort}`, SVC_CORE_REPLY_TIMEOUT_MS: '1000' });
  await gateway.start(['gateway']);
  const base = gateway.ready.http!;
  const token = await fundMachine(node, 'm-deadline', 10);
  const q = await api(base, '/api/v1/quotes/get-pulse', { machine_id: 'm-deadline', bits: 64 });
  const quoteId = (q.body as { quote_id: string }).quote_id;

  node.proc!.kill('SIGSTOP');
  const accept = await api(base, `/api/v1/quotes/${quoteId}/accept`, { machine_id: 'm-deadline' }, token);
  t.is(describe(accept), '502 edge_unavailable', 'the gateway gave up on the stopped node');
  // stopped past the frame's deadline and its slack for clocks apart (a node back sooner may still run it)
  await new Promise((r) => setTimeout(r, 600));
  node.proc!.kill('SIGCONT');
  const refused = /^svc_commands_total\{command="ACCEPT_QUOTE",listener="backend",outcome="cancelled"\} (\d+)$/m;
  const metrics = async () => (await fetch(`http://${node.ready.metrics!}/metrics`)).text();
  const cancelled = async () => Number(refused.exec(await metrics())?.[1] ?? 0);
  await until('the node reads the accept and refuses it', async () => (await cancelled()) === 1);
  const balance = await api(base, '/api/v1/balance', { machine_id: 'm-deadline' }, token);
  t.like(balance.body, { reserved_units: '0' }, 'nothing was reserved: the accept did not run');
  // the client's retry runs it now
  t.is(describe(await api(base, `/api/v1/quotes/${quoteId}/accept`, { machine_id: 'm-deadline' }, token)), '200');
});
