import { sql, SqliteAdapter, type Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { PageRequest } from '../pagination/page.js';
import type { CursorKey } from '../pagination/cursor.js';
import { keysetBefore } from '../pagination/keyset.js';
import { badRequest } from '../errors/app-error.js';
import { iso, type Clock } from '../shared/clock.js';
import type { ActorType } from '../tenancy/origin.js';
import type { AuditEntriesTable } from './tables.js';
import './tables.js';

/** DECISIONS.md §20: entries are kept this long, then the periodic purge deletes them. */
export const auditRetentionDays = 400;
const dayMs = 24 * 60 * 60 * 1000;
/** Rows deleted per statement by the purge: a long-idle installation does not hold one huge transaction. */
const purgeBatch = 1000;
/** SQLite (migration 0019): audit_blocks' block is seq >> 10. */
const blockSize = 1 << 10;
/**
 * SQLite: the blocks one page reads at most (each up to 1,024 rows, most of them other
 * organisations' when this one is sparse): a page reads at most 16,384 entries' rows and 17 block
 * rows, whatever the organisation's share of the log. A page that reaches the bound before it is
 * full ends there, short (even empty) but with `has_more` and a cursor to go on from
 * (docs/audit.md, "Order and layout").
 */
export const blocksPerPage = 16;

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

/** One page: up to `limit` entries, and where the next page starts (undefined: there is none). */
export interface AuditPage {
  entries: AuditEntry[];
  next: CursorKey | undefined;
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
  /** SQLite's layout is 0019's (entries in commit order, found through audit_blocks); PostgreSQL's 0014's. */
  private readonly sqlite: boolean;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {
    this.sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  }

  /** An organisation's entries newest first, `page.limit` at most, from the page's position. */
  list(orgId: string, filter: AuditFilter, page: PageRequest): Promise<AuditPage> {
    return this.sqlite ? this.listBySeq(orgId, filter, page) : this.listByTs(orgId, filter, page);
  }

  /** PostgreSQL: along the index (org_id, ts, id), keyset (ts, id). */
  private async listByTs(orgId: string, filter: AuditFilter, page: PageRequest): Promise<AuditPage> {
    let query = this.db.selectFrom('audit_entries').selectAll().where('org_id', '=', orgId);
    if (filter.actor !== undefined) query = query.where('actor_id', '=', filter.actor);
    if (filter.action !== undefined) query = query.where('action', '=', filter.action);
    if (filter.target_id !== undefined) query = query.where('target_id', '=', filter.target_id);
    if (filter.from !== undefined) query = query.where('ts', '>=', iso(Date.parse(filter.from)));
    if (filter.to !== undefined) query = query.where('ts', '<', iso(Date.parse(filter.to)));
    if (page.after) query = query.where(keysetBefore('ts', 'id', page.after));
    const rows = await query.orderBy('ts', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute();
    const entries = rows.slice(0, page.limit).map(toAuditEntry);
    const last = entries[entries.length - 1];
    return { entries, next: rows.length > page.limit && last ? [last.ts, last.id] : undefined };
  }

  /**
   * SQLite: newest first by `seq` (commit order, which record.ts makes `ts` order too), keyset on
   * `seq`. The organisation's blocks come from audit_blocks newest first; each is read as a rowid
   * range of at most 1,024 rows, the filters applied within it. Blocks whose first entry of the
   * organisation is at or past `to` are skipped; below a block whose first one is before `from`,
   * every entry is before `from` too, so the list ends there. At most `blocksPerPage` blocks per
   * page.
   */
  private async listBySeq(orgId: string, filter: AuditFilter, page: PageRequest): Promise<AuditPage> {
    const before = page.after ? seqOf(page.after) : Number.MAX_SAFE_INTEGER;
    const from = filter.from !== undefined ? iso(Date.parse(filter.from)) : undefined;
    const to = filter.to !== undefined ? iso(Date.parse(filter.to)) : undefined;
    let blocksQuery = this.db
      .selectFrom('audit_blocks')
      .select(['block', 'ts'])
      .where('org_id', '=', orgId)
      .where('block', '<=', Math.floor((before - 1) / blockSize));
    if (to !== undefined) blocksQuery = blocksQuery.where('ts', '<', to);
    const blocks = await blocksQuery.orderBy('block', 'desc').limit(blocksPerPage + 1).execute();
    const rows: Array<AuditEntriesTable & { seq: number }> = [];
    for (const [i, { block, ts }] of blocks.entries()) {
      // The bound: the page ends short, the next one starts below the last block read.
      if (i === blocksPerPage) return { entries: rows.map(toAuditEntry), next: [blocks[i - 1]!.block * blockSize] };
      const start = block * blockSize;
      let query = this.db
        .selectFrom('audit_entries')
        .selectAll()
        .where('seq', '>=', start)
        .where('seq', '<', Math.min(before, start + blockSize))
        .where('org_id', '=', orgId);
      if (filter.actor !== undefined) query = query.where('actor_id', '=', filter.actor);
      if (filter.action !== undefined) query = query.where('action', '=', filter.action);
      if (filter.target_id !== undefined) query = query.where('target_id', '=', filter.target_id);
      if (from !== undefined) query = query.where('ts', '>=', from);
      if (to !== undefined) query = query.where('ts', '<', to);
      rows.push(...(await query.orderBy('seq', 'desc').limit(page.limit + 1 - rows.length).execute()));
      if (rows.length > page.limit) {
        const kept = rows.slice(0, page.limit);
        return { entries: kept.map(toAuditEntry), next: [kept[kept.length - 1]!.seq] };
      }
      if (from !== undefined && ts < from) break;
    }
    return { entries: rows.map(toAuditEntry), next: undefined };
  }

  /**
   * Deletes entries older than 400 days (the periodic purge, `opsctl purge`), in batches.
   * PostgreSQL: organisation by organisation along the list's index; an organisation that was
   * deleted keeps its entries until a purge of its own id (none are deleted today: opsctl has no
   * org delete). SQLite: the log's oldest entries are the first rows of the table (`ts` grows
   * with `seq`), so the purge deletes from its start while entries are due, whoever's they are,
   * and with them the blocks no entry is left in — in one transaction, so that a log purged to
   * empty (whose next `seq` starts again at 1) keeps no block of the entries before.
   */
  async purge(): Promise<{ entries: number }> {
    const cutoff = iso(this.clock.now() - auditRetentionDays * dayMs);
    return this.sqlite ? this.purgeBySeq(cutoff) : this.purgeByOrg(cutoff);
  }

  private async purgeBySeq(cutoff: string): Promise<{ entries: number }> {
    let entries = 0;
    for (;;) {
      const head = await this.db.selectFrom('audit_entries').select(['seq', 'ts']).orderBy('seq').limit(purgeBatch).execute();
      let due = 0;
      while (due < head.length && head[due]!.ts < cutoff) due++;
      if (due === 0) break;
      const last = head[due - 1]!.seq;
      await this.db.transaction().execute(async (trx) => {
        const result = await trx.deleteFrom('audit_entries').where('seq', '<=', last).executeTakeFirst();
        entries += Number(result.numDeletedRows);
        await trx
          .deleteFrom('audit_blocks')
          .where('block', '<', sql<number>`coalesce((select min(seq) from audit_entries) >> 10, ${Number.MAX_SAFE_INTEGER})`)
          .execute();
      });
      if (due < head.length || head.length < purgeBatch) break;
    }
    return { entries };
  }

  private async purgeByOrg(cutoff: string): Promise<{ entries: number }> {
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

/** A SQLite page's cursor: the `seq` the next page starts below; any other key is the cursor's 400. */
function seqOf(key: CursorKey): number {
  const seq = key[0];
  if (key.length !== 1 || typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) {
    throw badRequest('invalid cursor: pass the next_cursor value of the previous page of this same list, unchanged');
  }
  return seq;
}
