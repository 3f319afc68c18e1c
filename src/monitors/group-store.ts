import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { Tenant } from '../tenancy/tenant.js';
import { scoped } from '../tenancy/scoped.js';
import { newId } from '../shared/ids.js';
import { iso } from '../shared/clock.js';
import type { GroupState, MonitorGroupsTable } from './tables.js';
import './tables.js';

/** The state of a monitor's groups and the history of their changes, through scoped(); writes in `db` when it is the evaluation's transaction. */
export class GroupStore {
  constructor(private readonly db: Kysely<Database>) {}

  async groups(tenant: Tenant, monitorId: string): Promise<MonitorGroupsTable[]> {
    return scoped(this.db, tenant).selectFrom('monitor_groups').selectAll().where('monitor_id', '=', monitorId).execute();
  }

  /** Stores the group's state (an ok group without data is forgotten, so the table stays as small as the groups alive). */
  async save(tenant: Tenant, row: MonitorGroupsTable, existed: boolean, forget: boolean, db: Kysely<Database> = this.db): Promise<void> {
    const where = scoped(db, tenant);
    if (forget) {
      if (existed) await where.deleteFrom('monitor_groups').where('monitor_id', '=', row.monitor_id).where('group_key', '=', row.group_key).execute();
      return;
    }
    if (existed) {
      const { state, since, last_value, notified_at, updated_at } = row;
      await where.updateTable('monitor_groups').set({ state, since, last_value, notified_at, updated_at }).where('monitor_id', '=', row.monitor_id).where('group_key', '=', row.group_key).execute();
    } else {
      await db.insertInto('monitor_groups').values(row).execute();
    }
  }

  async recordChange(tenant: Tenant, monitorId: string, groupKey: string, from: GroupState, to: GroupState, value: number | null, at: number, db: Kysely<Database> = this.db): Promise<void> {
    await db
      .insertInto('monitor_changes')
      .values({ id: newId.monitorChange(), monitor_id: monitorId, ...scoped(db, tenant).row, group_key: groupKey, from_state: from, to_state: to, value, created_at: iso(at) })
      .execute();
  }
}
