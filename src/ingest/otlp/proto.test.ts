import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import generatedRoot from '@opentelemetry/otlp-transformer/build/src/generated/root.js';
import { decodeProtobufRequest, walkOtlpRequest } from './proto.js';
import { BadData, TooManyValues } from './any-value.js';

type Codec = { decode: (r: unknown, l?: number) => unknown; encode: (m: object) => { finish(): Uint8Array }; fromObject: (o: object) => object };
const otel = (generatedRoot as unknown as { opentelemetry: { proto: Record<string, Record<string, Record<string, Codec>> & { logs: { v1: Record<string, Codec> } }> } }).opentelemetry.proto;
const Request = (otel.collector as unknown as { logs: { v1: Record<string, Codec> } }).logs.v1.ExportLogsServiceRequest!;
const namespaces = [otel.common!.v1!, otel.resource!.v1!, otel.logs!.v1!, (otel.collector as unknown as { logs: { v1: Record<string, Codec> } }).logs.v1];

/**
 * What the generated decoders do with a body: how many messages they decode, how many are log
 * records, and how deep they nest — counted by wrapping them here, in this test only.
 */
function decodedCounts(body: Uint8Array): { messages: number; records: number; depth: number } {
  const count = { messages: 0, records: 0, depth: 0 };
  let depth = 0;
  const originals: Array<[Codec, Codec['decode']]> = [];
  for (const ns of namespaces) {
    for (const [name, type] of Object.entries(ns)) {
      if (typeof type?.decode !== 'function') continue;
      const decode = type.decode;
      originals.push([type, decode]);
      type.decode = function (this: unknown, ...args: [unknown, number?]) {
        count.messages++;
        if (name === 'LogRecord') count.records++;
        count.depth = Math.max(count.depth, ++depth);
        try {
          return decode.apply(this, args);
        } finally {
          depth--;
        }
      };
    }
  }
  try {
    Request.decode(body);
  } finally {
    for (const [type, decode] of originals) type.decode = decode;
  }
  return count;
}

const anyValue: fc.Memo<object> = fc.memo((n) =>
  n <= 1
    ? fc.oneof(fc.record({ stringValue: fc.string({ maxLength: 8 }) }), fc.record({ intValue: fc.integer() }), fc.record({ boolValue: fc.boolean() }), fc.constant({}))
    : fc.oneof(
        fc.record({ stringValue: fc.string({ maxLength: 8 }) }),
        fc.record({ arrayValue: fc.record({ values: fc.array(anyValue(n - 1), { maxLength: 3 }) }) }),
        fc.record({ kvlistValue: fc.record({ values: fc.array(fc.record({ key: fc.string({ maxLength: 4 }), value: anyValue(n - 1) }), { maxLength: 3 }) }) }),
      ),
);
const keyValues = fc.array(fc.record({ key: fc.string({ maxLength: 4 }), value: anyValue(3) }), { maxLength: 3 });
const request = fc.record({
  resourceLogs: fc.array(
    fc.record({
      resource: fc.option(fc.record({ attributes: keyValues, entityRefs: fc.array(fc.record({ type: fc.string({ maxLength: 4 }) }), { maxLength: 2 }) }), { nil: undefined }),
      scopeLogs: fc.array(
        fc.record({
          scope: fc.option(fc.record({ name: fc.string({ maxLength: 4 }), attributes: keyValues }), { nil: undefined }),
          logRecords: fc.array(fc.record({ body: fc.option(anyValue(4), { nil: undefined }), attributes: keyValues, severityText: fc.string({ maxLength: 4 }) }), { maxLength: 3 }),
        }),
        { maxLength: 2 },
      ),
    }),
    { maxLength: 2 },
  ),
});

test('the bounds walk counts the messages, records and depth the generated decoders decode (property)', () => {
  fc.assert(
    fc.property(request, (message) => {
      const body = Request.encode(Request.fromObject(message)).finish();
      assert.deepEqual(walkOtlpRequest(body, { messages: Infinity, records: Infinity, depth: Infinity }), decodedCounts(body));
    }),
    { numRuns: 300 },
  );
});

test('the walk refuses what the decoders would refuse, and bodies past the limits before decoding them', () => {
  const body = Request.encode(Request.fromObject({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'x' } }] }] }] })).finish();
  assert.throws(() => decodeProtobufRequest(body.subarray(0, body.length - 1)), BadData);
  assert.throws(() => walkOtlpRequest(body, { messages: 3, records: Infinity, depth: Infinity }), TooManyValues);
  assert.doesNotThrow(() => walkOtlpRequest(body, { messages: 5, records: 1, depth: 5 }));
  assert.throws(() => walkOtlpRequest(body, { messages: 5, records: 0, depth: 5 }), /log records/);
  assert.throws(() => decodeProtobufRequest(Uint8Array.from([0x0a, 0x05, 0x01])), BadData);
});
