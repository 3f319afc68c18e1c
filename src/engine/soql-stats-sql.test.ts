/**
 * The SQL `stats` compiles to, per dialect, pinned as text (a change shows in review as a diff);
 * what it answers on each engine is checked against a reference by src/query/stats.test.ts,
 * which runs on DuckDB and, on the ClickHouse leg, on ClickHouse. Also the time range rules of
 * planStats (SOQL.md: the default 24 hours, at most 1,440 bins), and on DuckDB itself that the
 * one-parse payload number (duckDbPayloadNumber) reads a JSON number and nothing else.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { AppError } from '../errors/app-error.js';
import { parseSoql, planStats, printSoql, withoutPositions, type SoqlQuery } from '../soql/index.js';
import { compileStats } from './soql-compile.js';
import { duckDbCannotRead, lookupPayload } from '../soql/predicate.js';

const numbersDuckDb = (p: string) => `TRY_CAST(CAST(TRY(json_extract(payload, ${p})) AS VARCHAR) AS DOUBLE)`;
const numbersClickHouse = (p: string) =>
  `if(arrayElement(payload_types, indexOf(payload_paths, ?)) = 2, arrayElement(payload_numbers, indexOf(payload_paths, ?)), NULL)`.replace(/\?/g, () => p);

/** The compiled text with its parameters put in place of `?`, to read as one string. */
function text(q: string, dialect: 'duckdb' | 'clickhouse'): { keys: string[]; values: string[]; orderBy: string } {
  const c = compileStats(parseSoql(q).stats!, dialect);
  const inline = (k: { sql: string; params: ReadonlyArray<unknown> }) => {
    let i = 0;
    return k.sql.replace(/\?/g, () => `'${String(k.params[i++])}'`);
  };
  return { keys: c.keys.map(inline), values: c.values.map(inline), orderBy: c.orderBy };
}

test('count by bin: epoch-aligned bins (also before 1970), by bin then count', () => {
  const bin = '(ts - (((ts % 300000) + 300000) % 300000))';
  assert.deepEqual(text('stats count() by bin(5m)', 'duckdb'), { keys: [bin], values: ['count(*)'], orderBy: 'k0 ASC, v0 DESC NULLS LAST' });
  assert.deepEqual(text('stats count() by bin(5m)', 'clickhouse'), { keys: [bin], values: ['count()'], orderBy: 'k0 ASC, v0 DESC NULLS LAST' });
});

test('count_distinct and a percentile by a field: exact on both engines, interpolated between ranks', () => {
  const q = 'stats count_distinct(actor), p95(payload.ping) by source';
  assert.deepEqual(text(q, 'duckdb'), {
    keys: ['source'],
    values: ['count(DISTINCT actor)', `quantile_cont(${numbersDuckDb("'/ping'")}, 0.95)`],
    orderBy: 'v0 DESC NULLS LAST, k0 ASC NULLS LAST',
  });
  assert.deepEqual(text(q, 'clickhouse'), {
    keys: ['source'],
    values: [
      'ifNull(count(DISTINCT actor), 0)',
      `if((length(groupArray(${numbersClickHouse("'/ping'")}) AS _a1) AS _n1) = 0, NULL, ` +
        "(arrayReduce('quantileExact(0.5)', arrayConcat(_a1, arrayResize([(if(2 * (toUInt64(floor(((greatest(_n1, 1) - 1) * 0.95) AS _p1)) AS _l1) >= _n1, inf, -inf) AS _e1)], " +
        'toUInt64(abs(toInt64(2 * _l1) - toInt64(_n1))), _e1))) AS _v1) + (_p1 - _l1) * ' +
        "(if(_l1 + 1 >= _n1 OR arrayCount(_x1 -> _x1 <= _v1, _a1) > _l1 + 1, _v1, arrayReduce('min', arrayFilter(_x1 -> _x1 > _v1, _a1))) - _v1))",
    ],
    orderBy: 'v0 DESC NULLS LAST, k0 ASC NULLS LAST',
  });
});

test('sums and averages of payload numbers and bytes_raw, by a payload value and a bin', () => {
  const q = 'stats sum(bytes_raw), avg(payload.match.ping) by payload.map, bin(1h)';
  const bin = '(ts - (((ts % 3600000) + 3600000) % 3600000))';
  assert.deepEqual(text(q, 'duckdb'), {
    keys: ["NULLIF(TRY(json_extract(payload, '/map'))::VARCHAR, 'null')", bin],
    values: ['sum(CAST(bytes_raw AS DOUBLE))', `avg(${numbersDuckDb("'/match/ping'")})`],
    orderBy: 'k1 ASC, v0 DESC NULLS LAST, k0 ASC NULLS LAST',
  });
  assert.deepEqual(text(q, 'clickhouse'), {
    keys: ["nullIf(nullIf(arrayElement(payload_json, indexOf(payload_paths, '/map')), 'null'), '')", bin],
    values: ['sum(toFloat64(bytes_raw))', `avg(${numbersClickHouse("'/match/ping'")})`],
    orderBy: 'k1 ASC, v0 DESC NULLS LAST, k0 ASC NULLS LAST',
  });
});

const now = Date.UTC(2026, 10, 24, 12);
const plan = (q: string): SoqlQuery => planStats(parseSoql(q), q, now);

test('a bin without a lower ts bound gets the last 24 hours; with one, the query is unchanged', () => {
  assert.equal(printSoql(plan('stats count() by bin(1m)')), 'ts >= now-24h stats count() by bin(1m)');
  assert.equal(printSoql(plan('severity >= warn OR ts >= now-1h stats count() by bin(1h)')), '(severity >= warn OR ts >= now-1h) AND ts >= now-24h stats count() by bin(1h)');
  for (const q of ['ts >= now-2h stats count() by bin(1m)', 'stats count() by source', 'a:1 group by b', 'a:1']) {
    assert.deepEqual(withoutPositions(plan(q)), withoutPositions(parseSoql(q)), q);
  }
});

test('at most 1,440 bins over the range: the range ends at the upper ts bound, else now', () => {
  const bins = (q: string) => {
    try {
      plan(q);
      return 'ok';
    } catch (error) {
      assert.ok(error instanceof AppError && error.code === 'soql_parse_error');
      return error.message;
    }
  };
  assert.equal(bins('stats count() by bin(1m)'), 'ok');
  assert.equal(bins('ts >= now-1440m stats count() by bin(1m)'), 'ok');
  assert.match(bins('ts >= now-1441m stats count() by bin(1m)'), /1,441 bins .*use bin\(2m\) or wider/);
  assert.equal(bins('ts >= 2026-01-01T00:00:00Z AND ts < 2026-01-01T23:59:00Z stats count() by bin(1m)'), 'ok');
  assert.match(bins('ts >= 2026-01-01T00:00:00Z AND ts <= 2026-01-02T00:01:00Z stats count() by bin(1m)'), /1,441 bins/);
  assert.match(bins('ts >= 2020-01-01T00:00:00Z stats count() by bin(1d)'), /use bin\(2d\) or wider/);
  assert.match(bins('ts >= 0001-01-01T00:00:00Z stats count() by bin(366d)'), /bins .*narrow the ts range$/);
});

test('stats queries print and parse back to the same tree', () => {
  const field = fc.constantFrom('source', 'actor', 'dataset', 'severity', 'bytes_raw', 'payload.map', 'payload.`odd key`.x', 'ts');
  const numeric = fc.constantFrom('bytes_raw', 'payload.ping', 'payload.a.b');
  const aggregate = fc.oneof(
    fc.constant('count()'),
    field.map((f) => `count_distinct(${f})`),
    fc.tuple(fc.constantFrom('sum', 'avg', 'min', 'max', 'p50', 'p90', 'p95', 'p99'), numeric).map(([fn, f]) => `${fn}(${f})`),
  );
  const byItem = fc.oneof(field, fc.tuple(fc.integer({ min: 1, max: 99 }), fc.constantFrom('s', 'm', 'h', 'd')).map(([n, u]) => `bin(${n}${u})`));
  fc.assert(
    fc.property(
      fc.constantFrom('', 'severity >= warn', 'a:1 OR b:2'),
      fc.uniqueArray(aggregate, { minLength: 1, maxLength: 10 }),
      fc.uniqueArray(byItem, { maxLength: 3, selector: (b) => (b.startsWith('bin(') ? 'bin' : b) }),
      (filter, aggregates, by) => {
        const q = `${filter} stats ${aggregates.join(', ')}${by.length ? ` by ${by.join(', ')}` : ''}`;
        const parsed = parseSoql(q);
        assert.equal(parsed.stats?.aggregates.length, aggregates.length);
        assert.deepEqual(withoutPositions(parseSoql(printSoql(parsed))), withoutPositions(parsed), q);
      },
    ),
  );
});

test('DuckDB reads a payload field as a number exactly when it is a JSON number (random payloads, the compiled expression)', async () => {
  const x = compileStats(parseSoql('stats sum(payload.a.x)').stats!, 'duckdb').values[0]!;
  const numbers = { sql: x.sql.replace(/^sum\((.*)\)$/, '$1'), params: x.params };
  assert.deepEqual(numbers.params, ['/a/x']);
  const instance = await DuckDBInstance.create(':memory:');
  const con = await instance.connect();
  try {
    const special = fc.constantFrom<unknown>(
      0, -0, 1e21, -1e-7, 5e-324, 1.7976931348623157e308, 2 ** 53 + 1, -(2 ** 63) - 1, 2 ** 64, 1.2345678901234568e29, 0.1,
      '150', '1e3', ' 1', 'inf', 'NaN', 'Infinity', '-0', '', true, false, null, [1], { y: 2 }, '\ud800',
    );
    const value = fc.oneof(special, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.jsonValue({ maxDepth: 2 }));
    // The node sits at /a/x (nested, with neighbours), elsewhere, or nowhere.
    const payload = fc.oneof(
      fc.tuple(value, value).map(([v, w]) => ({ a: { x: v, z: w } })),
      value.map((v) => ({ a: v, x: v })),
      fc.constant({}),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(payload, { minLength: 1, maxLength: 20 }), async (payloads) => {
        const texts = payloads.map((p) => JSON.stringify(p));
        const rows = await Promise.all(
          texts.map(async (text) => (await con.runAndReadAll(`SELECT ${numbers.sql} FROM (SELECT ?::VARCHAR AS payload)`, [...numbers.params, text])).getRows()[0]![0]),
        );
        const expected = texts.map((text) => {
          const v = duckDbCannotRead(text) ? undefined : lookupPayload(JSON.parse(text) as Record<string, unknown>, ['a', 'x']);
          return typeof v === 'number' ? v : null;
        });
        // -0 is stored as 0 (JSON.stringify), so === is the comparison.
        rows.forEach((got, i) => assert.ok(got === expected[i], `${texts[i]}: ${String(got)} ≠ ${String(expected[i])}`));
      }),
      { numRuns: 300 },
    );
  } finally {
    con.closeSync();
    instance.closeSync();
  }
});
