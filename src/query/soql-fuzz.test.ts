/**
 * 10,000 SOQL queries over HTTP against the event store of the leg: random well-formed queries
 * (the agreement generators, any value text) and random text, on events of every shape the
 * generators make. Every answer is a 200 or a 4xx with a SOQL or not_found code: never a 5xx.
 *
 * It runs on the ClickHouse leg (OPS_TEST_CLICKHOUSE_URL: every value reaches ClickHouse as a
 * literal, so this is where a bad escape would show) with 10,000 queries; elsewhere with 1,000.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestServer } from '../test-support/test-server.js';
import { printSoql } from '../soql/index.js';
import { DATASET_IDS, eventsArb, narrow, queryArb, wide } from '../soql/testkit.test.js';

const onClickHouse = Boolean(process.env.OPS_TEST_CLICKHOUSE_URL);
const total = Number(process.env.OPS_TEST_FUZZ_QUERIES ?? (onClickHouse ? 10_000 : 1_000));

const SOUP = ['(', ')', ' ', ' AND ', ' OR ', 'NOT ', '"', '\\', "'", "\\'", '?', '%', '_', 'payload.', '.', ':', '!:', '==', '!=', '>=',
  '<', ' in ', ' exists', ',', ' group by ', 'severity', 'ts', 'dataset', 'event_id', 'bytes_raw', 'now-5m', 'game', 'auth', '*',
  'warn', '150', '1e400', '-0', 'é', '😀', '\u0000', '\n', 'true', 'null', "'; DROP TABLE events --", 'tenant', 'seq',
  ' stats ', 'count()', 'count_distinct(', 'p95(', 'sum(', ' by ', 'bin(1m)', 'bin(', '5m', '0s'];

/** A stats clause over odd fields too: a payload key reaches the SQL as a bound JSON pointer. */
const statsArb = (() => {
  const key = fc.oneof(fc.constantFrom('ping', 'map', 'a.b', '`odd key`', "`it's`", '`é😀`', '`a\\b`', '`%_?`', '0', 'tags.1'), fc.string({ minLength: 1, maxLength: 6 }).map((k) => `\`${k.replace(/`/g, '``')}\``));
  const field = fc.oneof(fc.constantFrom('source', 'actor', 'dataset', 'severity', 'event', 'event_id', 'ts', 'bytes_raw', 'message'), key.map((k) => `payload.${k}`));
  const numeric = fc.oneof(fc.constant('bytes_raw'), key.map((k) => `payload.${k}`));
  const aggregate = fc.oneof(
    fc.constant('count()'),
    field.map((f) => `count_distinct(${f})`),
    fc.tuple(fc.constantFrom('sum', 'avg', 'min', 'max', 'p50', 'p90', 'p95', 'p99'), numeric).map(([fn, f]) => `${fn}(${f})`),
  );
  const bin = fc.tuple(fc.integer({ min: 1, max: 120 }), fc.constantFrom('s', 'm', 'h', 'd')).map(([n, u]) => `bin(${n}${u})`);
  return fc
    .tuple(fc.uniqueArray(aggregate, { minLength: 1, maxLength: 4 }), fc.uniqueArray(fc.oneof(field, bin), { maxLength: 3 }))
    .map(([aggregates, by]) => `stats ${aggregates.join(', ')}${by.length ? ` by ${by.join(', ')}` : ''}`);
})();

test(`${total} random SOQL queries over HTTP: no 5xx`, { timeout: 900_000 }, async () => {
  const s = await startTestServer();
  try {
    // Events of every shape, in the three datasets the generators name, now and an hour ago.
    const events = fc.sample(eventsArb(40), { numRuns: 10, seed: 7 }).flat();
    for (const name of DATASET_IDS.keys()) {
      const batch = events
        .filter((e) => e.dataset === name)
        .map((e) => ({ event: e.event, message: e.message, severity: ['debug', 'info', 'warn', 'error', 'fatal'][e.severity], ...(e.actor ? { actor: e.actor } : {}), ...(e.source ? { source: e.source } : {}), payload: e.payload, ts: Date.now() - (e.seq % 60) * 60_000 }));
      const r = await s.request('POST', `/datasets/${name}/ingest`, { json: batch.length ? batch : [{ event: 'seed' }] });
      assert.equal(r.status, 200, r.text);
    }
    const queries = [
      ...fc.sample(queryArb(narrow, 3).map(printSoql), { numRuns: Math.round(total * 0.35), seed: 11 }),
      ...fc.sample(queryArb(wide, 3).map(printSoql), { numRuns: Math.round(total * 0.3), seed: 12 }),
      ...fc.sample(
        fc.tuple(queryArb(narrow, 2), statsArb).map(([query, stats]) => `${printSoql({ ...query, groupBy: null })} ${stats}`),
        { numRuns: Math.round(total * 0.15), seed: 14 },
      ),
      ...fc.sample(fc.array(fc.constantFrom(...SOUP), { maxLength: 20 }).map((p) => p.join('')), { numRuns: total - Math.round(total * 0.8), seed: 13 }),
    ];
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < queries.length) {
        const q = queries[next++]!;
        const r = await s.request('POST', '/query', { json: { q } });
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status >= 500) failures.push(`${r.status} for ${JSON.stringify(q)}: ${r.text.slice(0, 300)}`);
        else if (r.status !== 200) {
          const code = (r.body as { error?: { code?: string } }).error?.code ?? '';
          if (!/^(soql_|not_found$|bad_request$)/.test(code)) failures.push(`${r.status} ${code} for ${JSON.stringify(q)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    assert.deepEqual(failures.slice(0, 10), [], `${failures.length} of ${queries.length} failed`);
    assert.equal([...statuses.values()].reduce((a, b) => a + b, 0), queries.length);
    // The queries reached the engine: most are well formed and answer 200.
    assert.ok((statuses.get(200) ?? 0) > queries.length / 2, JSON.stringify([...statuses]));
  } finally {
    await s.close();
  }
});
