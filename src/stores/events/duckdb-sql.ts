import type { DuckDBValue } from '@duckdb/node-api';
import type { Tenant } from '../../tenancy/tenant.js';
import type { StoredEvent } from './event-record.js';

/** DDL of the event store (layout documented in event-record.ts). */
export const schemaSql = `
CREATE TABLE IF NOT EXISTS events (
  seq BIGINT NOT NULL,
  org_id VARCHAR NOT NULL,
  project_id VARCHAR NOT NULL,
  mode VARCHAR NOT NULL,
  dataset_id VARCHAR NOT NULL,
  event_id UUID NOT NULL,
  ts BIGINT NOT NULL,
  ingested_at BIGINT NOT NULL,
  severity UTINYINT NOT NULL,
  event VARCHAR NOT NULL,
  actor VARCHAR,
  source VARCHAR,
  message VARCHAR NOT NULL,
  payload JSON NOT NULL,
  bytes_raw INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS events_rollup (
  org_id VARCHAR NOT NULL,
  project_id VARCHAR NOT NULL,
  mode VARCHAR NOT NULL,
  dataset_id VARCHAR NOT NULL,
  minute BIGINT NOT NULL,
  count BIGINT NOT NULL,
  PRIMARY KEY (org_id, project_id, mode, dataset_id, minute)
);`;

/** The tenant condition every statement starts with, and its three values. */
export const tenantWhere = 'org_id = ? AND project_id = ? AND mode = ?';
export const tenantParams = (tenant: Tenant): DuckDBValue[] => [tenant.orgId, tenant.projectId, tenant.mode];

export const sqlString = (value: string): string => `'${value.replace(/'/g, "''")}'`;

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const isUuid = (value: string): boolean => uuidPattern.test(value);

/**
 * A JSON path literal for payload keys (`$."match"."map"`). Keys holding a quote or a
 * backslash cannot be expressed in DuckDB's path syntax: undefined.
 */
export function jsonPath(path: readonly string[]): string | undefined {
  if (path.some((key) => /["\\]/.test(key) || key === '')) return undefined;
  return sqlString(`$${path.map((key) => `."${key}"`).join('')}`);
}

/** Columns selected for a StoredEvent, in the order `toStoredEvent` reads them. */
export const eventColumns =
  'seq, dataset_id, event_id::VARCHAR AS event_id, ts, ingested_at, severity, event, actor, source, message, payload::VARCHAR AS payload, bytes_raw';

export function toStoredEvent(row: DuckDBValue[], names: Map<string, string>): StoredEvent {
  const datasetId = row[1] as string;
  return {
    seq: Number(row[0]),
    dataset: names.get(datasetId) ?? datasetId,
    event_id: row[2] as string,
    ts: Number(row[3]),
    ingested_at: Number(row[4]),
    severity: Number(row[5]),
    event: row[6] as string,
    actor: (row[7] as string | null) ?? null,
    source: (row[8] as string | null) ?? null,
    message: row[9] as string,
    payload: JSON.parse(row[10] as string) as Record<string, unknown>,
    bytes_raw: Number(row[11]),
  };
}

/** Leaf dot paths of a `json_group_structure` result (arrays and scalars are leaves). */
export function leafPaths(structure: unknown, prefix: string[] = [], out: string[][] = []): string[][] {
  if (structure && typeof structure === 'object' && !Array.isArray(structure)) {
    for (const [key, child] of Object.entries(structure)) leafPaths(child, [...prefix, key], out);
  } else if (prefix.length) {
    out.push(prefix);
  }
  return out;
}
