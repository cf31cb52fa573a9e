// Shared caps: a byte budget never grants past its limit and gets back what it granted; an addressed
// budget also never lets one address hold more than its share; client addresses are counted per IPv4
// address and per IPv6 /64.
import test from 'ava';
import {
  AddressedBudget, ByteBudget, addressKey, type BudgetShare,
} from '../../src/protocol/budgets.ts';

test('ByteBudget grants up to its limit, refuses without taking, and gets back what it granted', (t) => {
  const b = new ByteBudget(100);
  t.true(b.tryTake(60));
  t.false(b.tryTake(41));
  t.is(b.used, 60, 'a refusal takes nothing');
  t.true(b.tryTake(40));
  b.release(100);
  t.is(b.used, 0);
});

test('AddressedBudget: one address holds at most its share, over any number of readers; others go on', (t) => {
  const b = new AddressedBudget(100, 30);
  const a1 = b.share('10.0.0.1'), a2 = b.share('::ffff:10.0.0.1'), other = b.share('10.0.0.2');
  t.true(a1.tryTake(20));
  t.false(a2.tryTake(11), 'the same address through another reader (IPv4-mapped): past its share');
  t.is(a2.refused, 'address');
  t.true(a2.tryTake(10));
  t.is(b.heldBy('10.0.0.1'), 30);
  t.true(other.tryTake(30));
  const third = b.share('10.0.0.3'), fourth = b.share('2001:db8::1');
  t.true(third.tryTake(30));
  t.false(fourth.tryTake(11), 'the total still binds');
  t.is(fourth.refused, 'total');
  t.is(b.total.used, 90, 'refusals take nothing');
  a1.release(1000); // more than it took: only what it took goes back
  t.is(b.heldBy('10.0.0.1'), 10);
  t.is(b.total.used, 70);
  t.true(a1.tryTake(20));
  t.is(a1.refused, null);
  for (const s of [a1, a2, other, third, fourth]) s.release(1 << 20);
  t.is(b.total.used, 0);
  t.is(b.addresses, 0, 'an address that holds nothing is forgotten');
  t.is(new AddressedBudget(10, 50).perAddress, 10, 'a share is never more than the whole');
});

test('AddressedBudget against a model: random readers of a few addresses take and release', (t) => {
  for (let run = 0; run < 200; run++) {
    const limit = 1 + Math.floor(Math.random() * 200), per = 1 + Math.floor(Math.random() * 120);
    const b = new AddressedBudget(limit, per);
    const share = Math.min(per, limit);
    const readers: { s: BudgetShare; addr: string; mine: number }[] = [];
    const byAddr = new Map<string, number>();
    let total = 0;
    for (let step = 0; step < 300; step++) {
      if (readers.length === 0 || Math.random() < 0.3) {
        const addr = `10.0.0.${Math.floor(Math.random() * 4)}`;
        readers.push({ s: b.share(addr), addr, mine: 0 });
        continue;
      }
      const r = readers[Math.floor(Math.random() * readers.length)]!;
      const n = Math.floor(Math.random() * 40);
      if (Math.random() < 0.6) {
        const held = byAddr.get(r.addr) ?? 0;
        const want = held + n <= share && total + n <= limit;
        t.is(r.s.tryTake(n), want);
        if (want) { r.mine += n; total += n; byAddr.set(r.addr, held + n); }
        else t.is(r.s.refused, held + n > share ? 'address' : 'total');
      } else {
        const back = Math.min(n, r.mine);
        r.s.release(n);
        r.mine -= back; total -= back; byAddr.set(r.addr, (byAddr.get(r.addr) ?? 0) - back);
      }
      if (b.total.used !== total) { t.is(b.total.used, total, `run ${run} step ${step}`); return; }
      for (const [a, h] of byAddr) if (b.heldBy(a) !== h) { t.is(b.heldBy(a), h, a); return; }
    }
  }
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


