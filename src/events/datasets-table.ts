/** Metadata table `datasets` (migration 0003-events), one row per dataset of a tenant. */
export interface DatasetsTable {
  /** ds_<ULID>; events carry it, so a rename touches no event. */
  id: string;
  org_id: string;
  project_id: string;
  mode: 'live' | 'test';
  name: string;
  retention_days: number;
  default_severity: string | null;
  /** 1 for the reserved `default` dataset. */
  is_default: number;
  /** Set when archived; archived datasets keep their name (ingest to it is 409). */
  archived_at: string | null;
  /** Hot payload keys, JSON `[{path, type, pinned}]` (migration 0016; events/hot-keys.ts). */
  hot_keys: string | null;
  created_at: string;
  updated_at: string;
}

declare module '../stores/metadata/schema.js' {
  interface Database {
    datasets: DatasetsTable;
  }
}
