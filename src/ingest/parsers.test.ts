import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { ingestLimits } from './core/limits.js';
import { BulkTooLarge, parseBulk, type BulkItem } from './elastic/bulk-parse.js';
import { BadPush, decodeJsonPush, nanosToMs, PushTooLarge } from './loki/decode.js';

// Plain, slow definitions of the parsers: the fast ones are held to them.

const stored = new Set(['index', 'create']);
const refused = new Set(['update', 'delete']);
function jsonObject(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
class BulkEmpty extends Error {}

function parseBulkBefore(body: Buffer, urlIndex: string | undefined): BulkItem[] {
  const text = body.toString('utf8');
  const items: BulkItem[] = [];
  let start = 0;
  const nextLine = (): string | undefined => {
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end === -1) end = text.length;
      let line = text.slice(start, end);
      start = end + 1;
      if (line.charCodeAt(line.length - 1) === 13) line = line.slice(0, -1);
      if (line.trim() !== '') return line;
    }
    return undefined;
  };
  // Shippers repeat one action line (`{"create":{}}`, `{"index":{"_index":"logs"}}`): parsed once.
  let lastText = '';
  let lastAction: Record<string, unknown> | undefined;
  for (let line = nextLine(); line !== undefined; line = nextLine()) {
    if (items.length >= ingestLimits.events) throw new BulkTooLarge(`a bulk request may carry at most ${ingestLimits.events} actions; send smaller batches`);
    if (line !== lastText) {
      lastText = line;
      lastAction = jsonObject(line);
    }
    const actionLine = lastAction;
    const keys = actionLine ? Object.keys(actionLine) : [];
    const action = keys.length === 1 ? keys[0]! : '';
    const meta = action ? actionLine![action] : undefined;
    const metaObject = typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? (meta as Record<string, unknown>) : {};
    const index = typeof metaObject._index === 'string' && metaObject._index !== '' ? metaObject._index : (urlIndex ?? '');
    const rawId = metaObject._id;
    const id = typeof rawId === 'string' || typeof rawId === 'number' ? String(rawId) : undefined;
    const item: BulkItem = { action: action || 'index', index, id, bytes: 0 };
    items.push(item);
    if (action === 'delete') {
      item.error = { status: 400, type: 'illegal_argument_exception', reason: 'delete is not supported: stored events cannot be removed through the bulk API' };
      continue;
    }
    const source = nextLine();
    if (!actionLine || !action || (meta !== undefined && typeof meta !== 'object')) {
      item.error = { status: 400, type: 'illegal_argument_exception', reason: `malformed action line: expected one JSON object such as {"index":{"_index":"games"}}, got ${JSON.stringify(line.slice(0, 100))}` };
      continue;
    }
    if (refused.has(action)) {
      item.error = { status: 400, type: 'illegal_argument_exception', reason: `${action} is not supported: stored events cannot change; use index or create` };
      continue;
    }
    if (!stored.has(action)) {
      item.error = { status: 400, type: 'illegal_argument_exception', reason: `unknown action [${action}]: use index or create` };
      continue;
    }
    if (!index) {
      item.error = { status: 400, type: 'action_request_validation_exception', reason: 'Validation Failed: 1: index is missing;' };
      continue;
    }
    const document = source === undefined ? undefined : jsonObject(source);
    if (!document) {
      item.error = {
        status: 400,
        type: 'document_parsing_exception',
        reason: source === undefined ? 'the action has no document line after it' : 'failed to parse: the document is not a JSON object',
      };
      continue;
    }
    item.document = document;
    item.bytes = Buffer.byteLength(source!);
  }
  if (items.length === 0) throw new BulkEmpty('request body is required');
  return items;
}

function nanosToMsBefore(value: unknown): number {
  const text = typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? String(value) : value;
  if (typeof text !== 'string' || !/^[0-9]{1,19}$/.test(text)) return NaN;
  return text.length <= 6 ? 0 : Number(text.slice(0, -6));
}

function stringMapBefore(value: unknown, what: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new BadPush(`${what} must be an object of strings`);
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== 'string') throw new BadPush(`${what}.${key} must be a string`);
    out[key] = v;
  }
  return out;
}
function decodeJsonPushBefore(body: Buffer) {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new BadPush('the request body is not valid JSON');
  }
  const streams = (value as { streams?: unknown } | null)?.streams;
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Array.isArray(streams)) {
    throw new BadPush('the request body must be a JSON object {"streams": [{"stream": {…}, "values": [[ts, line], …]}]}');
  }
  let count = 0;
  return streams.map((stream: unknown, i) => {
    const s = stream as { stream?: unknown; values?: unknown } | null;
    if (typeof s !== 'object' || s === null || !Array.isArray(s.values)) throw new BadPush(`streams[${i}] must be an object with "stream" and "values"`);
    const labels = stringMapBefore(s.stream, `streams[${i}].stream`);
    count += s.values.length;
    if (count > ingestLimits.events) throw new PushTooLarge(`a push may carry at most ${ingestLimits.events} log lines; send smaller batches`);
    const entries = s.values.map((v: unknown, j) => {
      const where = `streams[${i}].values[${j}]`;
      if (!Array.isArray(v) || v.length < 2 || v.length > 3) throw new BadPush(`${where} must be [timestamp, line] or [timestamp, line, structured metadata]`);
      const ts = nanosToMsBefore(v[0]);
      if (Number.isNaN(ts)) throw new BadPush(`${where}[0] must be the time in nanoseconds since the epoch, as a string of digits`);
      if (typeof v[1] !== 'string') throw new BadPush(`${where}[1] must be the log line, a string`);
      return { ts: ts > 0 ? ts : undefined, line: v[1], metadata: stringMapBefore(v[2], `${where}[2]`) };
    });
    return { labels, entries };
  });
}

/** What a call gives: its value, or the class and message of what it threw. */
function outcome<T>(run: () => T): { value: T } | { error: string } {
  try {
    return { value: run() };
  } catch (error) {
    return { error: `${(error as Error).constructor.name}: ${(error as Error).message}` };
  }
}

// Lines a bulk body is made of: actions (repeated ones too), documents, broken JSON, blank lines of
// every white space JavaScript knows, text that is not ASCII, and bytes that are not UTF-8.
const actionLine = fc.oneof(
  fc.constantFrom('{"create":{}}', '{"index":{"_index":"games"}}', '{"index":{"_index":"games","_id":"a"}}', '{"delete":{"_index":"games","_id":1}}', '{"update":{"_id":"x"}}', '{"frobnicate":{}}', '{"index":5}', '{"index":{},"create":{}}', '{}', '[]', '{not json', '{"index":{"_index":""}}', '{"create":{"_index":"ünï","_id":2}}'),
  fc.record({ action: fc.constantFrom('index', 'create', 'delete', '__proto__', 'x'), index: fc.option(fc.string({ maxLength: 8 }), { nil: undefined }), id: fc.option(fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { nil: undefined }) }).map(({ action, index, id }) => JSON.stringify({ [action]: { _index: index, _id: id } })),
);
const documentLine = fc.oneof(fc.constantFrom('{"message":"m"}', '{"message":"ÿ"}', '{"a":"ÿÿ","b":1}', '{"msg":"é","level":30}', '"a string"', '{"message": "broken', '{}'), fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(fc.string({ unit: 'binary', maxLength: 10 }), fc.integer())).map((d) => JSON.stringify(d)));
const blankLine = fc.constantFrom('', ' ', '\t', '\r', '\u00a0', '\ufeff', '\u2028', '\u3000', ' \u00a0 ', '\u0001', '\u001f');
const bulkBody = fc
  .array(fc.oneof({ arbitrary: actionLine, weight: 3 }, { arbitrary: documentLine, weight: 3 }, { arbitrary: blankLine, weight: 1 }), { maxLength: 14 })
  .chain((lines) => fc.record({ lines: fc.constant(lines), crlf: fc.boolean(), trailing: fc.boolean(), garbage: fc.boolean() }))
  .map(({ lines, crlf, trailing, garbage }) => {
    const text = lines.join(crlf ? '\r\n' : '\n') + (trailing ? '\n' : '');
    const bytes = Buffer.from(text);
    // Bytes that are not UTF-8: each ÿ (c3 bf) becomes 80 80, two U+FFFD when decoded (one character per byte, as
    // ASCII has, but three bytes each when the line is measured again).
    if (garbage) for (let i = bytes.indexOf('ÿ'); i >= 0; i = bytes.indexOf('ÿ', i)) bytes.fill(0x80, i, i + 2);
    return bytes;
  });

describe("parsers changed for speed agree with what they replaced", () => {
  test('parseBulk: the same items (actions, indexes, ids, documents, sizes, errors) for any body', () => {
    fc.assert(
      fc.property(bulkBody, fc.option(fc.constantFrom('url-index', ''), { nil: undefined }), (body, urlIndex) => {
        const now = outcome(() => parseBulk(body, urlIndex));
        const before = outcome(() => parseBulkBefore(body, urlIndex));
        if ('error' in before) {
          assert.ok('error' in now, `now ${JSON.stringify(now)}`);
          assert.equal(now.error, before.error);
        } else assert.deepEqual(now, before);
      }),
      { numRuns: 2_000 },
    );
  });

  test('parseBulk: past 10,000 actions the request is refused, as before', () => {
    const body = Buffer.from('{"create":{"_index":"a"}}\n{}\n'.repeat(ingestLimits.events + 1));
    assert.throws(() => parseBulk(body, undefined), BulkTooLarge);
    assert.equal(parseBulk(body.subarray(0, body.length - '{"create":{"_index":"a"}}\n{}\n'.length), undefined).length, ingestLimits.events);
  });

  test('nanosToMs: the regular expression it replaced, on strings and numbers', () => {
    const value = fc.oneof(fc.stringMatching(/^[0-9]{0,21}$/), fc.string({ maxLength: 21 }), fc.constantFrom('1\n', '\n1', '١٢٣', '0x10', '1e9', '-1'), fc.double(), fc.integer(), fc.maxSafeNat(), fc.constant(undefined), fc.constant(null));
    fc.assert(fc.property(value, (v) => assert.ok(Object.is(nanosToMs(v), nanosToMsBefore(v)), String(v))), { numRuns: 5_000 });
  });

  test("an int64 Long's toNumber() is Number(String(long)) (a Loki entry's seconds)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (value) => {
        const long = (protobuf.util.Long as unknown as { fromString(text: string): { toNumber(): number } }).fromString(value.toString());
        assert.ok(Object.is(long.toNumber(), Number(String(long))), value.toString());
      }),
      { numRuns: 5_000 },
    );
  });

  test('decodeJsonPush: streams, entries and errors of any push, valid or not, as before', () => {
    const entry = fc.oneof(
      fc.tuple(fc.oneof(fc.stringMatching(/^[0-9]{1,19}$/), fc.constantFrom('x', '', 12, -1, 1.5)), fc.oneof(fc.string(), fc.constant(3)), fc.option(fc.oneof(fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(fc.string(), fc.integer())), fc.constant(null), fc.constant([])), { nil: undefined })).map(([ts, line, meta]) => (meta === undefined ? [ts, line] : [ts, line, meta])),
      fc.constantFrom([], ['1'], 'x', null, ['1', 'a', {}, 'extra']),
    );
    const stream = fc.oneof(fc.record({ stream: fc.option(fc.oneof(fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(fc.string(), fc.integer())), fc.constant('x')), { nil: undefined }), values: fc.array(entry, { maxLength: 5 }) }), fc.constantFrom(null, 1, {}, { values: 'x' }));
    const push = fc.oneof(fc.record({ streams: fc.array(stream, { maxLength: 4 }) }), fc.constantFrom([], null, 'x', {}, { streams: {} }));
    fc.assert(
      fc.property(push, (value) => {
        const body = Buffer.from(JSON.stringify(value));
        const now = outcome(() => decodeJsonPush(body));
        const before = outcome(() => decodeJsonPushBefore(body));
        assert.deepEqual(now, before);
      }),
      { numRuns: 2_000 },
    );
  });
});
