import type { Kysely } from 'kysely';

/**
 * When a monitor last matched (the Monitor's `status.last_match_at`, docs/monitors.md "Status"):
 * for a match monitor the ingest time of its latest matching event, written with the
 * notification that carries it; for a threshold monitor the last evaluation at which a group's
 * value met the condition, written by that evaluation's commit. On the monitor's row in the
 * metadata store so that every process and host answers the same. Monitors that matched before
 * this migration show null until their next match: nothing stored the time before.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('monitors').addColumn('last_match_at', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('monitors').dropColumn('last_match_at').execute();
}
