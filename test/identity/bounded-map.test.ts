import t from 'tap';
import { BoundedMap } from '../../src/identity/bounded-map.js';

const held = (memory: BoundedMap<number>, keys: string[]) => keys.filter((k) => memory.get(k) !== undefined);

t.test('holds at most its capacity and forgets the longest-held key first', async (t) => {
  const memory = new BoundedMap<number>(3);
  for (const [i, key] of ['a', 'b', 'c', 'd', 'e'].entries()) memory.set(key, i);
  t.equal(memory.size, 3);
  t.same(held(memory, ['a', 'b', 'c', 'd', 'e']), ['c', 'd', 'e']);
  t.equal(memory.get('e'), 4);
});

t.test('setting a held key again changes its value and keeps its place', async (t) => {
  const memory = new BoundedMap<number>(2);
  memory.set('a', 1);
  memory.set('b', 2);
  memory.set('a', 10);
  t.equal(memory.get('a'), 10);
  memory.set('c', 3);
  t.same(held(memory, ['a', 'b', 'c']), ['b', 'c'], 'a was still the longest held');
});

t.test('a deleted key frees nothing early and is forgotten when set again', async (t) => {
  const memory = new BoundedMap<number>(2);
  memory.set('a', 1);
  memory.set('b', 2);
  memory.delete('a');
  t.equal(memory.get('a'), undefined);
  memory.set('c', 3);
  t.same(held(memory, ['a', 'b', 'c']), ['b', 'c']);
  memory.set('a', 4);
  t.same(held(memory, ['a', 'b', 'c']), ['a', 'c']);
  t.equal(memory.size, 2);
});

t.test('stays bounded through a long rotation of new keys', async (t) => {
  const memory = new BoundedMap<number>(100);
  for (let i = 0; i < 10_000; i++) memory.set(`k${i}`, i);
  t.equal(memory.size, 100);
  t.same(held(memory, ['k9899', 'k9900', 'k9999']), ['k9900', 'k9999']);
});

t.test('refuses a capacity that could hold nothing', async (t) => {
  for (const capacity of [0, -1, 1.5, NaN]) t.throws(() => new BoundedMap(capacity), RangeError, String(capacity));
});
