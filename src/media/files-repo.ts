import { sql, type CompiledQuery, type Kysely, type UpdateQueryBuilder, type UpdateResult } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { Dialect, MetadataStore } from '../stores/metadata/database.js';
import { precompile } from '../stores/metadata/precompiled.js';
import { scoped } from '../tenancy/scoped.js';
import type { Tenant } from '../tenancy/tenant.js';
import type { PageRequest } from '../pagination/page.js';
import { keysetBefore, keysetValues } from '../pagination/keyset.js';
import type { FilesTable } from './files-table.js';
import './files-table.js';
import { audit, inTenant } from '../audit/record.js';

export interface ListFilter {
  folder?: string;
  tag?: string;
}

type FilesUpdate = UpdateQueryBuilder<Database, 'files', 'files', UpdateResult>;

/** The values a list query takes; which of them a variant uses depends on its filter and page. */
type ListParam = 'orgId' | 'projectId' | 'mode' | 'folder' | 'tag' | 'now' | 'afterAt' | 'afterId' | 'limit';
type ListQuery = (values: Partial<Record<ListParam, unknown>>) => CompiledQuery<FilesTable>;

/**
 * The `files` table. Tenant operations go through `scoped`; the three system paths
 * (delivery by key, purge, restore from opsctl) are deliberately cross-tenant and named so.
 */
export class FilesRepo {
  private readonly db: Kysely<Database>;
  private readonly dialect: Dialect;
  /**
   * The list queries, compiled once per variant (active or deleted, first page or after a
   * cursor, with or without folder and tag): building and compiling one with Kysely took
   * longer than SQLite takes to run it, on every GET /media.
   */
  private readonly listQueries = new Map<string, ListQuery>();

  constructor(private readonly metadata: Pick<MetadataStore, 'db' | 'dialect' | 'readMostly'>) {
    this.db = metadata.db;
    this.dialect = metadata.dialect;
  }

  async insert(row: FilesTable): Promise<void> {
    await this.db.insertInto('files').values(row).execute();
  }

  /** One active file of the tenant. */
  async get(tenant: Tenant, id: string): Promise<FilesTable | undefined> {
    return scoped(this.db, tenant).selectFrom('files').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  }

  /**
   * The tenant's active, unblocked files among `ids`, in one query (a notification's evidence:
   * src/notifications/evidence.ts); ids of other tenants, deleted or blocked files are left out.
   */
  async activeByIds(tenant: Tenant, ids: readonly string[]): Promise<FilesTable[]> {
    if (!ids.length) return [];
    return scoped(this.db, tenant)
      .selectFrom('files')
      .selectAll()
      .where('id', 'in', [...ids])
      .where('deleted_at', 'is', null)
      .where('abuse_status', '!=', 'blocked')
      .execute();
  }

  /** Active files, newest first, `limit + 1` rows after the page's position. */
  /**
   * Read-mostly (MetadataStore.readMostly): a project's files change far less often than they
   * are listed, and on SQLite the answer is read again as soon as anything is written. The rows
   * are shared between requests and must not be modified.
   */
  async list(tenant: Tenant, page: PageRequest, filter: ListFilter): Promise<readonly FilesTable[]> {
    const query = this.listQuery('active', page, filter);
    return this.metadata.readMostly(query(this.listValues(tenant, page, filter)));
  }

  /**
   * Soft-deleted files still inside their window (restorable), newest deletion first,
   * `limit + 1` rows after the page's position. One past its window but not purged yet is left
   * out: it can no longer be restored. Served by the partial index files_tenant_deleted.
   */
  async listDeleted(tenant: Tenant, page: PageRequest, filter: ListFilter, now: string): Promise<FilesTable[]> {
    // Not read-mostly: `now` differs on every call, so no answer would ever be served twice.
    const query = this.listQuery('deleted', page, filter);
    return (await this.db.executeQuery(query({ ...this.listValues(tenant, page, filter), now }))).rows;
  }

  private listValues(tenant: Tenant, page: PageRequest, filter: ListFilter): Partial<Record<ListParam, unknown>> {
    const values: Partial<Record<ListParam, unknown>> = { orgId: tenant.orgId, projectId: tenant.projectId, mode: tenant.mode, limit: page.limit + 1 };
    if (filter.folder !== undefined) values.folder = filter.folder;
    // tags is a JSON array and tags cannot contain `"` or `\`, so `"tag"` matches one whole element.
    if (filter.tag !== undefined) values.tag = JSON.stringify(filter.tag);
    if (page.after) [values.afterAt, values.afterId] = keysetValues(page.after);
    return values;
  }

  /** The compiled list query of one variant, built on its first use. */
  private listQuery(which: 'active' | 'deleted', page: PageRequest, filter: ListFilter): ListQuery {
    const after = page.after !== undefined;
    const folder = filter.folder !== undefined;
    const tag = filter.tag !== undefined;
    const key = `${which}:${after}:${folder}:${tag}`;
    let query = this.listQueries.get(key);
    if (query) return query;
    const names: ListParam[] = ['orgId', 'projectId', 'mode', 'limit'];
    if (folder) names.push('folder');
    if (tag) names.push('tag');
    if (after) names.push('afterAt', 'afterId');
    if (which === 'deleted') names.push('now');
    const at = which === 'active' ? 'created_at' : 'deleted_at';
    query = precompile((p) => {
      const tenant = { orgId: p('orgId'), projectId: p('projectId'), mode: p('mode') as Tenant['mode'] };
      let q = scoped(this.db, tenant).selectFrom('files').selectAll();
      if (folder) q = q.where('folder', '=', p('folder'));
      if (tag) {
        const needle = p('tag');
        const position = this.dialect === 'sqlite' ? sql<number>`instr(tags, ${needle})` : sql<number>`strpos(tags, ${needle})`;
        q = q.where(position, '>', 0);
      }
      q = which === 'active' ? q.where('deleted_at', 'is', null) : q.where('deleted_at', 'is not', null).where('purges_at', '>', p('now'));
      if (after) q = q.where(keysetBefore(at, 'id', [p('afterAt'), p('afterId')]));
      return q.orderBy(at, 'desc').orderBy('id', 'desc').limit(p('limit') as unknown as number);
    }, names) as ListQuery;
    this.listQueries.set(key, query);
    return query;
  }

  /** Soft delete, recorded in the audit log with it; false when the file is not an active file of the tenant. */
  async softDelete(tenant: Tenant, id: string, now: string, purgesAt: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await scoped(trx, tenant)
        .updateTable('files')
        .set({ deleted_at: now, purges_at: purgesAt, updated_at: now })
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await audit.record(trx, { action: 'file.delete', ...inTenant(tenant), target: { type: 'file', id }, at: Date.parse(now), details: { purges_at: purgesAt } });
      return true;
    });
  }

  /** System path (public delivery): the file a URL names, soft-deleted ones included. */
  async byKeyForDelivery(key: string): Promise<FilesTable | undefined> {
    return this.db.selectFrom('files').selectAll().where('key', '=', key).executeTakeFirst();
  }

  /**
   * Undoes a soft delete of the tenant's file still inside its window, and answers the file
   * when it is then active: just restored, or active already (restoring twice changes nothing).
   * Undefined for an unknown id, another tenant's, and one past its window or purged.
   */
  async restore(tenant: Tenant, id: string, now: string): Promise<FilesTable | undefined> {
    await this.db.transaction().execute(async (trx) => {
      // Restoring an active file changes nothing, and records nothing.
      if (await this.undoSoftDelete(scoped(trx, tenant).updateTable('files'), id, now)) {
        await audit.record(trx, { action: 'file.restore', ...inTenant(tenant), target: { type: 'file', id }, at: Date.parse(now) });
      }
    });
    return this.get(tenant, id);
  }

  /** System path (opsctl): undoes a soft delete still inside its window, whichever tenant's file. */
  async restoreAnyTenant(id: string, now: string): Promise<FilesTable | undefined> {
    return this.db.transaction().execute(async (trx) => {
      if (!(await this.undoSoftDelete(trx.updateTable('files'), id, now))) return undefined;
      const row = await trx.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      const tenant = { orgId: row.org_id, projectId: row.project_id, mode: row.mode };
      await audit.record(trx, { action: 'file.restore', ...inTenant(tenant), target: { type: 'file', id }, at: Date.parse(now) });
      return row;
    });
  }

  /**
   * The one statement both restores run. `purges_at > now` keeps it off a file the purge may be
   * removing (the purge takes rows with `purges_at <= now`). The quota is untouched: storage_bytes
   * counts soft-deleted files until they are purged (DECISIONS.md §7).
   */
  private async undoSoftDelete(update: FilesUpdate, id: string, now: string): Promise<boolean> {
    const result = await update
      .set({ deleted_at: null, purges_at: null, updated_at: now })
      .where('id', '=', id)
      .where('deleted_at', 'is not', null)
      .where('purges_at', '>', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** System path (purge): soft-deleted files whose window has passed, oldest first. */
  async due(now: string, limit: number): Promise<FilesTable[]> {
    return this.db.selectFrom('files').selectAll().where('purges_at', '<=', now).orderBy('purges_at').limit(limit).execute();
  }

  /**
   * System path (purge): removes the row if it is still due. Exactly one process gets true
   * for a given file, so only that one gives its bytes back to the quota.
   */
  async claimPurged(row: FilesTable, now: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx.deleteFrom('files').where('id', '=', row.id).where('purges_at', '<=', now).executeTakeFirst();
      if (Number(result.numDeletedRows) !== 1) return false;
      // The purge's actor is the operator: the server's own job, or `opsctl purge`.
      const tenant = { orgId: row.org_id, projectId: row.project_id, mode: row.mode };
      await audit.record(trx, { action: 'file.purge', ...inTenant(tenant), target: { type: 'file', id: row.id }, at: Date.parse(now), details: { size: Number(row.size) } });
      return true;
    });
  }
}
