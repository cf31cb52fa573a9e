// Connection admission (src/protocol/admission.ts) on emitters shaped like sockets: the per-address cap
// with its waiting queue (a burst is served as slots free, in order), refusals handed on marked so the
// protocol answers them, the bound on answers in progress (past it: dropped), uncapped proxies, the total.
import test from 'ava';
import { EventEmitter } from 'node:events';
import { Admission, refusalOf, type AdmissionLimits } from '../../src/protocol/admission.ts';

class FakeSocket extends EventEmitter {
  destroyed = false;
  constructor(readonly remoteAddress: string) { super(); }
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit('close');
  }
}

function harness(limits: Partial<AdmissionLimits> = {}) {
  const handled: FakeSocket[] = [];
  const a = new Admission({ total: 100, perAddress: 2, queueMs: 60_000, answering: 10, ...limits },
    (s) => handled.push(s as FakeSocket), 'test');
  const offer = (address: string) => {
    const s = new FakeSocket(address);
    a.offer(s);
    return s;
  };
  return { a, handled, offer };
}

test('admission: over its address\'s cap a connection waits, and takes the first slot that frees', (t) => {
  const { a, handled, offer } = harness();
  const [s1, s2, s3, s4] = ['10.0.0.1', '10.0.0.1', '10.0.0.1', '10.0.0.1'].map(offer);
  t.deepEqual(handled, [s1, s2], 'two admitted');
  t.is(a.waiting, 2);
  const other = offer('10.0.0.2');
  t.is(handled.at(-1), other, 'another address is not held up');
  s1!.destroy();
  t.is(handled.at(-1), s3, 'the oldest waiting one takes the slot');
  t.is(refusalOf(s3!), undefined, 'admitted, not refused');
  s4!.destroy();
  t.is(a.waiting, 0, 'one that gave up while waiting leaves the queue');
  s2!.destroy();
  t.false(handled.includes(s4!), 'and is never handed on');
});

test('admission: a connection that waited its time is handed on refused (address); so is one past the queue', (t) => {
  const { handled, offer } = harness({ queueMs: 0 });
  offer('10.0.0.1');
  offer('10.0.0.1');
  const over = offer('10.0.0.1');
  t.is(handled.at(-1), over);
  t.is(refusalOf(over), 'address');
  const timed = harness({ queueMs: 20, queuePerAddress: 1 });
  timed.offer('10.0.0.9');
  timed.offer('10.0.0.9');
  const waiting = timed.offer('10.0.0.9');
  const pastQueue = timed.offer('10.0.0.9');
  t.is(refusalOf(pastQueue), 'address', 'the queue holds one');
  return new Promise<void>((resolve) => setTimeout(() => {
    t.is(refusalOf(waiting), 'address', 'refused once its wait ran out');
    resolve();
  }, 60));
});

test('admission: refusals answered at once are bounded; past the bound they are dropped', (t) => {
  const { handled, offer } = harness({ queueMs: 0, answering: 2, perAddress: 1 });
  offer('10.0.0.1');
  const r1 = offer('10.0.0.1');
  const r2 = offer('10.0.0.1');
  const dropped = offer('10.0.0.1');
  t.deepEqual([refusalOf(r1), refusalOf(r2)], ['address', 'address']);
  t.true(dropped.destroyed, 'dropped unanswered');
  t.false(handled.includes(dropped));
  r1.destroy();
  const r3 = offer('10.0.0.1');
  t.is(refusalOf(r3), 'address', 'an answer finished frees its place');
});

test('admission: the total refuses with "total"; uncapped peers skip the per-address cap', (t) => {
  const { a, offer } = harness({ total: 3, perAddress: 1, uncapped: (x) => x === '192.0.2.1', queueMs: 0 });
  const p = [offer('192.0.2.1'), offer('192.0.2.1'), offer('192.0.2.1')];
  t.true(p.every((s) => refusalOf(s) === undefined), 'a proxy holds three');
  t.is(a.admitted, 3);
  t.is(refusalOf(offer('10.0.0.5')), 'total');
});

test('admission: IPv6 addresses share the cap of their /64', (t) => {
  const { offer } = harness({ queueMs: 0 });
  offer('2001:db8:1:2::1');
  offer('2001:db8:1:2::2');
  t.is(refusalOf(offer('2001:db8:1:2:ffff::3')), 'address');
  t.is(refusalOf(offer('2001:db8:1:3::1')), undefined);
});

test('admission: stopping admits what waits (the server\'s drain answers it) and queues nothing more', (t) => {
  const { a, handled, offer } = harness();
  offer('10.0.0.1');
  offer('10.0.0.1');
  const waiting = offer('10.0.0.1');
  a.stop();
  t.is(handled.at(-1), waiting);
  t.is(refusalOf(offer('10.0.0.1')), 'address', 'refused at once while stopping');
});
