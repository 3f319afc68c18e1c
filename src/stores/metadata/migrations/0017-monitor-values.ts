import { sql, type Kysely } from 'kysely';

/**
 * A threshold monitor's values at its last evaluation, on the monitor's own row (the Monitor's
 * `status.last_value`: the highest for `>`/`>=`, the lowest for `<`/`<=`; null when no group had
 * a value). They were read from `monitor_groups.last_value`, which made every evaluation write
 * every group's row; a group's row is now written only when its state changes
 * (src/monitors/evaluator.ts), so an evaluation that changes no state writes the monitor's row
 * alone. Monitors evaluated before this migration take their groups' values.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('monitors').addColumn('last_high', 'double precision').execute();
  await db.schema.alterTable('monitors').addColumn('last_low', 'double precision').execute();
  await sql`update monitors set
    last_high = (select max(g.last_value) from monitor_groups g where g.monitor_id = monitors.id),
    last_low = (select min(g.last_value) from monitor_groups g where g.monitor_id = monitors.id)
    where kind = 'threshold'`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('monitors').dropColumn('last_low').execute();
  await db.schema.alterTable('monitors').dropColumn('last_high').execute();
}
