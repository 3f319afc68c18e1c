import type { Kysely } from 'kysely';

/**
 * The audit log (src/audit, DECISIONS.md §20): one row per change, written in the transaction
 * of the change it records. Append-only: no code path updates a row; the purge deletes rows
 * older than 400 days.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('audit_entries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // No foreign key: an entry outlives what it names (a purged file, a removed member).
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('ts', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text', (c) => c.notNull())
    .addColumn('actor_name', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text')
    .addColumn('mode', 'text')
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('user_agent', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('details', 'text', (c) => c.notNull())
    .execute();
  // The list: an organisation's entries newest first, by keyset (ts, id); the filters narrow it.
  await db.schema.createIndex('audit_entries_org_ts').on('audit_entries').columns(['org_id', 'ts', 'id']).execute();
  // The purge: entries older than the retention, across organisations.
  await db.schema.createIndex('audit_entries_ts').on('audit_entries').columns(['ts']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_entries').execute();
}
