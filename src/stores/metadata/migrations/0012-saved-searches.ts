import type { Kysely } from 'kysely';

/**
 * Saved searches of the explorer (src/searches, docs/saved-searches.md). The name is unique per
 * project and mode by a constraint, so two concurrent creates cannot both win: the loser is a 409.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('saved_searches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('q', 'text', (c) => c.notNull())
    .addColumn('range_last', 'text')
    .addColumn('range_from', 'text')
    .addColumn('range_to', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('saved_searches_tenant_name', ['org_id', 'project_id', 'mode', 'name'])
    .execute();
  // The list: a tenant's searches newest first, by keyset (created_at, id).
  await db.schema.createIndex('saved_searches_tenant_created').on('saved_searches').columns(['org_id', 'project_id', 'mode', 'created_at', 'id']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('saved_searches').execute();
}
