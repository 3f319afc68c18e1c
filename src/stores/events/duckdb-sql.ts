import type { DuckDBValue } from '@duckdb/node-api';
import type { Tenant } from '../../tenancy/tenant.js';
import type { StoredEvent } from './event-record.js';

/**
 * DDL of the event store (layout documented in event-record.ts). The tenant (org, project,
 * mode) is one small integer per row, assigned in `event_tenants`: one cheap comparison on
 * every read, and a constant per column segment on disk. No index anywhere: appends stay pure
 * column appends. `events_rollup` may hold several rows per (tenant, dataset, minute), one per
 * commit that touched it (readers sum them); the writer merges them now and then.
 */
export const schemaSql = `
CREATE TABLE IF NOT EXISTS event_tenants (
  id UINTEGER NOT NULL,
  org_id VARCHAR NOT NULL,
  project_id VARCHAR NOT NULL,
  mode VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
  seq BIGINT NOT NULL,
  tenant UINTEGER NOT NULL,
  dataset_id VARCHAR NOT NULL,
  event_id UUID NOT NULL,
  ts BIGINT NOT NULL,
  ingested_at BIGINT NOT NULL,
  severity UTINYINT NOT NULL,
  event VARCHAR NOT NULL,
  actor VARCHAR,
  source VARCHAR,
  message VARCHAR NOT NULL,
  payload VARCHAR NOT NULL,
  bytes_raw INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS events_rollup (
  tenant UINTEGER NOT NULL,
  dataset_id VARCHAR NOT NULL,
  minute BIGINT NOT NULL,
  count BIGINT NOT NULL
);`;

/** The tenant condition every statement on `events` / `events_rollup` starts with; one value. */
export const tenantWhere = 'tenant = ?';

export const tenantKey = (t: Tenant): string => `${t.orgId}|${t.projectId}|${t.mode}`;

/**
 * The tenant → `events.tenant` id map of one open store, loaded at open and extended by the
 * writer after the COMMIT that inserted a new tenant's first events. It is the one place
 * tenancy turns into SQL: `params(tenant)` is the value for `tenantWhere`.
 */
export class TenantIds {
  private readonly ids = new Map<string, number>();
  private last = 0;

  load(rows: DuckDBValue[][]): void {
    for (const [id, org, project, mode] of rows) {
      this.ids.set(`${org as string}|${project as string}|${mode as string}`, Number(id));
      this.last = Math.max(this.last, Number(id));
    }
  }

  get(tenant: Tenant): number | undefined {
    return this.ids.get(tenantKey(tenant));
  }

  /** The value for `tenantWhere`; 0 (no tenant has it) when the tenant has no events yet. */
  params(tenant: Tenant): DuckDBValue[] {
    return [this.ids.get(tenantKey(tenant)) ?? 0];
  }

  /** A fresh id for a tenant the writer is about to insert (known only after `confirm`). */
  allocate(): number {
    return ++this.last;
  }

  confirm(tenant: Tenant, id: number): void {
    this.ids.set(tenantKey(tenant), id);
  }
}

export const sqlString = (value: string): string => `'${value.replace(/'/g, "''")}'`;

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const isUuid = (value: string): boolean => uuidPattern.test(value);

/** Columns selected for a StoredEvent, in the order `toStoredEvent` reads them. */
export const eventColumns =
  'seq, dataset_id, event_id::VARCHAR AS event_id, ts, ingested_at, severity, event, actor, source, message, payload, bytes_raw';

export function toStoredEvent(row: DuckDBValue[], names: ReadonlyMap<string, string>): StoredEvent {
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
    payloadJson: row[10] as string,
    bytes_raw: Number(row[11]),
  };
}
