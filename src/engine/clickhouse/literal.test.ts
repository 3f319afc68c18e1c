/**
 * literal.ts is the one way a value enters ClickHouse SQL, so these properties try to break
 * out of its literals:
 * - without a server: a reader of ClickHouse's single-quoted literal grammar (its lexer and
 *   string-literal parser, over UTF-8 bytes) consumes exactly `stringLiteral(s)` and decodes it
 *   back to s, for any string; `bindParams` leaves the statement's skeleton as it was; wrong
 *   counts and non-finite numbers throw. The same properties run against broken escapers and
 *   must fail there, so they are known to be able to fail.
 * - with a server (OPS_TEST_CLICKHOUSE_URL, from `eval "$(scripts/clickhouse.sh env)"`; the ClickHouse
 *   leg): `SELECT <literal(s)>` returns s byte for byte, and a tenant condition holds
 *   whatever the other value is (the "tenant wall").
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { parseClickHouseUrl } from '../../config/clickhouse-url.js';
import { bindParams, literal, stringLiteral, type SqlValue } from './literal.js';
import { legs } from '../../test-support/ci.js';

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

/**
 * Reads the '…' literal starting at `start` as ClickHouse does (18.16 and current): the lexer
 * ends it at the first `'` that is neither escaped by a backslash nor doubled (`''` is a
 * quote), and a backslash escapes the next byte; the parser then decodes `\b \f \n \r \t \0 \a
 * \v \e`, `\xHH`, and any other escaped byte as itself. null when unterminated.
 */
function readStringLiteral(src: Uint8Array, start: number): { end: number; value: Buffer } | null {
  assert.equal(src[start], 0x27, 'a literal starts with a quote');
  const out: number[] = [];
  const named: Record<string, number> = { b: 8, f: 12, n: 10, r: 13, t: 9, '0': 0, a: 7, v: 11, e: 27 };
  for (let i = start + 1; i < src.length; i++) {
    const c = src[i]!;
    if (c === 0x27) {
      if (src[i + 1] === 0x27) {
        out.push(0x27);
        i++;
        continue;
      }
      return { end: i + 1, value: Buffer.from(out) };
    }
    if (c !== 0x5c) {
      out.push(c);
      continue;
    }
    if (i + 1 >= src.length) return null;
    const e = String.fromCharCode(src[++i]!);
    if (e === 'x') {
      out.push(parseInt(String.fromCharCode(src[i + 1]!, src[i + 2]!), 16));
      i += 2;
    } else {
      out.push(named[e] ?? src[i]!);
    }
  }
  return null;
}

type Piece = { kind: 'text'; bytes: Buffer } | { kind: 'literal'; raw: Buffer; value: Buffer } | { kind: 'hole' };

/** Splits SQL into text and literals (and, in a skeleton, the `?` holes of its text). */
function tokenize(sql: string, holes: boolean): Piece[] {
  const src = utf8(sql);
  const pieces: Piece[] = [];
  let text: number[] = [];
  const flush = (): void => {
    if (text.length) pieces.push({ kind: 'text', bytes: Buffer.from(text) });
    text = [];
  };
  for (let i = 0; i < src.length; ) {
    if (src[i] === 0x27) {
      const lit = readStringLiteral(src, i);
      assert.ok(lit, `unterminated literal at byte ${i} of ${JSON.stringify(sql)}`);
      flush();
      pieces.push({ kind: 'literal', raw: Buffer.from(src.subarray(i, lit.end)), value: lit.value });
      i = lit.end;
    } else if (holes && src[i] === 0x3f) {
      flush();
      pieces.push({ kind: 'hole' });
      i++;
    } else {
      text.push(src[i++]!);
    }
  }
  flush();
  return pieces;
}

/** Strings of every kind: any UTF-16 (lone surrogates included), full Unicode, and hostile soup. */
const HOSTILE = ["'", "''", '\\', "\\'", "\\''", '?', '??', ' OR 1=1', '--', '/*', '*/', ';', '\n', '\r', '\t', '\0', '\b', '\f',
  '\x1b', '\\x27', '\\0', 'é', '😀', '\u2028', '\ufeff', "' AND tenant = 'b", "'); DROP TABLE t; --", '%', '_'];
const anyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
  fc.string({ unit: fc.constantFrom("'", '\\', '\0', 'a', '\n', '"', '?'), maxLength: 20 }),
  fc.array(fc.constantFrom(...HOSTILE), { maxLength: 12 }).map((a) => a.join('')),
);
/** The same without lone surrogates, which UTF-8 cannot carry (they go out as U+FFFD). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const wellFormed = anyString.filter((s) => !LONE_SURROGATE.test(s));

/** The round trip of one literal, followed by more SQL, for an escaper. */
const roundTrips = (quote: (s: string) => string) =>
  fc.property(anyString, fc.constantFrom('', ' AND 1', ')', ', ?', ' OR x = 1 --'), (s, rest) => {
    const lit = utf8(quote(s));
    const read = readStringLiteral(utf8(quote(s) + rest), 0);
    assert.ok(read, 'the literal is terminated');
    assert.equal(read.end, lit.length, 'the literal ends where stringLiteral ends it');
    assert.ok(read.value.equals(utf8(s)), 'the literal decodes to s');
  });

describe('literal.ts against ClickHouse literal grammar (no server)', () => {
  test('the reader decodes ClickHouse literals it is given by hand', () => {
    const read = (sql: string): string | null => readStringLiteral(utf8(sql), 0)?.value.toString('utf8') ?? null;
    assert.equal(read("'a''b' x"), "a'b");
    assert.equal(read("'a\\'b'"), "a'b");
    assert.equal(read("'\\x41\\0\\n\\\\'"), 'A\0\n\\');
    assert.equal(read("'\\q'"), 'q');
    assert.equal(read("'abc"), null);
    assert.equal(read("'abc\\'"), null);
  });

  test('stringLiteral(s) is exactly one literal that decodes to s, for any string', () => {
    fc.assert(roundTrips(stringLiteral), { numRuns: 5000 });
  });

  test('the round trip property fails for broken escapers (it can fail)', () => {
    const broken: [string, (s: string) => string][] = [
      ['no escaping', (s) => `'${s}'`],
      ['quotes only', (s) => `'${s.replace(/'/g, "\\'")}'`],
      ['SQL-style doubling only', (s) => `'${s.replace(/'/g, "''")}'`],
      ['backslashes after quotes', (s) => `'${s.replace(/'/g, "\\'").replace(/\\/g, '\\\\')}'`],
      ['NUL written as 0', (s) => `'${s.replace(/[\\']/g, (c) => `\\${c}`).replace(/\0/g, '0')}'`],
    ];
    for (const [name, quote] of broken) {
      assert.ok(fc.check(roundTrips(quote), { numRuns: 5000 }).failed, `${name} passed`);
    }
  });

  test('bindParams: the skeleton stays intact and each `?` becomes a literal of its value', () => {
    // Pieces are joined by spaces: a `?` right before or after a `'` would merge with it (`''`).
    const piece = fc.constantFrom('SELECT', 'count()', 'FROM t', 'WHERE', 'tenant =', 'message =', 'AND', 'OR', 'NOT', '(', ')', ',',
      'lowerUTF8(', "replaceAll(x, '\\xC4\\xB0', 'i')", "'null'", "''", "'a\\'b'", '?', '?', '?', 'x', '1', 'LIKE', '%');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }).chain((pieces) => {
        const sql = pieces.join(' ');
        const holes = sql.split('?').length - 1;
        return fc.tuple(fc.constant(sql), fc.array(anyString, { minLength: holes, maxLength: holes }));
      }), ([skeleton, params]) => {
        const bound = tokenize(bindParams(skeleton, params), false);
        const expected = tokenize(skeleton, true);
        // Holes become literals; merge neighbouring text as the bound SQL's tokenizer would.
        assert.equal(bound.length, expected.length, 'as many pieces');
        let k = 0;
        expected.forEach((want, i) => {
          const got = bound[i]!;
          if (want.kind === 'hole') {
            assert.equal(got.kind, 'literal');
            assert.ok(got.kind === 'literal' && got.value.equals(utf8(params[k++]!)), `value ${k}`);
          } else if (want.kind === 'text') {
            assert.ok(got.kind === 'text' && got.bytes.equals(want.bytes), 'text intact');
          } else {
            assert.ok(got.kind === 'literal' && got.raw.equals(want.raw), 'constant literal intact');
          }
        });
        assert.equal(k, params.length);
      }),
      { numRuns: 2000 },
    );
  });

  test('bindParams: a count mismatch throws', () => {
    fc.assert(
      fc.property(fc.nat(6), fc.nat(6), (holes, values) => {
        fc.pre(holes !== values);
        const sql = Array.from({ length: holes }, () => 'x = ?').join(' AND ');
        assert.throws(() => bindParams(sql, Array.from({ length: values }, () => 'v')), /placeholders/);
      }),
    );
  });

  test('bindParams refuses a template where two literals could touch (they would read as one)', () => {
    assert.throws(() => bindParams('SELECT ??', ['a', 'b']), /touches/);
    assert.throws(() => bindParams("SELECT 'x'?", ['a']), /touches/);
    assert.throws(() => bindParams("SELECT ?'x'", ['a']), /touches/);
    assert.equal(bindParams('SELECT ?, ?', ['a', "b'"]), "SELECT 'a', 'b\\''");
  });

  test('NaN and infinities are refused, by literal and by bindParams', () => {
    for (const n of [NaN, Infinity, -Infinity]) {
      assert.throws(() => literal(n), /cannot hold/);
      assert.throws(() => bindParams('SELECT ?', [n]), /cannot hold/);
    }
  });

  test('other values: safe integers as digits, other numbers as their exact IEEE 754 bytes, 1/0, NULL, bigints', () => {
    fc.assert(
      fc.property(fc.oneof(fc.maxSafeInteger(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.bigInt()), (v) => {
        const out = literal(v);
        if (v === null) assert.equal(out, 'NULL');
        else if (typeof v === 'boolean') assert.equal(out, v ? '1' : '0');
        else if (typeof v === 'bigint' || Number.isSafeInteger(v)) assert.equal(out, String(v));
        else {
          const m = /^reinterpretAsFloat64\(unhex\('([0-9A-F]{16})'\)\)$/.exec(out);
          assert.ok(m, out);
          assert.ok(Object.is(Buffer.from(m[1]!, 'hex').readDoubleLE(0), v), out);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

const url = process.env['OPS_TEST_CLICKHOUSE_URL'];
const onLeg = legs.clickhouse();

onLeg.describe('literal.ts on a ClickHouse server', () => {
  const target = url ? parseClickHouseUrl(url) : null;
  const db = `literal_test_${randomBytes(6).toString('hex')}`;
  const run = async (sql: string, params: readonly SqlValue[] = []): Promise<string> => {
    const res = await fetch(`${target!.hosts[0]}/`, {
      method: 'POST',
      body: bindParams(sql, params),
      headers: { 'X-ClickHouse-User': target!.username, 'X-ClickHouse-Key': target!.password },
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`ClickHouse: ${text.slice(0, 1000)}`);
    return text;
  };
  before(async () => {
    await run(`CREATE DATABASE ${db}`);
    await run(`CREATE TABLE ${db}.t (tenant String, message String) ENGINE = MergeTree ORDER BY tenant`);
  });
  after(async () => {
    await run(`DROP DATABASE IF EXISTS ${db}`);
  });

  test('SELECT <literal(s)> returns s exactly (random well-formed strings; lone surrogates cannot be sent as UTF-8)', async () => {
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(wellFormed, { minLength: 1, maxLength: 10 }), async (strings) => {
        // hex() shows the bytes; the JSON value shows what a client reads back.
        const text = await run(`SELECT ${strings.map((_, i) => `hex(?) AS h${i}, ? AS v${i}`).join(', ')} FORMAT JSONEachRow`, strings.flatMap((s) => [s, s]));
        const row = JSON.parse(text) as Record<string, string>;
        strings.forEach((s, i) => {
          assert.equal(row[`h${i}`], utf8(s).toString('hex').toUpperCase(), JSON.stringify(s));
          assert.equal(row[`v${i}`], s, JSON.stringify(s));
        });
        checked += strings.length;
      }),
      { numRuns: 60 },
    );
    assert.ok(checked >= 200, `only ${checked} strings`);
    // A long one too (256 KiB is the server's default max_query_size).
    const long = "'\\".repeat(20_000) + '😀'.repeat(1000);
    assert.equal(JSON.parse(await run('SELECT ? AS v FORMAT JSONEachRow', [long])).v, long);
  });

  test('the tenant wall: tenant = ? AND message = ? never counts another tenant\'s rows, never fails to parse', async () => {
    const counts = new Map<string, number>(); // tenant a's rows by message
    await fc.assert(
      fc.asyncProperty(fc.array(wellFormed, { minLength: 1, maxLength: 8 }), async (strings) => {
        // Tenant b holds every string (and a few look-alikes); tenant a every other one.
        const rows: [string, string][] = strings.flatMap((s, i) => [
          ['b', s], ['b', `${s}'`], ['b', `\\${s}`], ...(i % 2 === 0 ? [['a', s] as [string, string]] : []),
        ]);
        await run(`INSERT INTO ${db}.t VALUES ${rows.map(() => '(?, ?)').join(', ')}`, rows.flat());
        for (const [t, m] of rows) if (t === 'a') counts.set(m, (counts.get(m) ?? 0) + 1);
        for (const s of strings) {
          const text = await run(`SELECT count() AS n FROM ${db}.t WHERE tenant = ? AND message = ? FORMAT JSONEachRow`, ['a', s]);
          assert.equal(Number((JSON.parse(text) as { n: string }).n), counts.get(s) ?? 0, JSON.stringify(s));
        }
      }),
      { numRuns: 60 },
    );
    const total = JSON.parse(await run(`SELECT countIf(tenant = 'a') AS a, countIf(tenant = 'b') AS b FROM ${db}.t FORMAT JSONEachRow`)) as Record<string, string>;
    assert.equal(Number(total['a']), [...counts.values()].reduce((x, y) => x + y, 0));
    assert.ok(Number(total['b']) > Number(total['a']));
  });
});
