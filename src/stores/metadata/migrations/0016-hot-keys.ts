import type { Kysely } from 'kysely';

/**
 * A dataset's hot payload keys (src/events/hot-keys.ts): JSON text of
 * `[{path, type, pinned}]`, null until discovery or an operator chose some. The engine keeps
 * its own record of which rows hold which keys (event_hot_layouts); this is what is wanted.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('datasets').addColumn('hot_keys', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('datasets').dropColumn('hot_keys').execute();
}
