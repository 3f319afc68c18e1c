import { sql, type Kysely } from 'kysely';
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

  /** Active files, newest first, `limit + 1` rows after the page's position. */
  async list(tenant: Tenant, page: PageRequest, filter: ListFilter): Promise<FilesTable[]> {
    let query = scoped(this.db, tenant).selectFrom('files').selectAll().where('deleted_at', 'is', null);
    if (filter.folder !== undefined) query = query.where('folder', '=', filter.folder);
    if (filter.tag !== undefined) {
      // tags is a JSON array and tags cannot contain `"` or `\`, so `"tag"` matches one whole element.
      const needle = JSON.stringify(filter.tag);
      const position = this.dialect === 'sqlite' ? sql<number>`instr(tags, ${needle})` : sql<number>`strpos(tags, ${needle})`;
      query = query.where(position, '>', 0);
    }
    if (page.after) query = query.where(keysetBefore('created_at', 'id', page.after));
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute();
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

  /** System path (opsctl): undoes a soft delete still inside its window. */
  async restore(id: string, now: string): Promise<FilesTable | undefined> {
    const result = await this.db
      .updateTable('files')
      .set({ deleted_at: null, purges_at: null, updated_at: now })
      .where('id', '=', id)
      .where('deleted_at', 'is not', null)
      .where('purges_at', '>', now)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return undefined;
    return this.db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();
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
