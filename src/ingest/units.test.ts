import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatLabels, LabelSyntaxError, parseLabels } from './loki/labels.js';
import { levelSeverity } from './core/severity.js';
import { normaliseMapped, type MappedEvent } from './core/normalise.js';
import { severities } from '../shared/event-record.js';
import { snappyLength } from './loki/decode.js';
import { eventIdOf } from './elastic/mapping.js';
import { tokenOf } from '../auth/credentials.js';
import snappy from 'snappy';

const labelName = fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,15}$/);
const labelSet = fc.dictionary(labelName, fc.string({ unit: 'grapheme' }), { maxKeys: 8 }).map((d) => ({ ...d }));

describe('Prometheus label syntax (Loki stream labels)', () => {
  test('round trip: any label set, formatted with escapes, parses back to itself (spaces anywhere allowed)', () => {
    fc.assert(
      fc.property(labelSet, fc.constantFrom('', ' ', '  '), (labels, space) => {
        // Each pair as formatLabels writes it, joined with the spaces (a value may hold ", " itself).
        const pairs = Object.entries(labels).map(([name, value]) => formatLabels({ [name]: value }).slice(1, -1));
        const text = `${space}{${space}${pairs.join(`${space},${space}`)}${space}}${space}`;
        assert.deepEqual(parseLabels(text), labels);
      }),
      // A value holding the separator ", " (the text is built directly, not by replacing it).
      { examples: [[{ _: ', ' }, '']] },
    );
  });

  test('never throws anything but LabelSyntaxError, whatever the text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string().map((s) => `{${s}}`), fc.string().map((s) => `{a="${s}`)), (text) => {
        try {
          parseLabels(text);
        } catch (error) {
          assert.ok(error instanceof LabelSyntaxError, String(error));
        }
      }),
    );
  });

  for (const [text, expected] of [
    ['{}', {}],
    ['{job="varlogs", filename="/var/log/a.log"}', { job: 'varlogs', filename: '/var/log/a.log' }],
    ['{a="say \\"hi\\"", b="back\\\\slash", c="two\\nlines"}', { a: 'say "hi"', b: 'back\\slash', c: 'two\nlines' }],
    ['{a="1",}', { a: '1' }],
  ] as const) {
    test(`${text} → ${JSON.stringify(expected)}`, () => assert.deepEqual(parseLabels(text), expected));
  }
  for (const text of ['', 'job="a"', '{job="a"', '{job=a}', '{1a="x"}', '{a="x" b="y"}', '{a="x",a="y"}', '{a="\\q"}', '{a="x"} trailing', '{a="x",,}']) {
    test(`refuses ${JSON.stringify(text)}`, () => assert.throws(() => parseLabels(text), LabelSyntaxError));
  }
});

describe('a level under an alias of severity or in a Loki label (pino and bunyan numbers, syslog and winston names)', () => {
  for (const [value, expected] of [
    [10, 'debug'], [20, 'debug'], [30, 'info'], [35, 'info'], [40, 'warn'], [50, 'error'], [60, 'fatal'], [70, 'fatal'],
    ['notice', 'info'], ['alert', 'fatal'], ['emerg', 'fatal'], ['WARNING', 'warn'], ['critical', 'fatal'], ['verbose', 'debug'], ['silly', 'debug'], ['http', 'info'],
    [5, undefined], [9.99, undefined], [Number.NaN, undefined], [Infinity, undefined], ['loud', undefined], ['30', undefined], ['constructor', undefined], [null, undefined], [{}, undefined], [true, undefined],
  ] as const) {
    test(`${JSON.stringify(value)} → ${String(expected)}`, () => {
      const index = levelSeverity(value);
      assert.equal(index === undefined ? undefined : severities[index], expected);
    });
  }
});

describe('credentials in an Authorization header', () => {
  const token = 'ops_live_0123456789abcdefghijABCDEFGHIJ0123456789';
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  for (const [header, expected] of [
    [`Bearer ${token}`, token],
    [`bearer  ${token} `, token],
    [`Basic ${b64(`anyone:${token}`)}`, token],
    [`Basic ${b64(`:${token}`)}`, token],
    [`ApiKey ${token}`, token],
    [`ApiKey ${b64(`id-1:${token}`)}`, token],
    [`ApiKey ${b64(token)}`, token],
    [`Basic ${b64(token)}`, undefined],
    ['Basic !!!', undefined],
    [`Digest ${token}`, undefined],
    [undefined, undefined],
  ] as const) {
    test(`${String(header).replace(token, '<token>')} → ${expected ? '<token>' : 'none'}`, () => assert.equal(tokenOf(header), expected));
  }
});

test("a snappy block's length preamble is read before inflating", () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 3000 }), (bytes) => assert.equal(snappyLength(snappy.compressSync(Buffer.from(bytes))), bytes.length)));
});

test('_id → event id: a UUID as it is (lower case); any other id a stable UUID per index', () => {
  assert.equal(eventIdOf('a', '0190A3B2-0000-7000-8000-000000000001'), '0190a3b2-0000-7000-8000-000000000001');
  assert.equal(eventIdOf('a', 'x'), eventIdOf('a', 'x'));
  assert.notEqual(eventIdOf('a', 'x'), eventIdOf('b', 'x'));
  assert.match(eventIdOf('a', 'x'), /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

test('shipped items build the same events again: a request whose new dataset another request created meanwhile builds its events a second time from its items', () => {
  const items: MappedEvent[] = [
    { object: { message: 'pino es line 1', level: 30, player: { id: 1 } }, line: undefined, bytes: 60, plain: undefined, ts: 1_700_000_000_000, severity: undefined, eventId: undefined, labels: { job: 'game' } },
    { object: undefined, line: 'a plain line', bytes: 12, plain: undefined, ts: 1_700_000_000_001, severity: 2, eventId: undefined, labels: undefined },
  ];
  const defaults = { datasetId: 'ds_1', defaultSeverity: 1, now: 1_700_000_000_500, overflowFrom: undefined };
  const strip = (events: ReturnType<typeof normaliseMapped>['events']) => events.map(({ eventId: _id, ...rest }) => rest);
  const first = normaliseMapped(items, defaults);
  const second = normaliseMapped(items, { ...defaults, datasetId: 'ds_2' });
  assert.equal(first.events[0]!.message, 'pino es line 1');
  assert.deepEqual(strip(second.events), strip(first.events).map((e) => ({ ...e, datasetId: 'ds_2' })));
});
