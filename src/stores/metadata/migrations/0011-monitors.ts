import type { Kysely } from 'kysely';

/**
 * Monitors, the state of each of their groups and the history of state changes (src/monitors,
 * docs/monitors.md). Times are ISO text, so the scheduler's due and lease comparisons are text
 * comparisons in both dialects, as the outbox's.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('monitors')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('q', 'text', (c) => c.notNull())
    .addColumn('channel_ids', 'text', (c) => c.notNull())
    .addColumn('muted_until', 'text')
    .addColumn('notify_on_resolve', 'integer', (c) => c.notNull())
    .addColumn('window', 'text')
    .addColumn('every', 'text')
    .addColumn('condition_op', 'text')
    .addColumn('condition_value', 'double precision')
    .addColumn('for', 'text')
    .addColumn('no_data', 'text')
    .addColumn('repeat', 'text')
    .addColumn('group_window', 'text')
    .addColumn('next_eval_at', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('monitors_tenant_created').on('monitors').columns(['org_id', 'project_id', 'mode', 'created_at', 'id']).execute();
  // The scheduler's question: which threshold monitors are due.
  await db.schema.createIndex('monitors_due').on('monitors').columns(['kind', 'next_eval_at']).execute();

  await db.schema
    .createTable('monitor_groups')
    .addColumn('monitor_id', 'text', (c) => c.notNull())
    .addColumn('group_key', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('since', 'text', (c) => c.notNull())
    .addColumn('last_value', 'double precision')
    .addColumn('notified_at', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('monitor_groups_pk', ['monitor_id', 'group_key'])
    .execute();

  await db.schema
    .createTable('monitor_changes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('monitor_id', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('group_key', 'text', (c) => c.notNull())
    .addColumn('from_state', 'text', (c) => c.notNull())
    .addColumn('to_state', 'text', (c) => c.notNull())
    .addColumn('value', 'double precision')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('monitor_changes_monitor').on('monitor_changes').columns(['org_id', 'project_id', 'mode', 'monitor_id', 'created_at', 'id']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('monitor_changes').execute();
  await db.schema.dropTable('monitor_groups').execute();
  await db.schema.dropTable('monitors').execute();
}
