import type { Kysely } from 'kysely';

/**
 * Storage quota held by uploads in flight. The reservation is counted in usage_counters as
 * soon as it is made; this row says so, with the blob key, until the file's record replaces
 * it (in the same transaction). A crash in between leaves the row, from which the purge job
 * gives the quota back and removes the blob.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('upload_reservations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('upload_reservations_created').on('upload_reservations').column('created_at').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('upload_reservations').execute();
}
