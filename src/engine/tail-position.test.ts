import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { advance, advanced, clampTo, copyPosition, covers, encodePosition, maxLogs, parsePosition, reaches, singleLog, type TailEvent, type TailPosition } from './tail-position.js';

const logId = fc.oneof(fc.constant(''), fc.stringMatching(/^[0-9a-f]{16}$/));
const seq = fc.integer({ min: 0, max: 1e15 - 1 });
const position: fc.Arbitrary<TailPosition> = fc.record({
  logs: fc.dictionary(logId, seq, { maxKeys: 8 }),
  since: fc.integer({ min: 0, max: 1e15 - 1 }),
});

test('a position survives its SSE id: parse(encode(p)) is p, for one log and for many', () => {
  fc.assert(
    fc.property(position, (p) => {
      const back = parsePosition(encodePosition(p));
      assert.ok(back, encodePosition(p));
      // The one form a position cannot keep: no log at all reads as its since alone.
      if (Object.keys(p.logs).length === 0) return;
      assert.deepEqual(back, { logs: { ...p.logs }, since: p.since });
    }),
  );
  assert.equal(encodePosition(singleLog(42)), '42', 'the single log keeps the plain seq clients had before');
  assert.deepEqual(parsePosition('42'), singleLog(42));
});

test('ids this service does not write are refused, whatever the text', () => {
  for (const bad of ['', 'abc', '-1', '1.5', '12~', '12~zz.1', '12~0123456789abcdef', '12~0123456789abcdef.x', '12~.1~.2', '1234567890123456', `0${'~.1'.repeat(2)}`]) {
    assert.equal(parsePosition(bad), undefined, bad);
  }
  const tooMany = `0${Array.from({ length: maxLogs + 1 }, (_, i) => `~${i.toString(16).padStart(16, '0')}.1`).join('')}`;
  assert.equal(parsePosition(tooMany), undefined);
  fc.assert(
    fc.property(fc.string({ maxLength: 60 }), (text) => {
      const p = parsePosition(text);
      // Whatever parses is a position that writes back to an equivalent id.
      if (p) assert.deepEqual(parsePosition(encodePosition(p)), p);
    }),
  );
});

test('delivering events in any interleaving of the logs, in seq order within each, covers each exactly once', () => {
  const streams = fc.array(fc.tuple(logId, fc.integer({ min: 1, max: 30 })), { minLength: 1, maxLength: 5 });
  fc.assert(
    fc.property(streams, fc.infiniteStream(fc.nat()), fc.integer({ min: 1, max: 7 }), (logs, choices, batch) => {
      const pending = new Map<string, TailEvent[]>();
      for (const [log, n] of logs) {
        const list = pending.get(log) ?? [];
        for (let i = 0; i < n; i++) list.push({ log, seq: list.length + 1, ingested_at: 1_000 + list.length });
        pending.set(log, list);
      }
      const all = [...pending.values()].flat();
      // A reader that started before any of them, resumed now and then from its own id.
      let cursor: TailPosition = { logs: {}, since: 0 };
      const delivered: TailEvent[] = [];
      const choice = choices[Symbol.iterator]();
      while ([...pending.values()].some((l) => l.length)) {
        const arrived: TailEvent[] = [];
        for (let k = 0; k < batch; k++) {
          const open = [...pending.values()].filter((l) => l.length);
          if (!open.length) break;
          arrived.push(open[choice.next().value! % open.length]!.shift()!);
        }
        const own = copyPosition(cursor);
        for (const e of arrived) {
          if (covers(own, e)) continue;
          advance(own, e);
          delivered.push(e);
        }
        assert.deepEqual(own, advanced(cursor, arrived));
        cursor = parsePosition(encodePosition(own)) ?? own;
        // Read again from the new position: nothing is delivered twice.
        for (const e of arrived) assert.ok(covers(cursor, e));
      }
      assert.equal(delivered.length, all.length);
    }),
  );
});

test('reaches: a reader at a has seen all a reader at b has; clampTo keeps a resume inside the single log', () => {
  fc.assert(
    fc.property(position, fc.array(fc.tuple(logId, seq), { maxLength: 5 }), (p, more) => {
      const later = advanced(p, more.map(([log, s]) => ({ log, seq: s, ingested_at: 0 })));
      // (advanced only moves forward: a seq below the position's leaves it.)
      assert.ok(reaches(later, p));
      assert.ok(reaches(p, p));
    }),
  );
  assert.ok(!reaches({ logs: { a: 5 }, since: 0 }, { logs: { a: 6 }, since: 0 }));
  assert.ok(!reaches({ logs: {}, since: 10 }, { logs: {}, since: 20 }), 'an earlier since waits for events the feed skips');
  assert.ok(!reaches({ logs: {}, since: 0 }, { logs: { b: 3 }, since: 0 }));
  assert.deepEqual(clampTo(singleLog(90), singleLog(40)), singleLog(40), 'an id past the end starts from the end');
  assert.deepEqual(clampTo(singleLog(10), singleLog(40)), singleLog(10));
  assert.deepEqual(clampTo({ logs: { b: 3 }, since: 7 }, singleLog(40)), { logs: { b: 3, '': 40 }, since: 7 }, 'a position without the single log starts at its end');
  // Many logs: another host's events may be handed out before this host sees them in ClickHouse.
  assert.deepEqual(clampTo({ logs: { a: 9, b: 3 }, since: 7 }, { logs: { a: 4 }, since: 100 }), { logs: { a: 9, b: 3 }, since: 7 });
});
