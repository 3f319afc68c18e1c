/**
 * The loader's scan of a payload's bytes for its hot keys (hot-scan.ts) must fill exactly what
 * extractHotValues (the reference: JSON.parse, then a lookup per key) fills, or hand the payload
 * to it: random and hand-written JSON texts — plain, escaped, nested, duplicated, broken —
 * against layouts with top-level, nested, odd and overlapping keys. (soql-hot-agreement.test.ts holds
 * the same end to end, through DuckDB, over the loader's own chunks.)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { extractHotValues, nextSlots, pointerPath, type HotKey, type HotSlot, type HotValues } from './hot-columns.js';
import { Found, HotScanner } from './hot-scan.js';

const keys: HotKey[] = [
  { pointer: '/map', type: 'string' },
  { pointer: '/ping', type: 'number' },
  { pointer: '/ranked', type: 'boolean' },
  { pointer: '/b', type: 'string' },
  { pointer: '/b/a', type: 'string' },
  { pointer: '/b/n', type: 'number' },
  { pointer: '/x y', type: 'number' },
  { pointer: '/~0~1k', type: 'string' },
  { pointer: '/é', type: 'string' },
  { pointer: '/__proto__', type: 'number' },
];
const slots = nextSlots([], keys)!;

/** What the chunk makes of a scan (duckdb-chunk.ts addBytes), as extractHotValues writes it. */
function scanned(scanner: HotScanner, layout: readonly HotSlot[], body: Buffer): HotValues | undefined {
  if (!scanner.scan(body, 0, body.length)) return undefined;
  const out: HotValues = { strings: [], numbers: [], json: 0 };
  layout.forEach((s, j) => {
    out.strings[s.slot] = null;
    out.numbers[s.slot] = null;
    const found = scanner.found[j]!;
    const text = found === Found.Bytes ? body.toString('utf8', scanner.start[j]!, scanner.start[j]! + scanner.length[j]!) : scanner.text[j];
    if (found === Found.Missing) return;
    if (s.type === 'number' && found === Found.Number && Number.isFinite(scanner.numbers[j]!)) out.numbers[s.slot] = scanner.numbers[j]!;
    else if (s.type === 'string' && (found === Found.Bytes || found === Found.Text) && !text!.includes('\u0000')) out.strings[s.slot] = text!;
    else if (s.type === 'boolean' && (found === Found.True || found === Found.False)) out.strings[s.slot] = found === Found.True ? 'true' : 'false';
    else out.json = (out.json | (1 << s.slot)) >>> 0;
  });
  return out;
}

function reference(layout: readonly HotSlot[], text: string): HotValues {
  const out: HotValues = { strings: [], numbers: [], json: 0 };
  extractHotValues(layout, layout.map((s) => pointerPath(s.pointer)), text, out);
  return out;
}

/** The scan agrees with the reference, or declines (false); `plain`: it must not decline. */
function check(text: string, plain = false, layout: readonly HotSlot[] = slots): boolean {
  const got = scanned(new HotScanner(layout), layout, Buffer.from(text, 'utf8'));
  if (!got) {
    assert.ok(!plain, `the scan declined a plain payload: ${text}`);
    return false;
  }
  const want = reference(layout, text);
  assert.deepEqual(got, want, text);
  // -0 stays -0 (deepEqual does not tell it from 0).
  got.numbers.forEach((n, k) => assert.ok(Object.is(n, want.numbers[k]), text));
  return true;
}

test('plain payloads are scanned, with what JSON.parse gives', () => {
  for (const text of [
    '{"map":"dust2","ping":42,"ranked":true,"b":{"a":"x","n":-1.5e3},"x y":0,"~/k":"t","é":"ü","__proto__":7}',
    '{}',
    ' { "map" : "" , "ping" : -0 } ',
    '{"ping":123456789012345,"b":"s"}',
    '{"ping":1234567890123456789,"ranked":false}',
    '{"ping":1e400}',
    '{"ping":0.1,"b":{"a":null,"n":"7"}}',
    '{"map":"a\\"b\\\\c\\u00e9\\n","b":[{"a":"y"}]}',
    '{"map":"\\u0000","ping":null,"ranked":"true"}',
    '{"map":{"a":1},"b":{"a":{"deep":[1,2,{"x":"y"}]},"n":true}}',
    '{"other":[1,{"a\\u0062":"b"},"c",null,true,false,-2.5E-3],"map":"mirage"}',
    '{"b":null,"x y":"1"}',
    '{"map":"ünïcödé and longer than twelve","é":"p_0000012345"}',
  ]) {
    check(text, true);
  }
});

test('payloads that are not plain are left to the reference', () => {
  for (const text of [
    '{"map":"a","map":"b"}',
    '{"m\\u0061p":"escaped key"}',
    '{"map":"\\ud83d\\ude00"}',
    '{"other":"\\udc00"}',
    '[1,2]',
    '"text"',
    '{"map":"x",}',
    '{"map":"x"} x',
    '{"ping":01}',
    '{"ping":1.}',
    '{"ping":-}',
    '{"map":"tab\tin"}',
    '{"b":{"a":"x","a":"y"}}',
    `${'{"a":'.repeat(70)}1${'}'.repeat(70)}`,
    '{"map":"x"',
    '\ufeff{"map":"x"}',
    '{"map":tru}',
  ]) {
    assert.equal(check(text), false, text);
  }
});

test('random JSON texts: the scan equals the reference or declines', () => {
  const keyArb = fc.constantFrom('map', 'ping', 'ranked', 'b', 'a', 'n', 'x y', '~/k', 'é', '__proto__', 'other', 'm\u0061p');
  const scalar = fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.constantFrom('dust2', '', '\u0000', 'é', 'a"b', 'back\\slash', '\ud800', 'line\nbreak'),
    fc.integer(),
    fc.double(),
    fc.constantFrom(-0, 1e21, 2 ** 53 + 1, 123456789012345, 1e-7),
    fc.boolean(),
    fc.constant(null),
  );
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      scalar,
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(keyArb, tie('value'), { maxKeys: 5 }),
    ),
  }));
  const payload = fc.dictionary(keyArb, value, { maxKeys: 8 });
  // JSON.stringify's text, also respaced and with a key written twice (as a client may send it).
  const text = fc.tuple(payload, fc.constantFrom('plain', 'spaced', 'twice')).map(([p, how]) => {
    const json = JSON.stringify(p);
    if (how === 'spaced') return JSON.stringify(p, null, 1);
    if (how === 'twice' && json.length > 2) return `{"map":"first",${json.slice(1)}`;
    return json;
  });
  let runs = 0;
  let scannedRuns = 0;
  fc.assert(
    fc.property(text, (t) => {
      runs++;
      if (check(t)) scannedRuns++;
    }),
    { numRuns: 3000 },
  );
  // Most are plain (only a key twice, an escaped surrogate or deep nesting declines): the scan is what is tested.
  assert.ok(scannedRuns > runs / 2, `${scannedRuns} of ${runs} scanned`);
});

test('a payload is read within its bounds: the record’s bytes after it do not complete it', () => {
  const scanner = new HotScanner(slots);
  const cut: Array<[string, string]> = [
    ['{', '}'],
    ['{"map":"x"', '}'],
    ['{"map":"x', '"}'],
    ['{"ping":1', '2}'],
    ['{"ranked":tr', 'ue}'],
    ['{"map"', ':"x"}'],
    ['{"b":{"a":"x"}', '}'],
  ];
  for (const [text, rest] of cut) {
    const body = Buffer.from(`[${text}${rest}]`, 'utf8');
    assert.equal(scanner.scan(body, 1, 1 + Buffer.byteLength(text)), false, text);
  }
  const body = Buffer.from('xx{"map":"dust2","ping":7}yy', 'utf8');
  assert.equal(scanner.scan(body, 2, body.length - 2), true);
  assert.equal(body.toString('utf8', scanner.start[0]!, scanner.start[0]! + scanner.length[0]!), 'dust2');
  assert.equal(scanner.numbers[1], 7);
});

test('a layout holding a key with a lone surrogate is always left to the reference', () => {
  const odd = nextSlots([], [{ pointer: '/\ud800', type: 'string' }])!;
  assert.equal(new HotScanner(odd).scan(Buffer.from('{}'), 0, 2), false);
});
