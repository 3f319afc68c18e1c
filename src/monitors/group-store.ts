import { sql, type Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { Tenant } from '../tenancy/tenant.js';
import { scoped } from '../tenancy/scoped.js';
import { newId } from '../shared/ids.js';
import { iso } from '../shared/clock.js';
import type { GroupState, MonitorGroupsTable } from './tables.js';
import './tables.js';

export interface GroupSummary {
  firing: number;
  pending: number;
}

/** The state of a monitor's groups and the history of their changes, through scoped(); writes in `db` when it is the evaluation's transaction. */
export class GroupStore {
  constructor(private readonly db: Kysely<Database>) {}

  async groups(tenant: Tenant, monitorId: string): Promise<MonitorGroupsTable[]> {
    return scoped(this.db, tenant).selectFrom('monitor_groups').selectAll().where('monitor_id', '=', monitorId).execute();
  }

  /**
   * Stores the group's state (an ok group without data is forgotten, so the table stays as small
   * as the groups alive). The evaluator calls it only for a group that appears, changes or is
   * forgotten: an unchanged group's row stays as it is.
   */
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

  /**
   * Per monitor among `monitorIds` (one query, through scoped()): how many of its groups fire and
   * how many are pending (a monitor absent from the answer has neither). Its last evaluation's
   * values are on the monitor's row (last_high, last_low).
   */
  async summaries(tenant: Tenant, monitorIds: readonly string[]): Promise<Map<string, GroupSummary>> {
    const byMonitor = new Map<string, GroupSummary>();
    if (!monitorIds.length) return byMonitor;
    const rows = await scoped(this.db, tenant)
      .selectFrom('monitor_groups')
      .select((eb) => [
        'monitor_id',
        eb.fn.sum<number | string>(sql<number>`case when state = 'firing' then 1 else 0 end`).as('firing'),
        eb.fn.sum<number | string>(sql<number>`case when state = 'pending' then 1 else 0 end`).as('pending'),
      ])
      .where('monitor_id', 'in', [...monitorIds])
      .groupBy('monitor_id')
      .execute();
    for (const r of rows) byMonitor.set(r.monitor_id, { firing: Number(r.firing), pending: Number(r.pending) });
    return byMonitor;
  }

  async recordChange(tenant: Tenant, monitorId: string, groupKey: string, from: GroupState, to: GroupState, value: number | null, at: number, db: Kysely<Database> = this.db): Promise<void> {
    await db
      .insertInto('monitor_changes')
      .values({ id: newId.monitorChange(), monitor_id: monitorId, ...scoped(db, tenant).row, group_key: groupKey, from_state: from, to_state: to, value, created_at: iso(at) })
      .execute();
  }
}
