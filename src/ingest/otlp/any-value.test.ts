import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { payloadShapeProblem } from '../core/limits.js';
import { anyValue, type Reading, type WireFormat } from './any-value.js';
import { decodeJson, decodeProtobuf } from './decode.js';
import { anyValueOf, AnyValueCodec, logsRequest, toProtobuf, type JsonValue } from '../../test-support/ingest/otlp-test-requests.js';

const reading = (format: WireFormat): Reading => ({ format, values: 0 });
const int64Range = { min: -(2n ** 63n), max: 2n ** 63n - 1n };
const maxSafe = BigInt(Number.MAX_SAFE_INTEGER);

/** Strings, finite numbers, booleans, null, arrays and objects of them: what JSON.stringify keeps as it is. */
function holdsOnlyJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(holdsOnlyJson);
  if (typeof value === 'object' && !(value instanceof Uint8Array)) return Object.values(value).every(holdsOnlyJson);
  return false;
}

/** OTLP/JSON AnyValues of every kind, as senders write them (int64 as string or number, doubles by name too). */
const otlpAnyValue = fc.letrec<{ value: Record<string, unknown> }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant({}),
    fc.string().map((stringValue) => ({ stringValue })),
    fc.boolean().map((boolValue) => ({ boolValue })),
    fc.bigInt(int64Range).map((n) => ({ intValue: n <= maxSafe && n >= -maxSafe && n % 2n === 0n ? Number(n) : n.toString() })),
    // Non-finite doubles as OTLP/JSON writes them (proto3's JSON mapping: strings); as numbers JSON.stringify would send null.
    fc.oneof(fc.double({ noDefaultInfinity: true, noNaN: true }), fc.constantFrom('NaN', 'Infinity', '-Infinity')).map((doubleValue) => ({ doubleValue })),
    fc.uint8Array({ maxLength: 16 }).map((b) => ({ bytesValue: Buffer.from(b).toString('base64') })),
    fc.array(tie('value'), { maxLength: 4 }).map((values) => ({ arrayValue: { values } })),
    fc.array(fc.record({ key: fc.string({ maxLength: 8 }), value: tie('value') }), { maxLength: 4 }).map((values) => ({ kvlistValue: { values } })),
  ),
})).value;

test('a JSON value sent as the AnyValue an SDK makes of it comes back as the same JSON', () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
      const converted = anyValue(anyValueOf(value as JsonValue), 2, reading('json'), 'v');
      assert.equal(JSON.stringify(converted), JSON.stringify(value));
    }),
  );
});

test('every AnyValue converts alike from OTLP/JSON and from binary protobuf, into JSON that serialises', () => {
  fc.assert(
    fc.property(otlpAnyValue, (value) => {
      const fromJson = anyValue(value, 2, reading('json'), 'v');
      const binary = AnyValueCodec.encode(AnyValueCodec.fromObject(value)).finish();
      const fromProtobuf = anyValue(AnyValueCodec.decode(binary), 2, reading('protobuf'), 'v');
      const text = JSON.stringify(fromJson);
      assert.equal(JSON.stringify(fromProtobuf), text);
      assert.ok(holdsOnlyJson(fromJson), `${text}: a value JSON cannot hold (NaN, Infinity, bigint, bytes, undefined)`);
    }),
  );
});

test('int64: a number within ±(2^53-1), else its exact decimal string', () => {
  fc.assert(
    fc.property(fc.bigInt(int64Range), fc.boolean(), (n, asString) => {
      const sent = asString || n > maxSafe || n < -maxSafe ? n.toString() : Number(n);
      const converted = anyValue({ intValue: sent }, 2, reading('json'), 'v');
      if (n <= maxSafe && n >= -maxSafe) assert.equal(converted, Number(n));
      else assert.equal(converted, n.toString());
    }),
  );
});

test('nesting past native ingest’s depth bound is cut where it passes it, so the event is refused by that bound, not walked to the end', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 200 }), (depth) => {
      let value: Record<string, unknown> = { stringValue: 'leaf' };
      for (let i = 0; i < depth; i++) value = { arrayValue: { values: [value] } };
      // a record attribute's value: level 2 of the payload, its deepest array at level depth + 1
      const converted = anyValue(value, 2, reading('json'), 'v');
      const problem = payloadShapeProblem({ attribute: converted }, 'payload');
      assert.equal(problem !== undefined, depth + 1 > 32, `depth ${depth}: ${problem}`);
      assert.ok(JSON.stringify(converted).length <= 2 * 33 + 6);
    }),
  );
});

/** Requests as exporters send them: the two encodings of one request decode to the same records. */
const record = fc.record(
  {
    timeUnixNano: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
    observedTimeUnixNano: fc.bigInt({ min: 0n, max: 2n ** 63n }).map(String),
    severityNumber: fc.integer({ min: 0, max: 24 }),
    severityText: fc.string({ maxLength: 8 }),
    body: otlpAnyValue,
    attributes: fc.array(fc.record({ key: fc.string({ maxLength: 8 }), value: otlpAnyValue }), { maxLength: 4 }),
    flags: fc.nat(),
    traceId: fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('hex')),
    spanId: fc.uint8Array({ minLength: 8, maxLength: 8 }).map((b) => Buffer.from(b).toString('hex').toUpperCase()),
    eventName: fc.string({ maxLength: 8 }),
  },
  { requiredKeys: [] },
);
const resource = fc.record({
  resource: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })) as fc.Arbitrary<Record<string, JsonValue>>,
  scope: fc.record({ name: fc.string({ maxLength: 8 }), version: fc.string({ maxLength: 8 }) }, { requiredKeys: [] }),
  records: fc.array(record, { maxLength: 3 }),
});

test('OTLP/JSON and binary protobuf of one request decode to the same records', () => {
  fc.assert(
    fc.property(fc.array(resource, { maxLength: 3 }), (specs) => {
      const request = logsRequest(...specs);
      const fromJson = decodeJson(Buffer.from(JSON.stringify(request)));
      const fromProtobuf = decodeProtobuf(toProtobuf(request));
      const text = (v: unknown) => JSON.stringify(v, (_key, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
      assert.equal(text(fromProtobuf), text(fromJson));
      assert.equal(fromJson.records, specs.reduce((n, spec) => n + spec.records.length, 0));
    }),
    { numRuns: 200 },
  );
});
