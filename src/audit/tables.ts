import type { ActorType } from './origin.js';

/** Metadata table `audit_entries` (migration 0014-audit): one change, recorded in its own transaction. */
export interface AuditEntriesTable {
  /** aud_<ULID> */
  id: string;
  org_id: string;
  /** ISO 8601 UTC with milliseconds. */
  ts: string;
  action: string;
  actor_type: ActorType;
  actor_id: string;
  actor_name: string;
  target_type: string;
  target_id: string;
  project_id: string | null;
  mode: 'live' | 'test' | null;
  request_id: string;
  ip: string;
  user_agent: string;
  outcome: 'success' | 'failure';
  /** A JSON object of what changed; never a secret (record.ts strips secret-named keys). */
  details: string;
}

declare module '../stores/metadata/schema.js' {
  interface Database {
    audit_entries: AuditEntriesTable;
  }
}
