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
    // Unique by construction (aud_<ULID>) and never looked up alone: no primary-key index, so
    // an entry costs its row and one index entry, written beside every change it records.
    .addColumn('id', 'text', (c) => c.notNull())
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
  // The purge walks it too, organisation by organisation (no second index to write per entry).
  await db.schema.createIndex('audit_entries_org_ts').on('audit_entries').columns(['org_id', 'ts', 'id']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_entries').execute();
}
