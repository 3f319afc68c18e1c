/** Metadata table `saved_searches` (migration 0012-saved-searches): a project and mode's saved explorer searches. */
export interface SavedSearchesTable {
  /** ss_<ULID> */
  id: string;
  org_id: string;
  project_id: string;
  mode: 'live' | 'test';
  /** 1–100 characters, unique within the project and mode. */
  name: string;
  /** A SOQL query, stored as the client wrote it (it parsed when saved). */
  q: string;
  /** A relative range (`15m`…`30d`), or null. */
  range_last: string | null;
  /** An absolute range, ISO 8601 UTC with milliseconds, or both null. */
  range_from: string | null;
  range_to: string | null;
  created_at: string;
  updated_at: string;
}

declare module '../stores/metadata/schema.js' {
  interface Database {
    saved_searches: SavedSearchesTable;
  }
}
