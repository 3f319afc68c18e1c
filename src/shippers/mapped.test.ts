import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { normaliseEvents, normaliseMapped, payloadLimits, type IngestDefaults, type ParsedIngest } from '../events/ingest-parse.js';
import { parsedPayload } from '../engine/event-record.js';
import { shipperSeverity } from './severity.js';
import { toShippedEvents } from './loki/mapping.js';
import { toShippedEvent as bulkEvent, eventIdOf } from './elastic/mapping.js';
import type { LokiEntry, LokiStream } from './loki/decode.js';
import { noMetadata } from './loki/decode.js';

// Session 17 maps a line or document straight to what normalise reads (normaliseMapped), where it
// built an event object for normaliseEvents. The definitions below are the mappings as they were
// before (session 16), each followed by normaliseEvents: the new path must store the same events
// and refuse the same items with the same words.

interface Before {
  dataset: string;
  fields: Record<string, unknown>;
  bytes: number;
}

const datasetLabels = ['dataset', 'service_name', 'job'] as const;
const levelLabels = ['level', 'severity', 'detected_level'] as const;
function streamDatasetBefore(labels: Record<string, string>): { dataset: string; label: string | undefined } {
  for (const label of datasetLabels) {
    const value = labels[label];
    if (value !== undefined && value !== '') return { dataset: value, label };
  }
  return { dataset: 'loki', label: undefined };
}
function jsonObject(line: string): Record<string, unknown> | undefined {
  if (line.charCodeAt(0) !== 123) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
function lokiEventBefore(dataset: { dataset: string }, entry: LokiEntry, streamLabels: Record<string, string>): Before {
  let labels = streamLabels;
  for (const name in entry.metadata) {
    if (labels === streamLabels) labels = { ...streamLabels };
    labels[name] = entry.metadata[name]!;
  }
  const parsed = jsonObject(entry.line);
  let message = entry.line;
  let severity: string | undefined;
  let payload: Record<string, unknown> = {};
  if (parsed) {
    const messageKey = typeof parsed.message === 'string' ? 'message' : typeof parsed.msg === 'string' ? 'msg' : '';
    if (messageKey) message = parsed[messageKey] as string;
    let levelKey = parsed.level !== undefined ? 'level' : parsed.severity !== undefined ? 'severity' : '';
    if (levelKey) {
      severity = shipperSeverity(parsed[levelKey]);
      if (severity === undefined) levelKey = '';
    }
    payload = parsed;
    if (messageKey) parsed[messageKey] = undefined;
    if (levelKey) parsed[levelKey] = undefined;
  }
  for (const label of levelLabels) {
    if (severity !== undefined) break;
    if (labels[label] !== undefined) severity = shipperSeverity(labels[label]);
  }
  for (const _ in labels) {
    payload.labels = labels;
    break;
  }
  return { dataset: dataset.dataset, fields: { ts: entry.ts, severity, message, payload }, bytes: Buffer.byteLength(entry.line) };
}
function lokiBefore(streams: readonly LokiStream[]): Before[] {
  const out: Before[] = [];
  for (const stream of streams) {
    const dataset = streamDatasetBefore(stream.labels);
    const labels: Record<string, string> = {};
    for (const name in stream.labels) if (name !== dataset.label) labels[name] = stream.labels[name]!;
    for (const entry of stream.entries) out.push(lokiEventBefore(dataset, entry, labels));
  }
  return out;
}

function bulkBefore(index: string, id: string | undefined, document: Record<string, unknown>, bytes: number): Before {
  const nestedLevel = (d: Record<string, unknown>): unknown => {
    const log = d.log;
    return typeof log === 'object' && log !== null && !Array.isArray(log) ? (log as Record<string, unknown>).level : undefined;
  };
  const tsKey = document['@timestamp'] !== undefined ? '@timestamp' : document.timestamp !== undefined ? 'timestamp' : document.time !== undefined ? 'time' : '';
  const messageKey = typeof document.message === 'string' ? 'message' : typeof document.msg === 'string' ? 'msg' : '';
  let levelKey = '';
  let severity: string | undefined;
  if (document.level !== undefined) {
    severity = shipperSeverity(document.level);
    levelKey = 'level';
  } else if (document['log.level'] !== undefined) {
    severity = shipperSeverity(document['log.level']);
    levelKey = 'log.level';
  } else if (nestedLevel(document) !== undefined) {
    severity = shipperSeverity(nestedLevel(document));
    levelKey = 'log';
  } else if (document.severity !== undefined) {
    severity = shipperSeverity(document.severity);
    levelKey = 'severity';
  }
  if (severity === undefined) levelKey = '';
  const ts = tsKey ? document[tsKey] : undefined;
  const message = messageKey ? document[messageKey] : undefined;
  const payload = document;
  if (tsKey) payload[tsKey] = undefined;
  if (messageKey) payload[messageKey] = undefined;
  if (levelKey === 'log') {
    const { level: _level, ...rest } = document.log as Record<string, unknown>;
    payload.log = Object.keys(rest).length ? rest : undefined;
  } else if (levelKey) payload[levelKey] = undefined;
  const fields: Record<string, unknown> = { ts, severity, message, payload };
  if (id !== undefined) fields.event_id = eventIdOf(index, id);
  return { dataset: index, fields, bytes };
}

/** The stored events and failures, generated event ids left out (random), the parsed payload as its JSON. */
function comparable(parsed: ParsedIngest) {
  return {
    failures: parsed.failures,
    events: parsed.events.map((e) => ({ ...e, eventId: e.clientEventId ? e.eventId : 'generated', parsed: e[parsedPayload] === undefined ? undefined : JSON.stringify(e[parsedPayload]) })),
  };
}

const defaults = fc.record({
  datasetId: fc.constant('ds_1'),
  defaultSeverity: fc.integer({ min: 0, max: 4 }),
  now: fc.constant(1_764_200_000_000),
  overflowFrom: fc.option(fc.constantFrom('games', 'other'), { nil: undefined }),
}) as fc.Arbitrary<IngestDefaults>;

// Values a line or document carries: levels we know and do not, times of every kind, nesting
// past the payload's depth bound, wide objects, lone surrogates (written as U+FFFD).
const level = fc.oneof(fc.constantFrom('info', 'WARN', 'error', 'notice', 'loud', 'fatal', 'debug', 'trace1', 'constructor', ''), fc.integer({ min: 0, max: 80 }), fc.constant(null), fc.constant({}));
const time = fc.oneof(fc.constantFrom('2026-11-27T05:00:00.123Z', '2026-11-27 05:00:00+01:00', 'yesterday', '', '2026-02-30T00:00:00Z'), fc.integer({ min: -5, max: 2_000_000_000_000 }), fc.double(), fc.constant(null), fc.constant([]), fc.constant({ a: 1 }));
const deep = fc.integer({ min: payloadLimits.depth - 2, max: payloadLimits.depth + 1 }).map((n) => {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = { v };
  return v;
});
const wide = fc.constantFrom(990, 1_001).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])));
const value = fc.oneof({ arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 6 }, { arbitrary: fc.string({ unit: 'binary', maxLength: 6 }), weight: 2 }, { arbitrary: deep, weight: 1 }, { arbitrary: wide, weight: 1 });
const document = fc.record(
  {
    '@timestamp': time, timestamp: time, time, message: fc.oneof(fc.string(), fc.integer()), msg: fc.oneof(fc.string(), fc.integer()),
    level, 'log.level': level, log: fc.oneof(fc.record({ level, logger: fc.string() }, { requiredKeys: [] }), fc.constant('x')), severity: level,
    event: fc.string(), payload: value, other: value,
  },
  { requiredKeys: [] },
);
const labelName = fc.constantFrom('dataset', 'service_name', 'job', 'level', 'severity', 'detected_level', 'host', '__proto__', 'app');
const labels = fc.dictionary(labelName, fc.oneof(fc.constantFrom('', 'games', 'warn', 'nope', 'info'), fc.string({ maxLength: 4 })), { maxKeys: 5 });
const entry: fc.Arbitrary<LokiEntry> = fc.record({
  ts: fc.option(fc.oneof(fc.integer({ min: 1, max: 9_999_999_999_999 }), fc.constant(8_700_000_000_000_000)), { nil: undefined }),
  line: fc.oneof(document.map((d) => JSON.stringify(d)), fc.string(), fc.constantFrom('{not json', '[1]', '{}', '{"message":"m","level":"warn"}')),
  metadata: fc.oneof(fc.constant(noMetadata), labels, fc.constant({})),
});
const streams: fc.Arbitrary<LokiStream[]> = fc.array(fc.record({ labels: labels.map((l) => ({ ...l })), entries: fc.array(entry, { maxLength: 6 }) }), { maxLength: 3 });

/** Each dataset's items as storeShipped groups them (the order within a dataset kept). */
function byDataset<T extends { dataset: string }>(items: T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(item.dataset, [...(groups.get(item.dataset) ?? []), item]);
  return groups;
}

describe('shipped events go straight to the record: the same events and failures as the event objects did', () => {
  test('Loki: any streams, labels, structured metadata and lines', () => {
    fc.assert(
      fc.property(streams, defaults, (value, d) => {
        // Each mapping takes the lines apart (it gives the parsed objects to the payload): one copy each.
        const before = byDataset(lokiBefore(structuredClone(value)));
        const now = byDataset(toShippedEvents(value));
        assert.deepEqual([...now.keys()], [...before.keys()]);
        for (const [dataset, items] of now) {
          const old = before.get(dataset)!;
          const expected = comparable(normaliseEvents(old.map((i) => i.fields), d, old.map((i) => i.bytes)));
          assert.deepEqual(comparable(normaliseMapped(items, d)), expected);
        }
      }),
      { numRuns: 1_000 },
    );
  });

  test('Elasticsearch bulk: any document, with or without _id', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ document, id: fc.option(fc.oneof(fc.uuid(), fc.string({ maxLength: 6 })), { nil: undefined }), bytes: fc.oneof(fc.nat(300), fc.constant(256_001)) }), { maxLength: 6 }), defaults, (items, d) => {
        const old = items.map((i) => bulkBefore('games', i.id, structuredClone(i.document), i.bytes));
        const now = items.map((i) => bulkEvent('games', i.id, structuredClone(i.document), i.bytes));
        const expected = comparable(normaliseEvents(old.map((i) => i.fields), d, old.map((i) => i.bytes)));
        assert.deepEqual(comparable(normaliseMapped(now, d)), expected);
      }),
      { numRuns: 1_000 },
    );
  });
});
