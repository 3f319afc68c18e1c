import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isUuid, newEventId, newId, pooledRandom } from './ids.js';

test('server event ids are UUIDv7 (version 7, RFC 9562 variant) holding the millisecond they were made', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1_600_000_000_000, max: 2 ** 48 - 1 }), (ms) => {
      const id = newEventId(ms);
      assert.ok(isUuid(id), id);
      assert.equal(id[14], '7');
      assert.ok('89ab'.includes(id[19]!), id);
      assert.equal(parseInt(id.slice(0, 8) + id.slice(9, 13), 16), Math.max(ms, parseInt(id.slice(0, 8) + id.slice(9, 13), 16)));
    }),
  );
});

test('ids increase in the order they are made, within a millisecond, across milliseconds and when the clock steps back', () => {
  const start = 1_800_000_000_000;
  const times = [start, start, start, start + 1, start + 1, start - 5, start + 2, ...Array.from({ length: 10_000 }, () => start + 2)];
  const ids = times.map((t) => newEventId(t));
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!, `${ids[i - 1]} < ${ids[i]}`);
  assert.equal(new Set(ids).size, ids.length);
});

test('ULIDs drawn from the pooled random bytes: well formed, distinct, and the pool refills with fresh bytes', () => {
  const draws = Array.from({ length: 3 * 4096 }, () => pooledRandom());
  assert.ok(draws.every((x) => x >= 0 && x <= 1));
  const pools = [0, 1, 2].map((i) => draws.slice(i * 4096, (i + 1) * 4096).join());
  assert.equal(new Set(pools).size, 3, 'each refill draws new bytes');
  assert.equal(new Set(draws.map((x) => Math.round(x * 255))).size, 256);
  const ids = Array.from({ length: 2000 }, () => newId.token());
  for (const id of ids) assert.match(id, /^tok_[0-9A-HJKMNP-TV-Z]{26}$/);
  assert.equal(new Set(ids).size, ids.length);
});
