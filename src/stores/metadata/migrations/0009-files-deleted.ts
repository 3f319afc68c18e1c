import { sql, type Kysely } from 'kysely';

/**
 * The list of soft-deleted files (GET /media?deleted=true): one tenant's, newest deletion first
 * (keyset on deleted_at, id). Partial, so it holds only the deleted rows (at most 30 days of
 * deletes) and uploads never write to it; SQLite and PostgreSQL both use it for a query that
 * says `deleted_at is not null`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('files_tenant_deleted')
    .on('files')
    .columns(['org_id', 'project_id', 'mode', 'deleted_at', 'id'])
    .where(sql.ref('deleted_at'), 'is not', null)
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('files_tenant_deleted').execute();
}
