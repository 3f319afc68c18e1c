import type { DuckDBValue } from '@duckdb/node-api';
import { tenantKey, type Tenant } from '../../tenancy/tenant.js';
import type { StoredEvent } from '../../shared/event-record.js';
import { eventColumnList, eventsTableDdl, type EventColumnName } from '../event-columns.js';

/**
 * DDL of the event store (the `events` table from event-columns.ts). The tenant (org, project,
 * mode) is one small integer per row, assigned in `event_tenants`: one cheap comparison on
 * every read, and a constant per column segment on disk. No index anywhere: appends stay pure
 * column appends. `events_rollup` may hold several rows per (tenant, dataset, minute), one per
 * load that touched it (readers sum them); the loader merges them now and then.
 * `event_loader` holds the seq up to which the write-ahead log is loaded (one row).
 * The hot payload keys' columns (hot-columns.ts) are added after the event's own as layouts
 * need them; `event_hot_layouts` holds every layout (slots as JSON), the newest per dataset
 * being the one loads use.
 */
export const schemaSql = `
CREATE TABLE IF NOT EXISTS event_tenants (
  id UINTEGER NOT NULL,
  org_id VARCHAR NOT NULL,
  project_id VARCHAR NOT NULL,
  mode VARCHAR NOT NULL
);
${eventsTableDdl}
CREATE TABLE IF NOT EXISTS event_loader (
  position BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS events_rollup (
  tenant UINTEGER NOT NULL,
  dataset_id VARCHAR NOT NULL,
  minute BIGINT NOT NULL,
  count BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS event_hot_layouts (
  id UINTEGER NOT NULL,
  dataset_id VARCHAR NOT NULL,
  slots VARCHAR NOT NULL
);`;

/** The tenant condition every statement on `events` / `events_rollup` starts with; one value. */
export const tenantWhere = 'tenant = ?';


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
      this.ids.set(tenantKey({ orgId: org as string, projectId: project as string, mode: mode as Tenant['mode'] }), Number(id));
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

  /** An allocated id whose insert rolled back: the next allocation may reuse it. */
  release(id: number): void {
    if (id === this.last) this.last--;
  }
}

export const sqlString = (value: string): string => `'${value.replace(/'/g, "''")}'`;

/** The columns a read selects for a StoredEvent: every column but the tenant. */
const selected = eventColumnList.filter((c) => c.name !== 'tenant');
export const eventColumns = selected.map((c) => ('select' in c ? c.select : c.name)).join(', ');
const at = Object.fromEntries(selected.map((c, i) => [c.name, i])) as Record<Exclude<EventColumnName, 'tenant'>, number>;

export function toStoredEvent(row: DuckDBValue[], names: ReadonlyMap<string, string>): StoredEvent {
  const datasetId = row[at.dataset_id] as string;
  return {
    seq: Number(row[at.seq]),
    dataset: names.get(datasetId) ?? datasetId,
    event_id: row[at.event_id] as string,
    ts: Number(row[at.ts]),
    ingested_at: Number(row[at.ingested_at]),
    severity: Number(row[at.severity]),
    event: row[at.event] as string,
    actor: (row[at.actor] as string | null) ?? null,
    source: (row[at.source] as string | null) ?? null,
    message: row[at.message] as string,
    payloadJson: row[at.payload] as string,
    bytes_raw: Number(row[at.bytes_raw]),
  };
}
