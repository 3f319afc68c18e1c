import type { Kysely } from 'kysely';

/**
 * Whose turn it is to look after a dataset's hot keys in the background (src/events/
 * hot-key-chooser.ts): every process that loads events has the task, and on ClickHouse every
 * API process loads, so a process takes a dataset's turn (`turn_until`, ISO text compared as
 * text in both dialects, as the monitors' leases) before it samples the dataset or starts the
 * filling of its older rows. `chosen_at`: when its keys were last chosen in the background.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('dataset_hot_key_turns')
    .addColumn('dataset_id', 'text', (c) => c.primaryKey())
    .addColumn('turn_until', 'text', (c) => c.notNull())
    .addColumn('chosen_at', 'text')
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('dataset_hot_key_turns').execute();
}
