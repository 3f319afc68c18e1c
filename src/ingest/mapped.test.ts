import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import snappy from 'snappy';
import { levelSeverity } from './core/severity.js';
import { normaliseMapped, type IngestDefaults, type ParsedIngest } from './core/normalise.js';
import { parseNdjson } from './native/ndjson.js';
import { payloadLimits } from './core/limits.js';
import { parsedPayload } from '../shared/event-record.js';
import { toShippedEvents } from './loki/mapping.js';
import { decodeJsonPush, decodeProtobufPush } from './loki/decode.js';
import { PushRequest } from './loki/push-proto.js';
import { parseBulk } from './elastic/bulk-parse.js';
import { eventIdOf, toShippedEvent as bulkEvent } from './elastic/mapping.js';

// DECISIONS §21: a JSON line or document is mapped as native ingest maps an NDJSON line. Each
// route is run from its wire format (the bytes a client sends) to the events normaliseMapped
// makes, and held to parseNdjson of the same line: the same events and the same failures.

/** The stored events and failures, generated event ids left out (random), the parsed payload as its JSON. */
function comparable(parsed: ParsedIngest) {
  return {
    failures: parsed.failures,
    events: parsed.events.map(({ [parsedPayload]: carried, ...e }) => ({ ...e, eventId: e.clientEventId ? e.eventId : 'generated', parsed: carried === undefined ? undefined : JSON.stringify(carried) })),
  };
}

const defaults = fc.record({
  datasetId: fc.constant('ds_1'),
  defaultSeverity: fc.integer({ min: 0, max: 4 }),
  now: fc.constant(1_764_200_000_000),
  overflowFrom: fc.option(fc.constantFrom('games', 'other'), { nil: undefined }),
}) as fc.Arbitrary<IngestDefaults>;

// Every field native ingest knows, under each of its names, with values it takes and values it
// does not: levels of every kind (names, aliases, OpenTelemetry and pino numbers), times of
// every kind, nested payloads, nesting past the depth bound, wide objects, lone surrogates.
const level = fc.oneof(
  fc.constantFrom('info', 'WARN', 'error', 'notice', 'alert', 'verbose', 'loud', 'fatal', 'debug', 'trace1', 'constructor', '', '30'),
  fc.integer({ min: 0, max: 80 }),
  fc.constantFrom(35.5, -1, 1e300),
  fc.constant(null),
  fc.constant({}),
  fc.constant(true),
);
const time = fc.oneof(
  fc.constantFrom('2026-11-27T05:00:00.123Z', '2026-11-27 05:00:00+01:00', '2026-11-27T05:00:00.123456789z', 'yesterday', '', '2026-02-30T00:00:00Z', '2026-11-27T24:00:00Z'),
  fc.integer({ min: -5, max: 2_000_000_000_000 }),
  fc.double(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({ a: 1 }),
);
const deep = fc.integer({ min: payloadLimits.depth - 2, max: payloadLimits.depth + 1 }).map((n) => {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = { v };
  return v;
});
const wide = fc.constantFrom(990, 1_001).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])));
const value = fc.oneof({ arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 6 }, { arbitrary: fc.string({ unit: 'binary', maxLength: 6 }), weight: 2 }, { arbitrary: deep, weight: 1 }, { arbitrary: wide, weight: 1 });
const text = fc.oneof({ arbitrary: fc.string({ maxLength: 8 }), weight: 4 }, { arbitrary: fc.oneof(fc.integer(), fc.constant(null), fc.constant({ a: 1 }), fc.constant(['x'])), weight: 1 });
const known = fc.record(
  {
    ts: time, '@timestamp': time, timestamp: time, time,
    severity: level, level, 'log.level': level, log: fc.oneof(fc.record({ level, logger: fc.string({ maxLength: 3 }) }, { requiredKeys: [] }), fc.constant('x'), fc.constant(null)),
    event: text, actor: text, source: text, message: text, msg: text,
    event_id: fc.oneof(fc.uuid(), fc.uuid().map((u) => u.toUpperCase()), fc.constantFrom('not-a-uuid', ''), fc.constant(7)),
    payload: fc.oneof({ arbitrary: fc.dictionary(fc.string({ maxLength: 4 }), value, { maxKeys: 4 }), weight: 4 }, { arbitrary: fc.oneof(fc.constant('x'), fc.constant([1]), fc.constant(null)), weight: 1 }, { arbitrary: wide, weight: 1 }),
    labels: fc.constant({ from: 'the line' }),
  },
  { requiredKeys: [] },
);
/** A JSON object as a client sends it: known fields in any order among other keys of any value (their names too, `__proto__` among them). */
const eventObject: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(known, fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'constructor', 'data', 'level_up')), value, { maxKeys: 4 }), fc.boolean())
  .map(([k, rest, knownFirst]) => (knownFirst ? { ...k, ...rest } : { ...rest, ...k }));

const line = (o: Record<string, unknown>) => JSON.stringify(o);

/** The native result of NDJSON lines. */
const native = (lines: string[], d: IngestDefaults) => comparable(parseNdjson(Buffer.from(lines.join('\n')), d));

/** A Loki JSON push of these lines in one stream, through the route's decode and mapping. */
function lokiJson(lines: string[], d: IngestDefaults, stream: Record<string, string> = { dataset: 'games' }, nanos = '0') {
  const body = Buffer.from(JSON.stringify({ streams: [{ stream, values: lines.map((l) => [nanos, l]) }] }));
  return comparable(normaliseMapped(toShippedEvents(decodeJsonPush(body)), d));
}

/** The same as a snappy-compressed logproto.PushRequest. */
function lokiProtobuf(lines: string[], d: IngestDefaults, labels = '{dataset="games"}', ms?: number) {
  const timestamp = ms === undefined ? undefined : { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 };
  const message = PushRequest.fromObject({ streams: [{ labels, entries: lines.map((l) => ({ timestamp, line: l })) }] });
  const body = snappy.compressSync(Buffer.from(PushRequest.encode(message).finish()));
  return comparable(normaliseMapped(toShippedEvents(decodeProtobufPush(body)), d));
}

/** A bulk body of these documents (`create` without `_id`, or with `ids`), through the route's parse and mapping. */
function bulk(lines: string[], d: IngestDefaults, ids?: Array<string | undefined>) {
  const body = Buffer.from(lines.map((l, i) => `${JSON.stringify({ create: ids?.[i] === undefined ? {} : { _id: ids[i] } })}\n${l}\n`).join(''));
  const items = parseBulk(body, 'games');
  return comparable(normaliseMapped(items.map((item) => bulkEvent(item.index, item.id, item.document!, item.bytes)), d));
}

describe('a JSON line or document is mapped as native ingest maps an NDJSON line (DECISIONS §21)', () => {
  test('any JSON objects: Loki JSON, Loki protobuf and bulk store the events native NDJSON stores, and refuse the ones it refuses, with the same words', () => {
    fc.assert(
      fc.property(fc.array(eventObject, { minLength: 1, maxLength: 5 }), defaults, (objects, d) => {
        const lines = objects.map(line);
        const expected = native(lines, d);
        assert.deepEqual(lokiJson(lines, d), expected, 'Loki JSON');
        assert.deepEqual(lokiProtobuf(lines, d), expected, 'Loki protobuf');
        assert.deepEqual(bulk(lines, d), expected, 'bulk');
      }),
      { numRuns: 300 },
    );
  });

  test("Loki's own: the labels go to payload.labels (over the line's own), the entry's timestamp and the level label count where the line says nothing", () => {
    const labelValue = fc.oneof(fc.constantFrom('', 'warn', 'nope', 'ERROR', '50'), fc.string({ maxLength: 4 }));
    const labels = fc.dictionary(fc.constantFrom('level', 'severity', 'detected_level', 'host', 'app'), labelValue, { minKeys: 1, maxKeys: 4 }).map((l) => ({ ...l }));
    // Small objects: the labels count toward the payload's 1,000 keys, where native ingest has none.
    const small = eventObject.filter((o) => JSON.stringify(o).length < 2_000);
    fc.assert(
      fc.property(fc.array(small, { minLength: 1, maxLength: 4 }), labels, fc.option(fc.integer({ min: 1, max: 4_000_000_000_000 }), { nil: undefined }), defaults, (objects, streamLabels, ms, d) => {
        const lines = objects.map(line);
        // Native ingest with the entry's time as "now" and the label's level as the dataset's default: what is left to them.
        let labelLevel: number | undefined;
        for (const name of ['level', 'severity', 'detected_level']) labelLevel ??= streamLabels[name] === undefined ? undefined : levelSeverity(streamLabels[name]);
        const expected = native(lines, { ...d, now: ms ?? d.now, defaultSeverity: labelLevel ?? d.defaultSeverity });
        const withLabels = (e: (typeof expected.events)[number]) => {
          const payload = { ...(JSON.parse(e.payload) as Record<string, unknown>), labels: streamLabels };
          return { ...e, payload, parsed: e.parsed === undefined ? undefined : payload };
        };
        const parsedBack = (e: (typeof expected.events)[number]) => ({ ...e, payload: JSON.parse(e.payload) as unknown, parsed: e.parsed === undefined ? undefined : (JSON.parse(e.parsed) as unknown) });
        const want = { failures: expected.failures, events: expected.events.map(withLabels) };
        const json = lokiJson(lines, d, { dataset: 'games', ...streamLabels }, ms === undefined ? '0' : `${ms}000000`);
        assert.deepEqual({ failures: json.failures, events: json.events.map(parsedBack) }, want, 'Loki JSON');
        const proto = lokiProtobuf(lines, d, `{dataset="games", ${Object.entries(streamLabels).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')}}`, ms);
        assert.deepEqual({ failures: proto.failures, events: proto.events.map(parsedBack) }, want, 'Loki protobuf');
      }),
      { numRuns: 200 },
    );
  });

  test("bulk's own: `_id` is the client event id where the document has no event_id", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(eventObject, fc.option(fc.oneof(fc.uuid(), fc.string({ maxLength: 6 })), { nil: undefined })), { minLength: 1, maxLength: 5 }), defaults, (pairs, d) => {
        const lines = pairs.map(([o]) => line(o));
        const ids = pairs.map(([, id]) => id);
        const expected = native(
          pairs.map(([o, id]) => (id === undefined || (o.event_id !== undefined && o.event_id !== null) ? line(o) : line({ ...o, event_id: eventIdOf('games', id) }))),
          d,
        );
        // The line native ingest read holds one more key: the size as sent is the document's.
        const got = bulk(lines, d, ids);
        assert.deepEqual(got.failures.map((f) => f.index), expected.failures.map((f) => f.index));
        assert.deepEqual(
          got.events.map((e) => ({ ...e, bytesRaw: 0 })),
          expected.events.map((e) => ({ ...e, bytesRaw: 0 })),
        );
      }),
      { numRuns: 200 },
    );
  });

  test('a Loki line that is not a JSON object is the message, with the labels as the payload; past 256 KB it is refused unparsed, as native ingest refuses the line', () => {
    const d: IngestDefaults = { datasetId: 'ds_1', defaultSeverity: 1, now: 5, overflowFrom: undefined };
    const big = JSON.stringify({ message: 'x'.repeat(256_000) });
    const lines = ['plain text', '[1,2]', '"a string"', '{not json', '  {"message":"leading space"}', big, ''];
    const got = lokiJson(lines, d, { dataset: 'games', host: 'h' }, '7000000');
    assert.deepEqual(got.failures, [{ index: 5, error: { code: 'too_large', message: 'an event may be at most 256000 bytes' } }]);
    assert.deepEqual(
      got.events.map((e) => [e.message, e.ts, e.payload]),
      [
        ['plain text', 7, '{"labels":{"host":"h"}}'],
        ['[1,2]', 7, '{"labels":{"host":"h"}}'],
        ['"a string"', 7, '{"labels":{"host":"h"}}'],
        ['{not json', 7, '{"labels":{"host":"h"}}'],
        ['leading space', 7, '{"labels":{"host":"h"}}'],
        ['', 7, '{"labels":{"host":"h"}}'],
      ],
    );
    assert.deepEqual(native([big], d).failures, got.failures.map((f) => ({ ...f, index: 0 })));
  });
});
