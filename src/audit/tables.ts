import type { Generated } from 'kysely';
import type { ActorType } from '../tenancy/origin.js';

/** Metadata table `audit_entries` (migration 0014-audit; on SQLite 0019-audit-append): one change, recorded in the transaction that makes it. */
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

/**
 * SQLite only (migration 0019): an organisation's blocks of 1,024 sequence numbers that hold one of
 * its entries, with the `ts` of its first entry there; written by a trigger on audit_entries.
 */
export interface AuditBlocksTable {
  org_id: string;
  /** seq >> 10 */
  block: number;
  ts: string;
}

declare module '../stores/metadata/schema.js' {
  interface Database {
    /** `seq` exists on SQLite only (0019: the rowid, in commit order); PostgreSQL keeps 0014's table. */
    audit_entries: AuditEntriesTable & { seq: Generated<number> };
    audit_blocks: AuditBlocksTable;
  }
}
