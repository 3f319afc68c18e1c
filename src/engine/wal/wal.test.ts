import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { checkSegment, header, listSegments, parseRecords, WriteAheadLog } from './wal.js';

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'ops-wal-'));
const body = (text: string) => Buffer.from(text);

/** Every record of every segment, in order. */
function readAll(dir: string) {
  return listSegments(dir).flatMap((name) => parseRecords(fs.readFileSync(path.join(dir, name))).records.map((r) => ({ ...r, text: r.body.toString() })));
}

test('concurrent appends are group-committed with contiguous seqs, in the order they arrived', async () => {
  const dir = tempDir();
  const { wal } = WriteAheadLog.open({ dir, segmentBytes: 1 << 20, loadedSeq: 0 });
  const durable: number[] = [];
  const ranges = await Promise.all(Array.from({ length: 50 }, (_, i) => wal.append(body(`r${i}`), i + 1, (r) => durable.push(r.firstSeq))));
  let next = 1;
  ranges.forEach((r, i) => {
    assert.deepEqual(r, { firstSeq: next, lastSeq: next + i });
    next += i + 1;
  });
  assert.deepEqual(durable, ranges.map((r) => r.firstSeq), 'the durable callbacks run in seq order');
  assert.equal(wal.position.lastSeq, next - 1);
  await wal.close();
  assert.deepEqual(readAll(dir).map((r) => [r.firstSeq, r.count, r.text]), ranges.map((r, i) => [r.firstSeq, i + 1, `r${i}`]));
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a torn tail is detected and cut at restart; the log continues after the last whole record', async () => {
  const dir = tempDir();
  let { wal } = WriteAheadLog.open({ dir, segmentBytes: 1 << 20, loadedSeq: 0 });
  await wal.append(body('one'), 2);
  await wal.append(body('two'), 3);
  await wal.close();
  const [segment] = listSegments(dir);
  const file = path.join(dir, segment!);
  const whole = fs.statSync(file).size;
  // A crash mid-write: half a record's header and body, then junk.
  fs.appendFileSync(file, Buffer.concat([fs.readFileSync(file).subarray(0, 30), Buffer.from('garbage')]));
  const reopened = WriteAheadLog.open({ dir, segmentBytes: 1 << 20, loadedSeq: 0 });
  wal = reopened.wal;
  assert.equal(reopened.recovery.cutBytes, 37);
  assert.equal(reopened.recovery.lastSeq, 5);
  assert.equal(fs.statSync(file).size, whole, 'the torn bytes are gone from the file');
  assert.deepEqual(await wal.append(body('three'), 1), { firstSeq: 6, lastSeq: 6 });
  await wal.close();
  assert.deepEqual(readAll(dir).map((r) => r.text), ['one', 'two', 'three']);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('damage before the last segment is refused, not silently cut (those events were acknowledged)', async () => {
  const dir = tempDir();
  const { wal } = WriteAheadLog.open({ dir, segmentBytes: 64, loadedSeq: 0 });
  for (let i = 0; i < 4; i++) await wal.append(body(`record number ${i} with some length`), 1);
  await wal.close();
  const segments = listSegments(dir);
  assert.ok(segments.length >= 3, `rolled into ${segments.length} segments`);
  const first = path.join(dir, segments[0]!);
  const bytes = fs.readFileSync(first);
  bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0xff;
  fs.writeFileSync(first, bytes);
  assert.throws(() => WriteAheadLog.open({ dir, segmentBytes: 64, loadedSeq: 0 }), /damaged at byte 0 \(not its tail\)/);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('segments roll past their size and are released once loaded, never the one being written', async () => {
  const dir = tempDir();
  const { wal } = WriteAheadLog.open({ dir, segmentBytes: 100, loadedSeq: 10 });
  for (let i = 0; i < 6; i++) assert.equal((await wal.append(body('x'.repeat(60)), 2)).firstSeq, 11 + 2 * i);
  const before = listSegments(dir).length;
  assert.ok(before >= 6);
  wal.release(14); // seqs 11..14: the first two segments
  assert.equal(listSegments(dir).length, before - 2);
  wal.release(1_000);
  assert.equal(listSegments(dir).length, 1, 'the active segment stays');
  await wal.close();
  const reopened = WriteAheadLog.open({ dir, segmentBytes: 100, loadedSeq: 22 });
  assert.equal(reopened.recovery.lastSeq, 22);
  assert.equal(reopened.wal.position.lastSeq, 22);
  await reopened.wal.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('property: cut anywhere or flip any byte, and exactly the whole records before the damage survive', () => {
  fc.assert(
    fc.property(fc.array(fc.uint8Array({ maxLength: 40 }), { minLength: 1, maxLength: 8 }), fc.nat(), fc.boolean(), (bodies, at, flip) => {
      let seq = 1;
      const frames = bodies.map((b) => {
        const bytes = Buffer.from(b);
        const frame = Buffer.concat([header(bytes, seq, 1), bytes]);
        seq++;
        return frame;
      });
      const log = Buffer.concat(frames);
      const damageAt = at % log.length;
      const damaged = flip ? Buffer.from(log) : log.subarray(0, damageAt);
      if (flip) damaged[damageAt] = damaged[damageAt]! ^ (1 + (at % 255));
      const { records, valid } = parseRecords(damaged);
      let end = 0;
      const expected: number[] = [];
      for (const [i, f] of frames.entries()) {
        if (end + f.length > damageAt) break;
        end += f.length;
        expected.push(i + 1);
      }
      assert.deepEqual(records.map((r) => r.firstSeq), expected);
      assert.equal(valid, end);
      records.forEach((r, i) => assert.deepEqual([...r.body], [...bodies[i]!]));
    }),
    { numRuns: 500 },
  );
});

test('property: a segment checked in windows of any size gives what parsing it whole gives (records longer than the window, torn tails, flipped bytes, seq gaps)', () => {
  const dir = tempDir();
  const file = path.join(dir, 'segment.wal');
  fc.assert(
    fc.property(
      fc.array(fc.record({ body: fc.uint8Array({ maxLength: 120 }), count: fc.integer({ min: 1, max: 3 }), gap: fc.nat({ max: 20 }) }), { maxLength: 10 }),
      fc.integer({ min: 1, max: 200 }),
      fc.nat(),
      fc.constantFrom('whole', 'cut', 'flip'),
      (records, window, at, damage) => {
        let seq = 7;
        // A gap of 0 most of the time; otherwise a record that does not continue the seqs.
        const frames = records.map((r) => {
          if (r.gap === 1) seq += 5;
          const bytes = Buffer.from(r.body);
          const frame = Buffer.concat([header(bytes, seq, r.count), bytes]);
          seq += r.count;
          return frame;
        });
        let log = Buffer.concat(frames);
        if (log.length && damage === 'cut') log = log.subarray(0, at % log.length);
        if (log.length && damage === 'flip') {
          log = Buffer.from(log);
          log[at % log.length] = log[at % log.length]! ^ (1 + (at % 255));
        }
        fs.writeFileSync(file, log);
        const whole = parseRecords(log);
        const last = whole.records[whole.records.length - 1];
        assert.deepEqual(checkSegment(file, window), {
          firstSeq: whole.records[0]?.firstSeq,
          lastSeq: last ? last.firstSeq + last.count - 1 : undefined,
          valid: whole.valid,
          size: log.length,
        });
      },
    ),
    { numRuns: 1000 },
  );
  fs.rmSync(dir, { recursive: true, force: true });
});

test('opening reads the segments in windows: records longer than the window and across its edges are kept, a torn tail is cut, damage before the tail refused', async () => {
  const dir = tempDir();
  const options = { dir, segmentBytes: 1 << 20, loadedSeq: 0, checkWindowBytes: 64 };
  let { wal } = WriteAheadLog.open(options);
  const texts = ['a'.repeat(10), 'b'.repeat(300), 'c'.repeat(50), 'd'.repeat(41), 'e'.repeat(1000), 'f'];
  for (const t of texts) await wal.append(body(t), 2);
  await wal.close();
  const file = path.join(dir, listSegments(dir)[0]!);
  const whole = fs.statSync(file).size;
  fs.appendFileSync(file, fs.readFileSync(file).subarray(0, 100)); // a torn write of a longer record
  const reopened = WriteAheadLog.open(options);
  assert.deepEqual(reopened.recovery, { cutBytes: 100, lastSeq: 12 });
  assert.equal(fs.statSync(file).size, whole);
  wal = reopened.wal;
  assert.deepEqual(await wal.append(body('g'), 1), { firstSeq: 13, lastSeq: 13 });
  await wal.close();
  assert.deepEqual(readAll(dir).map((r) => r.text), [...texts, 'g']);
  // A flipped byte inside the long record of the first segment: acknowledged events, refused.
  const bytes = fs.readFileSync(file);
  const inLong = bytes.indexOf('e'.repeat(1000)) + 500;
  bytes[inLong] = bytes[inLong]! ^ 0xff;
  fs.writeFileSync(file, bytes);
  const damagedAt = bytes.indexOf('e'.repeat(100)) - 24;
  assert.throws(() => WriteAheadLog.open(options), new RegExp(`damaged at byte ${damagedAt} \\(not its tail\\)`));
  fs.rmSync(dir, { recursive: true, force: true });
});
