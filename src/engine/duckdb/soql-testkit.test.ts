/**
 * Shared fixtures for the engines' SOQL tests: an in-memory DuckDB built by the event store's
 * own DDL (duckdb-sql.ts), read with the store's tenant condition, holding the events of the
 * language's arbitraries (src/soql/testkit.test.ts). (Named *.test.ts so the build leaves it
 * out; its own tests only check the fixtures.)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { schemaSql, tenantWhere } from './duckdb-sql.js';
import type { CompiledGroupKey } from '../event-store.js';
import type { SqlParam } from '../soql-sql.js';
import type { MemoryEvent } from '../../soql/predicate.js';
import { DATASET_IDS, eventsArb } from '../../soql/testkit.test.js';

/** The `events.tenant` id the fixtures are stored under (as the store's `event_tenants` assigns it). */
export const TENANT = 1;
/** Another tenant whose rows (a copy of every fixture) no test query may select. */
const OTHER_TENANT = 2;

/**
 * An in-memory DuckDB laid out by the event store's own DDL (`schemaSql`: `events` with its
 * `tenant` integer and `payload VARCHAR`, `event_tenants`, `events_rollup`), so the SOQL tests
 * run on the table production queries.
 */
export async function openEventsDb(): Promise<DuckDBConnection> {
  const instance = await DuckDBInstance.create(':memory:');
  const con = await instance.connect();
  await con.run(schemaSql);
  await con.run("INSERT INTO event_tenants VALUES (?, 'org', 'proj', 'live'), (?, 'org', 'proj', 'test')", [TENANT, OTHER_TENANT]);
  return con;
}

/** The columns loadEvents writes, by name (not by position), and the value of each. */
const COLUMNS: [string, string, (e: MemoryEvent, tenant: number) => string | number | null][] = [
  ['seq', '?', (e) => e.seq],
  ['tenant', '?', (_, tenant) => tenant],
  ['dataset_id', '?', (e) => DATASET_IDS.get(e.dataset) ?? e.dataset],
  ['event_id', 'CAST(? AS UUID)', (e) => e.event_id],
  ['ts', '?', (e) => e.ts],
  ['ingested_at', '?', (e) => e.ingested_at],
  ['severity', '?', (e) => e.severity],
  ['event', '?', (e) => e.event],
  ['actor', '?', (e) => e.actor],
  ['source', '?', (e) => e.source],
  ['message', '?', (e) => e.message],
  // As ingest stores it: the JSON.stringify text of the payload object.
  ['payload', '?', (e) => JSON.stringify(e.payload)],
  ['bytes_raw', '?', (e) => e.bytes_raw],
];

/**
 * Replaces the table's rows with these events, stored under TENANT, plus a copy of each under
 * another tenant (so a query that forgot the tenant condition would see twice the rows).
 */
export async function loadEvents(con: DuckDBConnection, events: readonly MemoryEvent[]): Promise<void> {
  await con.run('DELETE FROM events');
  if (events.length === 0) return;
  const row = `(${COLUMNS.map(([, placeholder]) => placeholder).join(', ')})`;
  const rows = [TENANT, OTHER_TENANT].flatMap((tenant) => events.map((e) => ({ e, tenant })));
  const params = rows.flatMap(({ e, tenant }) => COLUMNS.map(([, , value]) => value(e, tenant)));
  await con.run(
    `INSERT INTO events (${COLUMNS.map(([name]) => name).join(', ')}) VALUES ${rows.map(() => row).join(', ')}`,
    params as DuckDBValue[],
  );
}

/** seqs the WHERE expression selects among TENANT's events, ascending (as the store reads a page). */
export async function selectSeqs(con: DuckDBConnection, where: string, params: readonly SqlParam[]): Promise<number[]> {
  const reader = await con.runAndReadAll(`SELECT seq FROM events WHERE ${tenantWhere} AND (${where}) ORDER BY seq`, [TENANT, ...params]);
  return reader.getRowObjects().map((r) => Number(r['seq']));
}

/**
 * The groups of TENANT's events the WHERE expression selects, keyed by the compiled group key:
 * the statement of the event store's `aggregate` (the key's `?` first, then the tenant, then
 * the filter's), rows as [raw key, count], ordered by count desc, then key asc, NULL last.
 */
export async function selectGroups(
  con: DuckDBConnection,
  key: CompiledGroupKey,
  where: string,
  params: readonly SqlParam[],
  limit = 100,
): Promise<[unknown, number][]> {
  const reader = await con.runAndReadAll(
    `SELECT ${key.sql} AS value, count(*) AS n FROM events WHERE ${tenantWhere} AND (${where}) ` +
      `GROUP BY 1 ORDER BY n DESC, value ASC NULLS LAST LIMIT ${limit}`,
    [...key.params, TENANT, ...params] as DuckDBValue[],
  );
  return reader.getRows().map((r) => [typeof r[0] === 'bigint' ? Number(r[0]) : r[0], Number(r[1])]);
}

test('testkit: generated events survive a DuckDB round trip, under their tenant only', async () => {
  const con = await openEventsDb();
  const events = fc.sample(eventsArb(20), 5).flat();
  const withSeqs = events.map((e, i) => ({ ...e, seq: i + 1 }));
  await loadEvents(con, withSeqs);
  assert.deepEqual(await selectSeqs(con, 'TRUE', []), withSeqs.map((e) => e.seq));
  const reader = await con.runAndReadAll(
    'SELECT seq, dataset_id, event_id::VARCHAR, ts, ingested_at, severity, event, actor, source, message, payload, bytes_raw ' +
      `FROM events WHERE ${tenantWhere} ORDER BY seq`,
    [TENANT],
  );
  const stored = reader.getRows().map(([seq, datasetId, eventId, ts, ingestedAt, severity, event, actor, source, message, payload, bytes]) => ({
    seq: Number(seq), dataset: datasetId, event_id: eventId, ts: Number(ts), ingested_at: Number(ingestedAt), severity: Number(severity),
    event, actor, source, message, payload: JSON.parse(payload as string) as unknown, bytes_raw: Number(bytes),
  }));
  assert.deepEqual(stored, withSeqs.map((e) => ({ ...e, dataset: DATASET_IDS.get(e.dataset), event_id: e.event_id.toLowerCase() })));
  const all = await con.runAndReadAll('SELECT count(*) FROM events');
  assert.equal(Number(all.getRows()[0]![0]), 2 * withSeqs.length);
  con.closeSync();
});
