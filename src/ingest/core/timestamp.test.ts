import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseIsoSlow, parseTs } from './timestamp.js';
import { parseNdjson } from '../native/ndjson.js';

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Date-times of the accepted grammar, with every field also a little out of range. */
const isoLike = fc
  .record({
    year: fc.oneof(fc.integer({ min: 1960, max: 2100 }), fc.integer({ min: 0, max: 9999 })),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.integer({ min: 0, max: 32 }),
    sep: fc.constantFrom('T', 't', ' ', 'x'),
    hour: fc.integer({ min: 0, max: 25 }),
    minute: fc.integer({ min: 0, max: 60 }),
    second: fc.option(fc.integer({ min: 0, max: 61 }), { nil: undefined }),
    fraction: fc.option(fc.stringMatching(/^[0-9]{0,11}$/), { nil: undefined }),
    zone: fc.oneof(
      fc.constantFrom('Z', 'z', '', 'UTC'),
      fc.record({ sign: fc.constantFrom('+', '-'), h: fc.integer({ min: 0, max: 25 }), m: fc.integer({ min: 0, max: 61 }), colon: fc.boolean() }).map(({ sign, h, m, colon }) => `${sign}${pad(h, 2)}${colon ? ':' : ''}${pad(m, 2)}`),
    ),
  })
  .map(({ year, month, day, sep, hour, minute, second, fraction, zone }) => {
    let s = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}${sep}${pad(hour, 2)}:${pad(minute, 2)}`;
    if (second !== undefined) s += `:${pad(second, 2)}${fraction !== undefined ? `.${fraction}` : ''}`;
    return s + zone;
  });

const same = (s: string) => assert.equal(parseTs(s), parseIsoSlow(s), s);

test('property: an RFC 3339 ts parses to what the pattern and Date.parse give (valid, out of range, malformed)', () => {
  fc.assert(fc.property(isoLike, same), { numRuns: 20_000 });
});

test('property: RFC 3339 strings from Date#toISOString parse to their time', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), (ms) => {
      const s = new Date(ms).toISOString();
      assert.equal(parseTs(s), ms, s);
      assert.equal(parseTs(s), Date.parse(s));
    }),
    { numRuns: 10_000 },
  );
});

test('property: a valid ts with one character changed or removed parses as the definition says', () => {
  fc.assert(
    fc.property(isoLike, fc.nat(), fc.constantFrom('', '0', '9', ':', '-', '+', '.', 'T', 'Z', ' ', 'a', '٣'), (s, at, c) => {
      const i = at % (s.length + 1);
      same(s.slice(0, i) + c + s.slice(i + 1));
    }),
    { numRuns: 20_000 },
  );
});

test('property: any string parses as the definition says', () => {
  fc.assert(fc.property(fc.string({ maxLength: 40 }), same), { numRuns: 5_000 });
  for (const s of ['2026-11-26T24:00:00Z', '2026-11-26T13:04:60Z', '2026-02-30T13:04:41Z', '1969-12-31T23:59:59.999Z', '1970-01-01T00:00:00Z', '2026-11-26T13:04:41.1234567891Z', '2026-11-26T13:04:41.123456789+05:30']) same(s);
  assert.equal(parseTs('2026-11-26T13:04:41.123Z'), Date.UTC(2026, 10, 26, 13, 4, 41, 123));
  assert.ok(Number.isNaN(parseTs('1969-12-31T23:59:59.999Z')));
});

test('bytes_raw is each NDJSON line as sent, also when an invalid byte and a 3-byte character balance out in length', () => {
  const lines = [Buffer.from('{"event":"a","message":"'), Buffer.from([0xff]), Buffer.from('"}\n{"event":"b","message":"€"}\n{"event":"c"}')];
  const body = Buffer.concat(lines);
  const { events } = parseNdjson(body, { datasetId: 'd', defaultSeverity: 1, now: 0, overflowFrom: undefined });
  const raw = body.toString('latin1').split('\n').map((l) => Buffer.byteLength(l, 'latin1'));
  assert.deepEqual(events.map((e) => e.bytesRaw), raw);
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.string({ unit: 'binary', maxLength: 20 }), fc.uint8Array({ maxLength: 3 })), { minLength: 1, maxLength: 5 }), (parts) => {
      const chunks = parts.map(([text, bytes]) => Buffer.concat([Buffer.from(`{"event":"e","message":"${[...text].filter((ch) => ch >= ' ' && ch !== '"' && ch !== '\\').join('')}`), Buffer.from(bytes.filter((b) => b >= 0x80)), Buffer.from('"}')]));
      const sent = Buffer.concat(chunks.flatMap((c, i) => (i ? [Buffer.from('\n'), c] : [c])));
      const parsed = parseNdjson(sent, { datasetId: 'd', defaultSeverity: 1, now: 0, overflowFrom: undefined });
      assert.deepEqual(parsed.events.map((e) => e.bytesRaw), chunks.map((c) => c.length));
    }),
  );
});
