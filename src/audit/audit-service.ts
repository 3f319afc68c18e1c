import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { PageRequest } from '../pagination/page.js';
import { keysetBefore } from '../pagination/keyset.js';
import { iso, type Clock } from '../shared/clock.js';
import type { ActorType } from './origin.js';
import type { AuditEntriesTable } from './tables.js';
import './tables.js';

/** DECISIONS.md §20: entries are kept this long, then the periodic purge deletes them. */
export const auditRetentionDays = 400;
const dayMs = 24 * 60 * 60 * 1000;
/** Rows deleted per statement by the purge: a long-idle installation does not hold one huge transaction. */
const purgeBatch = 1000;

/** One entry as GET /v1/orgs/{orgId}/audit and `opsctl audit list` show it. */
export interface AuditEntry {
  id: string;
  ts: string;
  action: string;
  actor: { type: ActorType; id: string; name: string };
  target: { type: string; id: string };
  project_id?: string;
  mode?: 'live' | 'test';
  request_id: string;
  ip: string;
  user_agent: string;
  outcome: 'success' | 'failure';
  details: Record<string, unknown>;
}

export interface AuditFilter {
  /** An actor id (usr_…, tok_…, an operator's account). */
  actor?: string;
  action?: string;
  target_id?: string;
  /** ISO 8601, inclusive. */
  from?: string;
  /** ISO 8601, exclusive. */
  to?: string;
}

export const toAuditEntry = (row: AuditEntriesTable): AuditEntry => ({
  id: row.id,
  ts: row.ts,
  action: row.action,
  actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name },
  target: { type: row.target_type, id: row.target_id },
  ...(row.project_id !== null ? { project_id: row.project_id } : {}),
  ...(row.mode !== null ? { mode: row.mode } : {}),
  request_id: row.request_id,
  ip: row.ip,
  user_agent: row.user_agent,
  outcome: row.outcome,
  details: JSON.parse(row.details) as Record<string, unknown>,
});

/** Reads and purges the audit log; writes go through record.ts, inside each change's transaction. */
export class AuditService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  /** An organisation's entries newest first, `limit + 1` rows after the page's position. */
  async list(orgId: string, filter: AuditFilter, page: PageRequest): Promise<AuditEntry[]> {
    let query = this.db.selectFrom('audit_entries').selectAll().where('org_id', '=', orgId);
    if (filter.actor !== undefined) query = query.where('actor_id', '=', filter.actor);
    if (filter.action !== undefined) query = query.where('action', '=', filter.action);
    if (filter.target_id !== undefined) query = query.where('target_id', '=', filter.target_id);
    if (filter.from !== undefined) query = query.where('ts', '>=', iso(Date.parse(filter.from)));
    if (filter.to !== undefined) query = query.where('ts', '<', iso(Date.parse(filter.to)));
    if (page.after) query = query.where(keysetBefore('ts', 'id', page.after));
    const rows = await query.orderBy('ts', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute();
    return rows.map(toAuditEntry);
  }

  /**
   * Deletes entries older than 400 days (the periodic purge, `opsctl purge`), organisation by
   * organisation along the list's index, in batches. An organisation that was deleted keeps its
   * entries until a purge of its own id; none are deleted today (opsctl has no org delete).
   */
  async purge(): Promise<{ entries: number }> {
    const cutoff = iso(this.clock.now() - auditRetentionDays * dayMs);
    let entries = 0;
    const orgs = await this.db.selectFrom('organisations').select('id').execute();
    for (const { id: orgId } of orgs) {
      for (;;) {
        const due = await this.db.selectFrom('audit_entries').select('id').where('org_id', '=', orgId).where('ts', '<', cutoff).limit(purgeBatch).execute();
        if (!due.length) break;
        const ids = due.map((r) => r.id);
        const result = await this.db.deleteFrom('audit_entries').where('org_id', '=', orgId).where('id', 'in', ids).executeTakeFirst();
        entries += Number(result.numDeletedRows);
        if (due.length < purgeBatch) break;
      }
    }
    return { entries };
  }
}
