import type { Kysely } from 'kysely';

/** Announced resources (DECISIONS.md §13): cases with their attachments, and apps. Log entries are events. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('cases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('cases_tenant_created').on('cases').columns(['org_id', 'project_id', 'mode', 'created_at', 'id']).execute();
  await db.schema.createIndex('cases_tenant_status_created').on('cases').columns(['org_id', 'project_id', 'mode', 'status', 'created_at', 'id']).execute();

  // A case's attachments: references to files of the same tenant. Read joined with the active
  // files, so a soft-deleted file leaves every case at once without touching this table.
  await db.schema
    .createTable('case_attachments')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('case_id', 'text', (c) => c.notNull().references('cases.id'))
    .addColumn('file_id', 'text', (c) => c.notNull())
    .addColumn('attached_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('case_attachments_pk', ['case_id', 'file_id'])
    .execute();

  await db.schema
    .createTable('apps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  // Unique per project (and mode: test data never meets live data).
  await db.schema.createIndex('apps_tenant_name').on('apps').columns(['org_id', 'project_id', 'mode', 'name']).unique().execute();
  await db.schema.createIndex('apps_tenant_created').on('apps').columns(['org_id', 'project_id', 'mode', 'created_at', 'id']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('apps').execute();
  await db.schema.dropTable('case_attachments').execute();
  await db.schema.dropTable('cases').execute();
}
