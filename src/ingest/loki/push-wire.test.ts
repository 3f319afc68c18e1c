import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { decodeWithProtobufjs, withLabels } from './decode.js';
import { PushRequest } from './push-proto.js';
import { readPushRequest } from './push-wire.js';

/** What a call gives: its value, or the class and message of what it threw. */
function outcome<T>(run: () => T): { value: T } | { error: string } {
  try {
    return { value: run() };
  } catch (error) {
    return { error: `${(error as Error).constructor.name}: ${(error as Error).message}` };
  }
}

/** The reader's streams as decodeProtobufPush answers them (labels parsed), or what parsing the labels threw. */
const mapped = (streams: NonNullable<ReturnType<typeof readPushRequest>>) => outcome(() => withLabels(streams));

// Messages as Loki's clients build them, and beyond: int64 seconds of any size (negative too),
// any nanos, metadata and `parsed` pairs, missing fields, any text (not UTF-8 once encoded too).
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('', '{job="a"}', '{dataset="games", host="h"}', '{__proto__="x"}', '{}'));
const pair = fc.record({ name: text, value: text }, { requiredKeys: [] });
const seconds = fc.oneof(fc.integer({ min: 0, max: 2_000_000_000 }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String));
const entry = fc.record(
  {
    timestamp: fc.record({ seconds, nanos: fc.oneof(fc.integer({ min: 0, max: 999_999_999 }), fc.integer()) }, { requiredKeys: [] }),
    line: text,
    structuredMetadata: fc.array(pair, { maxLength: 3 }),
    parsed: fc.array(pair, { maxLength: 2 }),
  },
  { requiredKeys: [] },
);
const push = fc.record({ streams: fc.array(fc.record({ labels: text, entries: fc.array(entry, { maxLength: 5 }), hash: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String) }, { requiredKeys: [] }), { maxLength: 3 }) });
const encoded = push.map((value) => Buffer.from(PushRequest.encode(PushRequest.fromObject(value)).finish()));

/** Fields of numbers Loki's message does not have, of every wire type, appended to a message's bytes. */
const unknownField = fc.record({ field: fc.integer({ min: 5, max: 40 }), wireType: fc.constantFrom(0, 1, 2, 5) }).map(({ field, wireType }) => {
  const writer = protobuf.Writer.create().uint32((field << 3) | wireType);
  if (wireType === 0) writer.uint64(123_456_789);
  else if (wireType === 1) writer.fixed64(1);
  else if (wireType === 2) writer.bytes(Buffer.from('ab'));
  else writer.fixed32(7);
  return Buffer.from(writer.finish());
});

describe('the PushRequest reader gives what protobufjs gave, or leaves the body to it', () => {
  test('any message, with fields it does not know, and bytes cut or changed anywhere', () => {
    fc.assert(
      fc.property(encoded, fc.option(unknownField, { nil: undefined }), fc.array(fc.record({ at: fc.nat(), byte: fc.nat(255) }), { maxLength: 3 }), fc.option(fc.nat(), { nil: undefined }), (bytes, extra, changes, cut) => {
        let raw = extra ? Buffer.concat([extra, bytes]) : Buffer.from(bytes);
        for (const { at, byte } of changes) if (raw.length) raw[at % raw.length] = byte;
        if (cut !== undefined && raw.length) raw = raw.subarray(0, cut % raw.length);
        const read = readPushRequest(raw, 10_000);
        const before = outcome(() => decodeWithProtobufjs(raw));
        // Taken by the reader: exactly protobufjs's answer (its streams, or its label error).
        if (read) assert.deepEqual(mapped(read), before);
      }),
      { numRuns: 3_000 },
    );
  });

  test('reads every well-formed message a client sends (protobufjs is the exception, not the rule)', () => {
    fc.assert(
      fc.property(encoded, (raw) => {
        const read = readPushRequest(raw, 10_000);
        const before = outcome(() => decodeWithProtobufjs(raw));
        const message = PushRequest.toObject(PushRequest.decode(raw), { longs: String }) as { streams?: Array<{ entries?: Array<{ timestamp?: { seconds?: string; nanos?: number } }> }> };
        // Seconds past 35 bits or negative, and negative nanos, are left to protobufjs.
        const plain = (message.streams ?? []).every((s) => (s.entries ?? []).every((e) => !e.timestamp || ((e.timestamp.nanos ?? 0) >= 0 && /^\d{1,10}$/.test(e.timestamp.seconds ?? '0') && Number(e.timestamp.seconds ?? 0) < 2 ** 35)));
        if (plain) assert.ok(read, 'a well-formed message was left to protobufjs');
        if (read) assert.deepEqual(mapped(read), before);
      }),
      { numRuns: 2_000 },
    );
  });

  test('past the entry limit it leaves the body to protobufjs (which refuses it)', () => {
    const raw = Buffer.from(PushRequest.encode(PushRequest.fromObject({ streams: [{ labels: '{a="b"}', entries: Array.from({ length: 4 }, () => ({ line: 'x' })) }] })).finish());
    assert.equal(readPushRequest(raw, 3), undefined);
    assert.equal(readPushRequest(raw, 4)?.[0]?.entries.length, 4);
  });
});
