/**
 * The ClickHouse tables of the event store and their migrations.
 *
 * One host: `events` is a MergeTree table. A cluster: every host has `events_local` (MergeTree,
 * its shard's rows) and `events`, a Distributed table over the cluster's `events_local`,
 * sharded by tenant (cityHash64(tenant)), so every host can answer a read. ClickHouse's own
 * DDL across a cluster (ON CLUSTER) needs ZooKeeper; the engine runs each migration on each
 * host instead, and records it there in `ops_schema`.
 *
 * Rows: the columns of event-columns.ts in ClickHouse types (ts and ingested_at as Int64 epoch
 * ms: 18.16 has no DateTime64; event_id as its lower-case text), the tenant as its key text
 * (tenant.ts's tenantKey), and the payload flattened (payload-paths.ts). Sorted by (tenant, ts):
 * a tenant's recent events are one contiguous range of the primary index, which is what pages
 * (newest first), 24-hour counts and retention read. Partitions are 30-day buckets of ts: few
 * enough that a batch of spread-out timestamps stays within current servers' 100 partitions per
 * insert, small enough that merges stay bounded.
 *
 * Every API process on ClickHouse is an ingester with a write-ahead log of its own:
 * each log has an id (log-id.ts), each row carries its log's id and seq, and `event_loaders`
 * (first host only is read) holds each log's position loaded so far. `event_loader`, the one
 * position of the single log before log ids (its rows have log_id ''), is still read for that log.
 * `event_hot_layouts` (first host only) holds the hot-key layouts (clickhouse-hot-layouts.ts).
 */

import { columnIndex, eventColumnList } from '../event-columns.js';

export interface SchemaLayout {
  database: string;
  cluster: string | undefined;
}

/** The MergeTree table holding rows on a host: `events` alone, `events_local` in a cluster. */
export const mergeTreeTable = (layout: SchemaLayout): string => (layout.cluster ? 'events_local' : 'events');

/**
 * The events table's columns in ClickHouse, in its order (tables created since the first
 * version have it, and loads write RowBinary rows in it): the description's columns with their
 * ClickHouse types (event-columns.ts), then the payload flattened (payload-paths.ts).
 */
export const clickhouseEventColumns: ReadonlyArray<{ name: string; type: string; since?: number }> = [
  ...(['tenant', 'dataset_id', 'ts', 'event_id', 'seq', 'ingested_at', 'severity', 'event', 'actor', 'source', 'message', 'payload', 'bytes_raw'] as const).map((name) => ({
    name,
    type: eventColumnList[columnIndex[name]]!.clickhouse,
  })),
  { name: 'payload_paths', type: 'Array(String)' },
  { name: 'payload_types', type: 'Array(UInt8)' },
  { name: 'payload_text', type: 'Array(String)' },
  { name: 'payload_numbers', type: 'Array(Float64)' },
  { name: 'payload_json', type: 'Array(String)' },
  // Migration 2: the ingester's log (rows of the single log before it: '').
  { name: 'log_id', type: 'String', since: 2 },
];

const columnsDdl = (columns: typeof clickhouseEventColumns) => `\n${columns.map((c) => `  ${c.name} ${c.type}`).join(',\n')}`;

/** The columns migration 1 created: later ones are added by their migration (`since`), on old and new tables alike. */
const v1ColumnsDdl = columnsDdl(clickhouseEventColumns.filter((c) => !c.since));

/** Every column the events table has once migrated (tests that build a table of their own). */
export const eventsColumnsDdl = columnsDdl(clickhouseEventColumns);

/** ALTER statements adding migration `version`'s columns to the MergeTree table and, in a cluster, to the Distributed one. */
function addedColumns(layout: SchemaLayout, version: number): string[] {
  const tables = layout.cluster ? [mergeTreeTable(layout), 'events'] : ['events'];
  return clickhouseEventColumns
    .filter((c) => c.since === version)
    .flatMap((c) => tables.map((table) => `ALTER TABLE ${layout.database}.${table} ADD COLUMN ${c.name} ${c.type}`));
}

/** Migrations in order; each gives the statements one host runs (identifiers are validated names). */
export const migrations: ReadonlyArray<{ version: number; what: string; statements: (layout: SchemaLayout) => string[] }> = [
  {
    version: 1,
    what: 'events, the Distributed table over a cluster, and the loader position',
    statements: (layout) => {
      const db = layout.database;
      const table = mergeTreeTable(layout);
      const statements = [
        `CREATE TABLE IF NOT EXISTS ${db}.${table} (${v1ColumnsDdl}\n) ENGINE = MergeTree PARTITION BY intDiv(ts, 2592000000) ORDER BY (tenant, ts)`,
        `CREATE TABLE IF NOT EXISTS ${db}.event_loader (position UInt64) ENGINE = ReplacingMergeTree(position) ORDER BY tuple()`,
      ];
      if (layout.cluster) {
        statements.push(
          `CREATE TABLE IF NOT EXISTS ${db}.events AS ${db}.events_local ENGINE = Distributed(${layout.cluster}, ${db}, events_local, cityHash64(tenant))`,
        );
      }
      return statements;
    },
  },
  {
    version: 2,
    what: "every API process an ingester: each row's log id, and each log's loaded position",
    statements: (layout) => [
      ...addedColumns(layout, 2),
      `CREATE TABLE IF NOT EXISTS ${layout.database}.event_loaders (log_id String, position UInt64) ENGINE = ReplacingMergeTree(position) ORDER BY log_id`,
    ],
  },
  {
    version: 3,
    what: 'hot payload keys: the layouts (clickhouse-hot-layouts.ts; their columns are added when a layout first needs them)',
    statements: (layout) => [
      `CREATE TABLE IF NOT EXISTS ${layout.database}.event_hot_layouts (id UInt32, dataset_id String, slots String) ENGINE = MergeTree ORDER BY id`,
    ],
  },
];

/** ClickHouse's "column with this name already exists": an ADD COLUMN a migration interrupted by a crash had run already. */
export const duplicateColumnCode = '44';

export const schemaTableDdl = (db: string): string =>
  `CREATE TABLE IF NOT EXISTS ${db}.ops_schema (version UInt32, applied_at DateTime DEFAULT now()) ENGINE = MergeTree ORDER BY version`;
