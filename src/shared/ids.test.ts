import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isUuid, newEventId } from './ids.js';

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
