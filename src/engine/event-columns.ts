/**
 * The stored event, described once. The DuckDB DDL (duckdb-sql.ts), the loader's data chunk
 * types (duckdb-chunk.ts), the select list and row mapping of reads (duckdb-sql.ts), the
 * ClickHouse DDL and INSERT column list (clickhouse/clickhouse-schema.ts), and the canonical
 * fields the schema endpoint lists (SPEC §2.5) are all derived from this table, so a column is
 * added or changed here and nowhere else by position. event-columns.test.ts and the ClickHouse
 * engine's test hold each engine's real `DESCRIBE` to it.
 *
 * `api` is the canonical field's type in the API (absent: internal columns). `select` is how
 * reads fetch the column when it is not the bare name. `clickhouse` is its type there (ClickHouse
 * 18.16: no DateTime64, so times stay epoch ms; the tenant is its key text, event_id its text).
 */
export const eventColumnList = [
  { name: 'seq', sql: 'BIGINT', clickhouse: 'UInt64', nullable: false, doc: 'ingestion order, strictly increasing per write-ahead log (on ClickHouse each row also carries its log_id); live tail resumes on it' },
  { name: 'tenant', sql: 'UINTEGER', clickhouse: 'String', nullable: false, doc: '(org, project, mode) as an id of event_tenants; only the engine maps it' },
  { name: 'dataset_id', sql: 'VARCHAR', clickhouse: 'String', nullable: false, doc: 'internal dataset id, so a rename touches no event (the API field is `dataset`, its name)' },
  { name: 'event_id', sql: 'UUID', clickhouse: 'String', nullable: false, api: 'uuid', select: 'event_id::VARCHAR AS event_id', doc: 'UUIDv7 of the server, or the client event_id' },
  { name: 'ts', sql: 'BIGINT', clickhouse: 'Int64', nullable: false, api: 'datetime', doc: 'event time, epoch ms' },
  { name: 'ingested_at', sql: 'BIGINT', clickhouse: 'Int64', nullable: false, api: 'datetime', doc: 'epoch ms' },
  { name: 'severity', sql: 'UTINYINT', clickhouse: 'UInt8', nullable: false, api: 'severity (ordinal)', doc: 'index into `severities`' },
  { name: 'event', sql: 'VARCHAR', clickhouse: 'String', nullable: false, api: 'string', doc: 'event name' },
  { name: 'actor', sql: 'VARCHAR', clickhouse: 'Nullable(String)', nullable: true, api: 'string', doc: 'NULL when absent' },
  { name: 'source', sql: 'VARCHAR', clickhouse: 'Nullable(String)', nullable: true, api: 'string', doc: 'NULL when absent' },
  { name: 'message', sql: 'VARCHAR', clickhouse: 'String', nullable: false, api: 'string', doc: '' },
  { name: 'payload', sql: 'VARCHAR', clickhouse: 'String', nullable: false, doc: 'JSON text of an object as ingest wrote it; nested objects kept nested' },
  { name: 'bytes_raw', sql: 'INTEGER', clickhouse: 'Int32', nullable: false, api: 'number', doc: 'size of the event as sent' },
] as const satisfies ReadonlyArray<{ name: string; sql: string; clickhouse: string; nullable: boolean; api?: string; select?: string; doc: string }>;

export type EventColumnName = (typeof eventColumnList)[number]['name'];

/** Column index by name (the loader's chunk vectors, the reads' rows). */
export const columnIndex = Object.fromEntries(eventColumnList.map((c, i) => [c.name, i])) as Record<EventColumnName, number>;

/** `CREATE TABLE events` from the description. */
export const eventsTableDdl = `CREATE TABLE IF NOT EXISTS events (\n${eventColumnList
  .map((c) => `  ${c.name} ${c.sql}${c.nullable ? '' : ' NOT NULL'}`)
  .join(',\n')}\n);`;

/**
 * The canonical fields of the API with their types (SPEC §2.5), in name order: the columns
 * that have an API type, and `dataset` (the name the API shows for dataset_id).
 */
export const canonicalFieldTypes: ReadonlyArray<{ name: string; type: string }> = [
  ...eventColumnList.flatMap((c) => ('api' in c ? [{ name: c.name as string, type: c.api as string }] : [])),
  { name: 'dataset', type: 'string' },
].sort((x, y) => (x.name < y.name ? -1 : 1));
