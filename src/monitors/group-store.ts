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
  /** The highest and the lowest value over the groups (null when none has one). */
  highest: number | null;
  lowest: number | null;
}

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

  /**
   * The evaluation at `at` is stored: the Monitor's status.last_evaluated_at (also when no group
   * has a value). `db` may be a transaction that stores the evaluation's other writes.
   */
  async evaluated(tenant: Tenant, monitorId: string, at: number, db: Kysely<Database> = this.db): Promise<void> {
    await scoped(db, tenant).updateTable('monitors').set({ last_eval_at: iso(at) }).where('id', '=', monitorId).execute();
  }

  /**
   * Per monitor among `monitorIds` (one query, through scoped()): how many of its groups fire and
   * how many are pending, and the highest value of its last evaluation. The table holds only the
   * groups of the last evaluation (an ok group without data is forgotten), so a monitor absent
   * from the answer had no group with a value.
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
        eb.fn.max('last_value').as('highest'),
        eb.fn.min('last_value').as('lowest'),
      ])
      .where('monitor_id', 'in', [...monitorIds])
      .groupBy('monitor_id')
      .execute();
    const number = (v: unknown) => (v === null || v === undefined ? null : Number(v));
    for (const r of rows) byMonitor.set(r.monitor_id, { firing: Number(r.firing), pending: Number(r.pending), highest: number(r.highest), lowest: number(r.lowest) });
    return byMonitor;
  }

  async recordChange(tenant: Tenant, monitorId: string, groupKey: string, from: GroupState, to: GroupState, value: number | null, at: number, db: Kysely<Database> = this.db): Promise<void> {
    await db
      .insertInto('monitor_changes')
      .values({ id: newId.monitorChange(), monitor_id: monitorId, ...scoped(db, tenant).row, group_key: groupKey, from_state: from, to_state: to, value, created_at: iso(at) })
      .execute();
  }
}
