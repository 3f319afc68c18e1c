/**
 * SOQL `stats` through POST /v1/query (SOQL.md "Statistics"), on the server's events engine:
 * DuckDB by default, ClickHouse on the ClickHouse leg (OPS_TEST_CLICKHOUSE_URL), so the same
 * table of queries and the same random queries check both engines against one reference
 * written here in JavaScript over the events the API returns.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { lookupPayload } from '../soql/predicate.js';

const min = 60_000;
const hour = 60 * min;
const severities = ['debug', 'info', 'warn', 'error', 'fatal'];
const maps = ['dust', 'nuke', 'inferno', null];

interface ApiEvent {
  ts: string;
  dataset: string;
  severity: string;
  source: string | null;
  actor: string | null;
  event: string;
  bytes_raw: number;
  payload: Record<string, unknown>;
}

/** 240 events over the last 30 hours in two datasets, payload values of every JSON type. */
function fixture(now: number): Array<{ dataset: string; event: Record<string, unknown> }> {
  return Array.from({ length: 240 }, (_, i) => {
    const payload: Record<string, unknown> = { round: i % 7 };
    if (i % 5 !== 0) payload.ping = (i * 37) % 400 + (i % 3 === 0 ? 0.25 : 0);
    if (i % 11 === 0) payload.ping = String(i); // a string is not a number: ignored by sum…
    if (i % 13 === 0) payload.ping = true;
    const map = maps[i % 4];
    if (map !== null) payload.map = map;
    if (i % 17 === 0) payload.map = { nested: i % 2 };
    if (i % 9 === 0) payload.flag = i % 2 === 0;
    return {
      dataset: i % 3 === 0 ? 'auth' : 'game',
      event: {
        ts: new Date(now - Math.floor((i * 30 * hour) / 240) - 1_000).toISOString(),
        severity: severities[i % 5],
        event: `e${i % 6}`,
        ...(i % 4 !== 0 ? { source: `srv-${i % 3}` } : {}),
        ...(i % 6 !== 0 ? { actor: `p${i % 20}` } : {}),
        message: `m${i}`,
        payload,
      },
    };
  });
}

type Value = unknown;

/** A by-item's value for one event, as the API answers it. */
function byValue(e: ApiEvent, item: string): Value {
  const bin = /^bin\((\d+)([smhd])\)$/.exec(item);
  if (bin) {
    const width = Number(bin[1]) * { s: 1_000, m: min, h: hour, d: 24 * hour }[bin[2] as 's']!;
    const ts = Date.parse(e.ts);
    return new Date(ts - (((ts % width) + width) % width)).toISOString();
  }
  if (item.startsWith('payload.')) {
    const v = lookupPayload(e.payload, item.slice('payload.'.length).split('.'));
    return typeof v === 'symbol' || v === undefined ? null : v;
  }
  return (e as unknown as Record<string, unknown>)[item] ?? null;
}

const numberOf = (e: ApiEvent, field: string): number | null => {
  const v = byValue(e, field);
  return typeof v === 'number' ? v : null;
};

function aggregate(events: ApiEvent[], agg: string): number | null {
  if (agg === 'count()') return events.length;
  const m = /^(\w+)\((.+)\)$/.exec(agg)!;
  const [fn, field] = [m[1]!, m[2]!];
  if (fn === 'count_distinct') return new Set(events.map((e) => byValue(e, field)).filter((v) => v !== null).map((v) => JSON.stringify(v))).size;
  const xs = events.map((e) => numberOf(e, field)).filter((x): x is number => x !== null);
  if (!xs.length) return null;
  switch (fn) {
    case 'sum':
      return xs.reduce((a, b) => a + b, 0);
    case 'avg':
      return xs.reduce((a, b) => a + b, 0) / xs.length;
    case 'min':
      return Math.min(...xs);
    case 'max':
      return Math.max(...xs);
    default: {
      const level = Number(fn.slice(1)) / 100;
      const s = [...xs].sort((a, b) => a - b);
      const pos = (s.length - 1) * level;
      const lo = Math.floor(pos);
      return s[lo]! + (pos - lo) * (s[Math.min(lo + 1, s.length - 1)]! - s[lo]!);
    }
  }
}

/** The answer SOQL.md describes, computed from the matching events (order checked separately). */
function reference(events: ApiEvent[], aggregates: string[], by: string[]) {
  const groups = new Map<string, { by: Record<string, Value>; events: ApiEvent[] }>();
  for (const e of events) {
    const values = Object.fromEntries(by.map((item) => [item, byValue(e, item)]));
    const key = JSON.stringify(by.map((item) => values[item]));
    const group = groups.get(key) ?? { by: values, events: [] };
    group.events.push(e);
    groups.set(key, group);
  }
  if (!by.length && !groups.size) groups.set('[]', { by: {}, events: [] });
  return [...groups.values()].map((g) => ({ by: g.by, values: Object.fromEntries(aggregates.map((a) => [a, aggregate(g.events, a)])) }));
}

const close = (a: unknown, b: unknown) =>
  typeof a === 'number' && typeof b === 'number' ? Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b)) : a === b;

type Row = { by: Record<string, Value>; values: Record<string, number | null> };

function assertSameRows(actual: Row[], expected: Row[], q: string): void {
  const key = (r: Row) => JSON.stringify(r.by);
  const byKey = new Map(expected.map((r) => [key(r), r]));
  assert.equal(actual.length, expected.length, `${q}: rows ${JSON.stringify(actual)}`);
  for (const row of actual) {
    const want = byKey.get(key(row));
    assert.ok(want, `${q}: unexpected row ${JSON.stringify(row)}`);
    assert.deepEqual(Object.keys(row.values), Object.keys(want.values), q);
    for (const [k, v] of Object.entries(row.values)) assert.ok(close(v, want.values[k]), `${q}: ${key(row)} ${k} = ${v}, expected ${want.values[k]}`);
  }
}

/** SOQL.md's order: by bin ascending, then the first aggregate descending (nulls last). */
function assertOrdered(rows: Row[], aggregates: string[], by: string[], q: string): void {
  const bin = by.find((b) => b.startsWith('bin('));
  const first = aggregates[0]!;
  for (let i = 1; i < rows.length; i++) {
    const [a, b] = [rows[i - 1]!, rows[i]!];
    if (bin && a.by[bin] !== b.by[bin]) {
      assert.ok(String(a.by[bin]) < String(b.by[bin]), `${q}: bins out of order at ${i}`);
      continue;
    }
    const [x, y] = [a.values[first] ?? null, b.values[first] ?? null];
    assert.ok(y === null || (x !== null && x >= y), `${q}: ${first} not descending at ${i}: ${x} then ${y}`);
  }
}

describe('SOQL stats', () => {
  let s: TestServer;
  let now: number;
  let all: ApiEvent[];
  before(async () => {
    s = await startTestServer();
    now = s.clock.now();
    const events = fixture(now);
    for (const dataset of ['game', 'auth']) {
      const r = await s.request('POST', `/datasets/${dataset}/ingest`, { json: events.filter((e) => e.dataset === dataset).map((e) => e.event) });
      assert.equal(r.status, 200, r.text);
    }
    // Another tenant's events: never counted.
    const other = await s.request('POST', '/datasets/game/ingest', { token: s.tenants.b.token, json: events.map((e) => e.event) });
    assert.equal(other.status, 200, other.text);
    all = await eventsOf('');
    assert.equal(all.length, 240);
  });
  after(() => s?.close());

  const query = (q: string, token?: string) => s.request('POST', '/query', { json: { q }, ...(token ? { token } : {}) });

  async function eventsOf(filter: string): Promise<ApiEvent[]> {
    const out: ApiEvent[] = [];
    let cursor = '';
    do {
      const r = await s.request('POST', '/query', { json: { q: filter, ...(cursor ? { cursor } : {}) } });
      assert.equal(r.status, 200, r.text);
      out.push(...r.body.events);
      cursor = r.body.next_cursor;
    } while (cursor);
    return out;
  }

  async function check(filter: string, aggregates: string[], by: string[]): Promise<Row[]> {
    const q = `${filter} stats ${aggregates.join(', ')}${by.length ? ` by ${by.join(', ')}` : ''}`.trim();
    const r = await query(q);
    assert.equal(r.status, 200, `${q}: ${r.text}`);
    assert.deepEqual(Object.keys(r.body), ['stats'], q);
    // A bin without a lower ts bound covers the last 24 hours.
    const scope = by.some((b) => b.startsWith('bin(')) && !filter.includes('ts >') ? `${filter ? `(${filter}) AND ` : ''}ts >= now-24h` : filter;
    const matching = scope === filter && filter === '' ? all : await eventsOf(scope);
    assertSameRows(r.body.stats, reference(matching, aggregates, by), q);
    assertOrdered(r.body.stats, aggregates, by, q);
    return r.body.stats;
  }

  test('SOQL.md examples and every aggregate, by fields and bins', async () => {
    await check('', ['count()'], ['bin(1h)']);
    await check('severity >= warn', ['count()', 'count_distinct(actor)'], ['source']);
    await check('event == "e1"', ['avg(payload.ping)', 'p95(payload.ping)'], ['payload.map']);
    await check('', ['count()', 'sum(payload.ping)', 'avg(payload.ping)', 'min(payload.ping)', 'max(payload.ping)', 'p50(payload.ping)', 'p90(payload.ping)', 'p95(payload.ping)', 'p99(payload.ping)', 'sum(bytes_raw)'], []);
    await check('', ['count_distinct(payload.map)', 'count_distinct(payload.ping)', 'count()'], ['dataset', 'severity']);
    await check('ts >= now-6h', ['count()', 'max(payload.round)'], ['bin(30m)', 'severity', 'payload.flag']);
    await check('ts >= now-2d AND ts <= now-1h', ['p50(bytes_raw)'], ['bin(1d)']);
  });

  test('the answer\'s shape: canonical keys, ISO bins, null where a group has no number', async () => {
    const r = await query('dataset:auth AND payload.ping exists stats COUNT(), Max(ping) by Bin(6H), payload.flag');
    assert.equal(r.status, 200, r.text);
    const row = r.body.stats[0];
    assert.deepEqual(Object.keys(row.by), ['bin(6h)', 'payload.flag']);
    assert.deepEqual(Object.keys(row.values), ['count()', 'max(payload.ping)']);
    assert.match(row.by['bin(6h)'], /^\d{4}-\d\d-\d\dT(00|06|12|18):00:00\.000Z$/);
    // Only strings and booleans in ping for these events: max is null.
    const strings = await query('payload.ping:"11" OR payload.ping == true stats max(payload.ping), count()');
    assert.equal(strings.status, 200, strings.text);
    assert.equal(strings.body.stats[0].values['max(payload.ping)'], null);
    assert.ok(strings.body.stats[0].values['count()'] > 0);
    // Nothing matches: one row with count 0 and nulls.
    const none = await query('event == "nope" stats count(), avg(bytes_raw), count_distinct(source)');
    assert.deepEqual(none.body, { stats: [{ by: {}, values: { 'count()': 0, 'avg(bytes_raw)': null, 'count_distinct(source)': 0 } }] });
    // …and with a by-item, no rows (bins are the non-empty ones).
    assert.deepEqual((await query('event == "nope" stats count() by source')).body, { stats: [] });
  });

  test('a bin without a lower ts bound covers the last 24 hours; too many bins is a parse error that names a width', async () => {
    const day = await query('stats count() by bin(1d)');
    const total = day.body.stats.reduce((n: number, r: Row) => n + r.values['count()']!, 0);
    assert.equal(total, all.filter((e) => Date.parse(e.ts) >= now - 24 * hour).length);
    assert.ok(total < all.length);

    const tooMany = await query('ts >= now-7d stats count() by bin(1m)');
    assert.equal(tooMany.status, 400, tooMany.text);
    assert.equal(tooMany.body.error.code, 'soql_parse_error');
    assert.match(tooMany.body.error.message, /10,080 bins.*at most 1,440.*bin\(10m\)/);
    assert.equal(tooMany.body.error.position, 'ts >= now-7d stats count() by '.length);
    // 24 hours of 1-minute bins fit exactly.
    assert.equal((await query('stats count() by bin(1m)')).status, 200);
    assert.equal((await query('ts >= now-1441m stats count() by bin(1m)')).status, 400);
  });

  test('parse errors point at the item: limits, unknown aggregates, non-number fields, misplaced clauses', async () => {
    const cases: Array<[string, RegExp, number]> = [
      [`stats ${Array.from({ length: 11 }, (_, i) => `max(payload.k${i})`).join(', ')}`, /at most 10 aggregates/, 'stats '.length + 10 * 'max(payload.k0), '.length],
      ['stats count() by a, b, c, d', /at most 3 by-items/, 'stats count() by a, b, c, '.length],
      ['stats median(ping)', /unknown aggregate 'median'/, 6],
      ['stats sum(source)', /sum reads numbers/, 10],
      ['stats count(ping)', /count\(\) takes no field/, 12],
      ['stats count(', /expected '\)' to close count\(…\), found the end of the query/, 12],
      ['stats count(), count()', /count\(\) appears twice/, 15],
      ['stats count() by bin(5x)', /bin width like 30s/, 21],
      ['stats count() by bin(1h), bin(5m)', /one bin/, 26],
      ['severity >= warn group by source stats count()', /either 'group by' or 'stats'/, 33],
      ['stats count() group by source', /'stats' must come last/, 14],
      ['stats count() source', /expected ',', 'by' or the end/, 14],
      ['a:1 AND stats count()', /expected a condition after 'AND', found 'stats'/, 8],
    ];
    for (const [q, message, position] of cases) {
      const r = await query(q);
      assert.equal(r.status, 400, `${q}: ${r.text}`);
      assert.equal(r.body.error.code, 'soql_parse_error', q);
      assert.match(r.body.error.message, message, q);
      assert.equal(r.body.error.position, position, `${q}: ${r.body.error.message}`);
    }
    // `stats` not followed by an aggregate is a payload key like any other.
    assert.equal((await query('stats > 3')).status, 200);
  });

  test('stats takes no cursor and no live tail', async () => {
    const page = await query('');
    const withCursor = await s.request('POST', '/query', { json: { q: 'stats count()', cursor: page.body.next_cursor } });
    assert.equal(withCursor.status, 400, withCursor.text);
    const tail = await s.request('POST', '/query/tail', { json: { q: 'stats count() by source' } });
    assert.equal(tail.status, 400, tail.text);
    assert.equal(tail.body.error.code, 'soql_tail_aggregation_unsupported');
    assert.match(tail.body.error.message, /stats/);
  });

  test('another tenant\'s events are never counted', async () => {
    const mine = await query('stats count()');
    assert.equal(mine.body.stats[0].values['count()'], 240);
    const theirs = await query('stats count() by dataset', s.tenants.b.token);
    assert.deepEqual(theirs.body, { stats: [{ by: { dataset: 'game' }, values: { 'count()': 240 } }] });
  });

  test('random stats queries agree with the reference', async () => {
    const filters = ['', 'severity >= warn', 'dataset:game', 'payload.ping > 100', 'NOT actor exists', 'ts >= now-3h', 'payload.map:dust OR source:srv-1'];
    const fields = ['payload.ping', 'payload.round', 'bytes_raw'];
    const anyFields = ['source', 'actor', 'payload.map', 'severity', 'dataset', 'payload.flag', 'event', 'payload.ping'];
    const aggregates = [
      fc.constant('count()'),
      fc.constantFrom(...anyFields).map((f) => `count_distinct(${f})`),
      fc.tuple(fc.constantFrom('sum', 'avg', 'min', 'max', 'p50', 'p90', 'p95', 'p99'), fc.constantFrom(...fields)).map(([fn, f]) => `${fn}(${f})`),
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...filters),
        fc.uniqueArray(fc.oneof(...aggregates), { minLength: 1, maxLength: 4 }),
        fc.uniqueArray(fc.constantFrom(...anyFields, 'bin(1h)', 'bin(4h)'), { maxLength: 3 }).filter((by) => by.filter((b) => b.startsWith('bin')).length <= 1),
        async (filter, aggs, by) => {
          await check(filter, aggs, by);
        },
      ),
      { numRuns: 60 },
    );
  });

  test('a histogram comes back whole past 1,000 bins; other stats stop at 1,000 rows', async () => {
    // Tenant b, last: 1,200 events one minute apart, each with its own actor.
    const token = s.tenants.b.token;
    for (let from = 0; from < 1_200; from += 600) {
      const events = Array.from({ length: 600 }, (_, i) => ({ ts: new Date(now - (from + i) * min - 1_000).toISOString(), actor: `a${from + i}`, event: 'dense' }));
      const r = await s.request('POST', '/datasets/dense/ingest', { token, json: events });
      assert.equal(r.status, 200, r.text);
    }
    const histogram = await query('dataset:dense stats count() by bin(1m)', token);
    assert.equal(histogram.status, 200, histogram.text);
    assert.equal(histogram.body.stats.length, 1_200);
    const byActor = await query('dataset:dense stats count() by actor', token);
    assert.equal(byActor.body.stats.length, 1_000);
    const binAndActor = await query('dataset:dense stats count() by bin(1m), actor', token);
    assert.equal(binAndActor.body.stats.length, 1_000);
  });
});
