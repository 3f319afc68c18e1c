import { sql, type Kysely } from 'kysely';

/**
 * When a threshold monitor's last evaluation was stored (src/monitors/group-store.ts
 * `evaluated`): the Monitor's `status.last_evaluated_at`, and what tells "evaluated, no group
 * has a value" (`no_data`) from "not evaluated yet" when the monitor has no group rows. Monitors
 * evaluated before this migration take their groups' newest update (null without groups: they
 * show as not evaluated until their next evaluation, at most `every` later).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('monitors').addColumn('last_eval_at', 'text').execute();
  await sql`update monitors set last_eval_at = (select max(g.updated_at) from monitor_groups g where g.monitor_id = monitors.id) where kind = 'threshold'`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('monitors').dropColumn('last_eval_at').execute();
}
