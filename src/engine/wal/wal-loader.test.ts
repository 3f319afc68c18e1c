import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { recordsForLoad } from './wal-loader.js';

test("a load's records: a prefix, never empty, within max and within the engine's room when the first record fits it, and no record more would fit", () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 1, max: 5_000 }), { minLength: 1, maxLength: 60 }),
      fc.integer({ min: 1, max: 60_000 }),
      fc.oneof(fc.integer({ min: 0, max: 130_000 }), fc.constant(Infinity)),
      (counts, max, room) => {
        const records = counts.map((count, i) => ({ count, i }));
        const kept = recordsForLoad(records, max, room);
        assert.ok(kept.length >= 1);
        assert.deepEqual(kept, records.slice(0, kept.length), 'a prefix, in order');
        const events = kept.reduce((n, r) => n + r.count, 0);
        const limit = records[0]!.count <= room ? Math.min(max, room) : max;
        if (kept.length > 1) assert.ok(events <= limit, `${events} events within ${limit}`);
        const next = records[kept.length];
        if (next) assert.ok(events + next.count > limit, 'the next record would not fit');
      },
    ),
  );
});

test('a first record bigger than the room: a full load (the engine seals its unit first); one that fits: the room bounds the load', () => {
  const records = Array.from({ length: 60 }, () => ({ count: 1_000 }));
  assert.equal(recordsForLoad(records, 50_000, 500).length, 50);
  assert.equal(recordsForLoad(records, 50_000, 2_880).length, 2);
  assert.equal(recordsForLoad(records, 50_000, Infinity).length, 50);
  assert.equal(recordsForLoad([{ count: 80_000 }, { count: 1 }], 50_000, Infinity).length, 1, 'one record bigger than max is a load of its own');
});
