// Shared caps: a byte budget never grants past its limit and gets back what it granted; client
// addresses are counted per IPv4 address and per IPv6 /64; a per-address cap admits up to its cap.
import test from 'ava';
import { EventEmitter } from 'node:events';
import { AddressCounter, ByteBudget, addressKey, capConnections } from '../../src/protocol/budgets.ts';

test('ByteBudget grants up to its limit, refuses without taking, and gets back what it granted', (t) => {
  const b = new ByteBudget(100);
  t.true(b.tryTake(60));
  t.false(b.tryTake(41));
  t.is(b.used, 60, 'a refusal takes nothing');
  t.true(b.tryTake(40));
  b.release(100);
  t.is(b.used, 0);
});

test('addressKey: IPv4 and IPv4-mapped by address, IPv6 by /64 however it is written', (t) => {
  t.is(addressKey('203.0.113.9'), '203.0.113.9');
  t.is(addressKey('::ffff:203.0.113.9'), '203.0.113.9', 'the dual-stack edge sees IPv4 clients mapped');
  const same = ['2001:db8:1:2:3:4:5:6', '2001:0db8:0001:0002::9', '2001:DB8:1:2::', '2001:db8:1:2:ffff::1%eth0'];
  t.deepEqual(new Set(same.map(addressKey)), new Set(['2001:db8:1:2::/64']));
  t.is(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
  t.not(addressKey('2001:db8:1:3::1'), addressKey('2001:db8:1:2::1'), 'the next /64 is another client');
  t.is(addressKey('::1'), '0:0:0:0::/64');
});

test('AddressCounter admits up to its cap per address and forgets an address with no connection', (t) => {
  const c = new AddressCounter(2);
  t.true(c.admit('10.0.0.1'));
  t.true(c.admit('::ffff:10.0.0.1'));
  t.false(c.admit('10.0.0.1'), 'the third from one address');
  t.true(c.admit('10.0.0.2'), 'another address');
  c.release('10.0.0.1');
  t.true(c.admit('10.0.0.1'), 'a closed connection frees its place');
  for (const a of ['10.0.0.1', '10.0.0.1', '10.0.0.2']) c.release(a);
  t.is(c.size, 0);
});

test('capConnections: a peer over its address cap is destroyed; uncapped peers (our proxies) are not', (t) => {
  const server = new EventEmitter() as EventEmitter & { maxConnections: number };
  const perAddress = new AddressCounter(1);
  capConnections(server, 10, perAddress, (a) => a === '127.0.0.1');
  t.is(server.maxConnections, 10);
  const peer = (remoteAddress: string) => {
    const s = new EventEmitter() as EventEmitter & { remoteAddress: string; destroyed: boolean; destroy(): void };
    s.remoteAddress = remoteAddress;
    s.destroyed = false;
    s.destroy = () => { s.destroyed = true; };
    server.emit('connection', s);
    return s;
  };
  const first = peer('203.0.113.9');
  t.false(first.destroyed);
  t.true(peer('203.0.113.9').destroyed, 'the second connection from one client address');
  t.false(peer('127.0.0.1').destroyed);
  t.false(peer('127.0.0.1').destroyed, 'a listed proxy is counted only in the total');
  first.emit('close');
  t.false(peer('203.0.113.9').destroyed, 'a closed connection frees its slot');
});
