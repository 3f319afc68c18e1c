import { sql, type Kysely, type UpdateQueryBuilder, type UpdateResult } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { Dialect } from '../stores/metadata/database.js';
import { scoped } from '../tenancy/scoped.js';
import type { Tenant } from '../tenancy/tenant.js';
import type { PageRequest } from '../pagination/page.js';
import { keysetBefore } from '../pagination/keyset.js';
import type { FilesTable } from './files-table.js';
import './files-table.js';

export interface ListFilter {
  folder?: string;
  tag?: string;
}

type FilesUpdate = UpdateQueryBuilder<Database, 'files', 'files', UpdateResult>;

/**
 * The `files` table. Tenant operations go through `scoped`; the three system paths
 * (delivery by key, purge, restore from opsctl) are deliberately cross-tenant and named so.
 */
export class FilesRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

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
  async list(tenant: Tenant, page: PageRequest, filter: ListFilter): Promise<FilesTable[]> {
    let query = this.filtered(tenant, filter).where('deleted_at', 'is', null);
    if (page.after) query = query.where(keysetBefore('created_at', 'id', page.after));
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute();
  }

  /**
   * Soft-deleted files still inside their window (restorable), newest deletion first,
   * `limit + 1` rows after the page's position. One past its window but not purged yet is left
   * out: it can no longer be restored. Served by the partial index files_tenant_deleted.
   */
  async listDeleted(tenant: Tenant, page: PageRequest, filter: ListFilter, now: string): Promise<FilesTable[]> {
    let query = this.filtered(tenant, filter).where('deleted_at', 'is not', null).where('purges_at', '>', now);
    if (page.after) query = query.where(keysetBefore('deleted_at', 'id', page.after));
    return query.orderBy('deleted_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute();
  }

  private filtered(tenant: Tenant, filter: ListFilter) {
    let query = scoped(this.db, tenant).selectFrom('files').selectAll();
    if (filter.folder !== undefined) query = query.where('folder', '=', filter.folder);
    if (filter.tag !== undefined) {
      // tags is a JSON array and tags cannot contain `"` or `\`, so `"tag"` matches one whole element.
      const needle = JSON.stringify(filter.tag);
      const position = this.dialect === 'sqlite' ? sql<number>`instr(tags, ${needle})` : sql<number>`strpos(tags, ${needle})`;
      query = query.where(position, '>', 0);
    }
    return query;
  }

  /** Soft delete; false when the file is not an active file of the tenant. */
  async softDelete(tenant: Tenant, id: string, now: string, purgesAt: string): Promise<boolean> {
    const result = await scoped(this.db, tenant)
      .updateTable('files')
      .set({ deleted_at: now, purges_at: purgesAt, updated_at: now })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
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
    await this.undoSoftDelete(scoped(this.db, tenant).updateTable('files'), id, now);
    return this.get(tenant, id);
  }

  /** System path (opsctl): undoes a soft delete still inside its window, whichever tenant's file. */
  async restoreAnyTenant(id: string, now: string): Promise<FilesTable | undefined> {
    if (!(await this.undoSoftDelete(this.db.updateTable('files'), id, now))) return undefined;
    return this.db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();
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
  async claimPurged(id: string, now: string): Promise<boolean> {
    const result = await this.db.deleteFrom('files').where('id', '=', id).where('purges_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }
}
