/**
 * The ClickHouse dialect must select what the in-memory predicate (live tail) and DuckDB
 * select: random queries and events (duckdb/soql-agreement.test.ts's generators) run against a scratch
 * MergeTree table laid out like the ClickHouse engine's `events` (payload_* arrays filled by
 * flattenPayload), and `group by` keys decoded with decodeGroupValue must equal DuckDB's.
 * The server tests need OPS_TEST_CLICKHOUSE_URL (`eval "$(scripts/clickhouse.sh env)"`) and are
 * run on the ClickHouse leg only; the text checks at the end run everywhere.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { DuckDBConnection } from '@duckdb/node-api';
import { AppError } from '../../errors/app-error.js';
import { parseClickHouseUrl } from '../../config/clickhouse-url.js';
import { bindParams, type SqlValue } from './literal.js';
import { flattenPayload } from './payload-paths.js';
import { float64Hex } from './literal.js';
import { canonicalFields, compilePredicate, printSoql, type FieldRef } from '../../soql/index.js';
import { compileClickHouseFilter, compileClickHouseGroupKey, compileDuckDbFilter, compileDuckDbGroupKey, decodeGroupValue, type GroupValue } from '../soql-compile.js';
import type { MemoryEvent } from '../../soql/predicate.js';
import { DATASET_IDS, NOW, eventsArb, narrow, queryArb, wide } from '../../soql/testkit.test.js';
import { loadEvents, openEventsDb, selectGroups } from '../duckdb/soql-testkit.test.js';
import { legs } from '../../test-support/ci.js';

/** The SQL text may hold only our own constants: a spliced value would bring other characters. */
const SQL_ALPHABET = /^[A-Za-z0-9_ (),?=<>'\\]*$/;

/** The first server of OPS_TEST_CLICKHOUSE_URL (`clickhouse://h1:p1,h2:p2/db?cluster=…`). */
const url = process.env['OPS_TEST_CLICKHOUSE_URL'];
const target = url ? parseClickHouseUrl(url) : null;
const onLeg = legs.clickhouse();

/** Runs one statement, `?` bound by the engine's literal.ts; the body of the answer. */
async function run(sql: string, params: readonly SqlValue[] = []): Promise<string> {
  const res = await fetch(`${target!.hosts[0]}/`, {
    method: 'POST',
    body: bindParams(sql, params),
    headers: { 'X-ClickHouse-User': target!.username, 'X-ClickHouse-Key': target!.password },
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse: ${text.slice(0, 2000)}\n${sql.slice(0, 2000)}`);
  return text;
}

const rowsOf = (text: string): Record<string, unknown>[] =>
  text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);

/** A database of our own, dropped at the end of the file. */
const DB = `soql_test_${randomBytes(6).toString('hex')}`;

/** The ClickHouse engine's `events` columns (the brief's layout), in a scratch MergeTree. */
const DDL = `CREATE TABLE ${DB}.events (
  tenant String, dataset_id String, ts Int64, seq UInt64, event_id String, ingested_at Int64, severity UInt8,
  event String, actor Nullable(String), source Nullable(String), message String, payload String, bytes_raw Int32,
  payload_paths Array(String), payload_types Array(UInt8), payload_text Array(String),
  payload_numbers Array(Float64), payload_json Array(String)
) ENGINE = MergeTree ORDER BY (tenant, dataset_id, ts, seq)`;

/**
 * One row's VALUES tuple and its parameters. Numbers go in as their IEEE 754 bytes: 18.16's
 * text parsing of floats is inexact (clickhouse-soql.ts), and the test needs the stored doubles to
 * be the event's.
 */
function row(e: MemoryEvent, tenant: string): { sql: string; params: SqlValue[] } {
  const payloadJson = JSON.stringify(e.payload);
  const flat = flattenPayload(payloadJson);
  const list = (n: number, item = '?'): string => `[${Array.from({ length: n }, () => item).join(', ')}]`;
  const n = flat.paths.length;
  return {
    sql: `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${list(n)}, ${list(n)}, ${list(n)}, ${list(n, 'reinterpretAsFloat64(unhex(?))')}, ${list(n)})`,
    params: [
      tenant, DATASET_IDS.get(e.dataset) ?? e.dataset, e.ts, e.seq, e.event_id.toLowerCase(), e.ingested_at, e.severity,
      e.event, e.actor, e.source, e.message, payloadJson, e.bytes_raw,
      ...flat.paths, ...flat.types, ...flat.text, ...flat.numbers.map(float64Hex), ...flat.json,
    ],
  };
}

let loads = 0;
/**
 * Stores the events under a fresh tenant, and a copy under another one (a query that forgot
 * the tenant condition would see twice the rows); returns the fresh tenant.
 */
async function load(events: readonly MemoryEvent[]): Promise<string> {
  const tenant = `t${++loads}`;
  if (events.length === 0) return tenant;
  const rows = [tenant, `${tenant}_other`].flatMap((t) => events.map((e) => row(e, t)));
  await run(`INSERT INTO ${DB}.events VALUES ${rows.map((r) => r.sql).join(', ')}`, rows.flatMap((r) => r.params));
  return tenant;
}

/** seqs the filter selects among the tenant's events, ascending. */
async function selectSeqs(tenant: string, where: string, params: readonly SqlValue[]): Promise<number[]> {
  const text = await run(`SELECT seq FROM ${DB}.events WHERE tenant = ? AND (${where}) ORDER BY seq FORMAT JSONEachRow`, [tenant, ...params]);
  return rowsOf(text).map((r) => Number(r['seq']));
}

/** The groups of the tenant's events (the key's `?` first, then the tenant, then the filter's), decoded. */
async function clickHouseGroups(tenant: string, field: FieldRef, where: string, params: readonly SqlValue[]): Promise<string[]> {
  const key = compileClickHouseGroupKey(field);
  const text = await run(
    `SELECT ${key.sql} AS value, count() AS n FROM ${DB}.events WHERE tenant = ? AND (${where}) GROUP BY value FORMAT JSONEachRow`,
    [...key.params, tenant, ...params],
  );
  return canonicalGroups(field, rowsOf(text).map((r) => [r['value'], Number(r['n'])]));
}

const idToName = new Map([...DATASET_IDS].map(([n, id]) => [id, n]));

/** Decoded groups as sorted JSON texts, so two back ends' answers compare regardless of order. */
function canonicalGroups(field: FieldRef, rows: [unknown, number][]): string[] {
  return rows.map(([raw, n]) => JSON.stringify([decodeGroupValue(field, raw, idToName) as GroupValue, n])).sort();
}

onLeg.describe('ClickHouse dialect on a ClickHouse server', () => {
  let duck: DuckDBConnection;
  before(async () => {
    await run(`CREATE DATABASE ${DB}`);
    await run(DDL);
    duck = await openEventsDb();
  });
  after(async () => {
    duck?.closeSync();
    await run(`DROP DATABASE IF EXISTS ${DB}`);
  });

  test('the loader stores exactly the events (the text columns, the flattened payload, exact doubles)', async () => {
    const events = fc.sample(eventsArb(20), { numRuns: 5, seed: 42 }).flat().map((e, i) => ({ ...e, seq: i + 1 }));
    const tenant = await load(events);
    const text = await run(
      `SELECT seq, event, actor, source, message, payload, payload_paths, arrayMap(x -> hex(reinterpretAsString(x)), payload_numbers) AS nums ` +
        `FROM ${DB}.events WHERE tenant = ? ORDER BY seq FORMAT JSONEachRow`,
      [tenant],
    );
    // reinterpretAsString drops trailing zero bytes: compare with the hex cut the same way.
    const cut = (hex: string): string => hex.replace(/(?:00)+$/, '');
    assert.deepEqual(
      rowsOf(text),
      events.map((e) => {
        const flat = flattenPayload(JSON.stringify(e.payload));
        return {
          seq: String(e.seq), event: e.event, actor: e.actor, source: e.source, message: e.message, payload: JSON.stringify(e.payload),
          payload_paths: flat.paths, nums: flat.numbers.map((n) => cut(float64Hex(n))),
        };
      }),
    );
  });

  test('in-memory predicate and ClickHouse select the same events (random queries and events)', async () => {
    let queries = 0;
    const started = performance.now();
    await fc.assert(
      fc.asyncProperty(eventsArb(25), fc.array(queryArb(narrow), { minLength: 4, maxLength: 10 }), async (events, qs) => {
        const tenant = await load(events);
        await Promise.all(
          qs.map(async (query) => {
            const { where, params } = compileClickHouseFilter(query, { now: NOW, datasetIds: DATASET_IDS });
            assert.match(where, SQL_ALPHABET);
            const expected = events.filter(compilePredicate(query, { now: NOW })).map((e) => e.seq);
            assert.deepEqual(await selectSeqs(tenant, where, params), expected, printSoql(query));
            queries++;
          }),
        );
      }),
      { numRuns: 100 },
    );
    assert.ok(queries >= 300, `only ${queries} queries`);
    console.log(`# ${queries} random queries agreed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  });

  test('group by: ClickHouse keys decode to what DuckDB gives for the same events and filter', async () => {
    const pathArb = fc.array(fc.constantFrom('a', 'b', 'ping', 'arr', '0', 'x y', 'we`ird', '~/k'), { minLength: 1, maxLength: 2 });
    const fieldArb = fc.oneof(
      pathArb.map((path): FieldRef => ({ kind: 'payload', path })),
      fc.constantFrom(...canonicalFields).map((name): FieldRef => ({ kind: 'canonical', name })),
    );
    await fc.assert(
      fc.asyncProperty(eventsArb(25), fieldArb, queryArb(narrow, 2), async (events, field, query) => {
        const [tenant] = await Promise.all([load(events), loadEvents(duck, events)]);
        const ch = compileClickHouseFilter(query, { now: NOW, datasetIds: DATASET_IDS });
        const dk = compileDuckDbFilter(query, { now: NOW, datasetIds: DATASET_IDS });
        const duckRows = await selectGroups(duck, compileDuckDbGroupKey(field), dk.where, dk.params, 1000);
        const label = `${printSoql(query)} group by ${field.kind === 'payload' ? field.path.join('.') : field.name}`;
        assert.deepEqual(await clickHouseGroups(tenant, field, ch.where, ch.params), canonicalGroups(field, duckRows), label);
      }),
      { numRuns: 100 },
    );
  });

  test('group by a payload container or a JSON null: objects and arrays as values, null with the missing', async () => {
    const ev = (seq: number, payload: Record<string, unknown>): MemoryEvent => ({
      seq, event_id: '0b6d4f2a-1c3e-4a5b-8c7d-9e0f1a2b3c4d', ts: NOW, ingested_at: NOW, dataset: 'game', severity: 1, event: 'e',
      actor: null, source: null, message: '', payload, bytes_raw: 1,
    });
    const tenant = await load([
      ev(1, { m: { v: [1, 'x'], w: null } }), ev(2, { m: { v: [1, 'x'], w: null } }), ev(3, { m: null }), ev(4, {}),
      ev(5, { m: 'null' }), ev(6, { m: [] }), ev(7, { m: 1e21 }), ev(8, { m: '\ud800' }),
    ]);
    const field: FieldRef = { kind: 'payload', path: ['m'] };
    assert.deepEqual(
      await clickHouseGroups(tenant, field, '1', []),
      [[{ v: [1, 'x'], w: null }, 2], [null, 3], ['null', 1], [[], 1], [1e21, 1]].map((g) => JSON.stringify(g)).sort(),
    );
  });
});

describe('ClickHouse SQL text (no server)', () => {
  test('compiled SQL is our constants only, `?` outside every constant literal, one per parameter (random queries)', () => {
    fc.assert(
      fc.property(queryArb(wide, 3), (query) => {
        let duckError: unknown = null;
        try {
          compileDuckDbFilter(query, { now: NOW, datasetIds: DATASET_IDS });
        } catch (err) {
          duckError = err;
        }
        try {
          const { where, params } = compileClickHouseFilter(query, { now: NOW, datasetIds: DATASET_IDS });
          assert.equal(duckError, null, 'DuckDB failed where ClickHouse did not');
          assert.match(where, SQL_ALPHABET);
          assert.equal(where.split('?').length - 1, params.length);
          // The constant literals (`'\xC4\xB0'`, `'i'`, `'null'`, `''`) never hold a placeholder.
          for (const lit of where.match(/'(?:\\.|[^'\\])*'/g) ?? []) assert.ok(!lit.includes('?'), lit);
          assert.ok(!where.includes('??') && !/\?'|'\?/.test(where), 'a placeholder next to a quote or another placeholder');
          bindParams(where, params);
          if (query.groupBy) {
            const key = compileClickHouseGroupKey(query.groupBy);
            assert.match(key.sql, SQL_ALPHABET);
            assert.equal(key.sql.split('?').length - 1, key.params.length);
          }
        } catch (err) {
          // An unknown dataset is not_found on both dialects, with the same message.
          assert.ok(err instanceof AppError && err.code === 'not_found', String(err));
          assert.ok(duckError instanceof AppError && duckError.code === 'not_found' && duckError.message === err.message, String(duckError));
        }
      }),
      { numRuns: 1000 },
    );
  });
});
