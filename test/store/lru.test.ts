// The store's read cache order (src/store/lru.ts) against a plain model: an array of keys from the least
// to the most recently used, on random sequences of get, peek, set and delete, at small capacities where
// evictions are frequent. And what the model cannot show: that the order is kept without the Map's own
// insertion order (a hit does not delete and re-insert).
import test from 'ava';
import fc from 'fast-check';
import { Lru } from '../../src/store/lru.ts';

type Step = { op: 'get' | 'peek' | 'delete'; key: number } | { op: 'set'; key: number; value: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constantFrom('get' as const, 'peek' as const, 'delete' as const), key: fc.nat(9) }),
  fc.record({ op: fc.constant('set' as const), key: fc.nat(9), value: fc.integer() }),
);

test('Lru keeps exactly the most recently used entries, in order, like a plain model', (t) => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 6 }), fc.array(step, { maxLength: 200 }), (capacity, steps) => {
    const lru = new Lru<number, number>(capacity);
    let order: number[] = []; // least → most recently used
    const values = new Map<number, number>();
    const touch = (k: number) => { order = [...order.filter((x) => x !== k), k]; };
    for (const s of steps) {
      if (s.op === 'set') {
        lru.set(s.key, s.value);
        values.set(s.key, s.value);
        touch(s.key);
        if (order.length > capacity) values.delete(order.shift()!);
      } else if (s.op === 'get') {
        if (lru.get(s.key) !== values.get(s.key)) return false;
        if (values.has(s.key)) touch(s.key);
      } else if (s.op === 'peek') {
        if (lru.peek(s.key) !== values.get(s.key)) return false;
      } else {
        if (lru.delete(s.key) !== values.has(s.key)) return false;
        values.delete(s.key);
        order = order.filter((x) => x !== s.key);
      }
      if (lru.size !== order.length || JSON.stringify([...lru.keys()]) !== JSON.stringify(order)) return false;
    }
    return true;
  }), { numRuns: 2000 });
  t.pass();
});

test('Lru: the oldest goes first, a get or a set makes a key the newest, a peek does not', (t) => {
  const lru = new Lru<string, number>(3);
  lru.set('a', 1);
  lru.set('b', 2);
  lru.set('c', 3);
  t.is(lru.get('a'), 1);
  t.is(lru.peek('b'), 2);
  lru.set('d', 4); // b is the least recently used: the peek did not count
  t.deepEqual([...lru.keys()], ['c', 'a', 'd']);
  lru.set('c', 30);
  lru.set('e', 5);
  t.deepEqual([...lru.keys()], ['d', 'c', 'e']);
  t.is(lru.get('a'), undefined);
  t.true(lru.delete('d'));
  t.false(lru.delete('d'));
  t.deepEqual([...lru.keys()], ['c', 'e']);
  t.throws(() => new Lru(0), { instanceOf: RangeError });
});
