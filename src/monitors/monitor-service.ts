import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { Tenant } from '../tenancy/tenant.js';
import type { PlanCatalogue } from '../plans/catalogue.js';
import type { ChannelService } from '../notifications/channel-service.js';
import { scoped } from '../tenancy/scoped.js';
import { AppError, badRequest, notFound } from '../errors/app-error.js';
import { newId } from '../shared/ids.js';
import { iso, type Clock } from '../shared/clock.js';
import type { PageRequest } from '../pagination/page.js';
import { keysetBefore } from '../pagination/keyset.js';
import { checkMonitor, inputOf, type MonitorInput } from './monitor.js';
import type { MonitorsTable } from './tables.js';
import './tables.js';
import { KeyedLock } from '../shared/keyed-lock.js';
import { audit, inTenant } from '../audit/record.js';

/**
 * How many monitors the organisation has, in all its projects and modes: what the plan's
 * `monitors` cap counts (the create's check, and GET /v1/usage's `monitors` quota).
 */
export async function monitorsOfOrg(db: Kysely<Database>, orgId: string): Promise<number> {
  const row = await db.selectFrom('monitors').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Monitors of a project and mode (DECISIONS.md §18), always through scoped(). */
export class MonitorService {
  private readonly orgLock = new KeyedLock();
  /** Called after any change of a tenant's monitors (the match cache forgets the tenant). */
  onChanged: (tenant: Tenant) => void = () => {};

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly plans: PlanCatalogue,
    private readonly channels: ChannelService,
  ) {}

  async create(tenant: Tenant, plan: string, input: MonitorInput): Promise<MonitorsTable> {
    const columns = checkMonitor(input);
    await this.checkChannels(tenant, input.channel_ids);
    // The cap holds across processes and hosts: the count and the insert run in one transaction
    // that first writes the organisation's row (a row lock on PostgreSQL, the database's write
    // lock on SQLite), so a creation in another process waits for this one's commit and counts
    // its monitor. The in-process lock keeps this process's creations from queueing on that.
    return this.orgLock.run(tenant.orgId, async () => {
      const row = await this.db.transaction().execute(async (trx) => {
        await trx.updateTable('organisations').set((eb) => ({ plan: eb.ref('plan') })).where('id', '=', tenant.orgId).execute();
        const cap = this.plans.limits(plan).monitors;
        const used = await this.countOfOrg(tenant.orgId, trx);
        if (cap !== null && used >= cap) {
          throw new AppError('quota_exceeded', `the plan allows ${cap} monitors and all are in use; delete one or upgrade the plan`, {
            metric: 'monitors',
            quotas: [{ metric: 'monitors', used, limit: cap, cumulative: true }],
          });
        }
        const now = iso(this.clock.now());
        const created: MonitorsTable = {
          id: newId.monitor(),
          ...scoped(this.db, tenant).row,
          ...columns,
          next_eval_at: columns.kind === 'threshold' ? now : null,
          lease_until: null,
          lease_owner: null,
          last_eval_at: null,
          last_high: null,
          last_low: null,
          last_match_at: null,
          created_at: now,
          updated_at: now,
        };
        await trx.insertInto('monitors').values(created).execute();
        await audit.record(trx, {
          action: 'monitor.create',
          ...inTenant(tenant),
          target: { type: 'monitor', id: created.id },
          at: Date.parse(now),
          details: { name: created.name, kind: created.kind },
        });
        return created;
      });
      this.onChanged(tenant);
      return row;
    });
  }

  async get(tenant: Tenant, id: string): Promise<MonitorsTable> {
    const row = await scoped(this.db, tenant).selectFrom('monitors').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound(`no monitor ${id}`);
    return row;
  }

  /** Newest first, `limit + 1` rows after the page's position. */
  async list(tenant: Tenant, page: PageRequest): Promise<MonitorsTable[]> {
    let query = scoped(this.db, tenant).selectFrom('monitors').selectAll();
    if (page.after) query = query.where(keysetBefore('created_at', 'id', page.after));
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute();
  }

  /** The tenant's match monitors (the write path's cache fills from here). */
  async matchMonitors(tenant: Tenant): Promise<MonitorsTable[]> {
    return scoped(this.db, tenant).selectFrom('monitors').selectAll().where('kind', '=', 'match').execute();
  }

  /**
   * A match monitor matched at `at` (ms): its last_match_at, written in the caller's transaction
   * with the notification (matcher.ts). Only moved forward: processes and hosts that match the
   * same monitor write in any order (ISO times of one width compare as text).
   */
  async recordMatch(tenant: Tenant, id: string, at: number, db: Kysely<Database> = this.db): Promise<void> {
    const text = iso(at);
    await scoped(db, tenant)
      .updateTable('monitors')
      .set({ last_match_at: text })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_match_at', 'is', null), eb('last_match_at', '<', text)]))
      .execute();
  }

  /** Merges the patch over the stored monitor and checks the whole again; `kind` cannot change. */
  async update(tenant: Tenant, id: string, patch: Partial<MonitorInput>): Promise<MonitorsTable> {
    const row = await this.get(tenant, id);
    if (patch.kind !== undefined && patch.kind !== row.kind) throw badRequest('kind: cannot change; create a new monitor', { field: 'kind' });
    const columns = checkMonitor({ ...inputOf(row), ...patch, kind: row.kind });
    if (patch.channel_ids) await this.checkChannels(tenant, patch.channel_ids);
    const now = iso(this.clock.now());
    // A changed query or schedule is evaluated at once, by whichever process claims it first.
    const changes: Partial<MonitorsTable> = { ...columns, updated_at: now, ...(row.kind === 'threshold' ? { next_eval_at: now } : {}) };
    await this.db.transaction().execute(async (trx) => {
      await scoped(trx, tenant).updateTable('monitors').set(changes).where('id', '=', id).execute();
      await audit.record(trx, { action: 'monitor.update', ...inTenant(tenant), target: { type: 'monitor', id }, at: Date.parse(now), details: { name: columns.name, fields: Object.keys(patch) } });
    });
    this.onChanged(tenant);
    return { ...row, ...changes };
  }

  /** Deletes the monitor with its group states and history of state changes. */
  async remove(tenant: Tenant, id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const row = await scoped(trx, tenant).selectFrom('monitors').select('name').where('id', '=', id).executeTakeFirst();
      const result = await scoped(trx, tenant).deleteFrom('monitors').where('id', '=', id).executeTakeFirst();
      if (!row || Number(result.numDeletedRows) !== 1) throw notFound(`no monitor ${id}`);
      await scoped(trx, tenant).deleteFrom('monitor_groups').where('monitor_id', '=', id).execute();
      await scoped(trx, tenant).deleteFrom('monitor_changes').where('monitor_id', '=', id).execute();
      await audit.record(trx, { action: 'monitor.delete', ...inTenant(tenant), target: { type: 'monitor', id }, at: this.clock.now(), details: { name: row.name } });
    });
    this.onChanged(tenant);
  }

  /** Channel ids must be this tenant's: another tenant's (or an unknown) id is a 400 naming it. */
  private async checkChannels(tenant: Tenant, ids: readonly string[]): Promise<void> {
    const found = new Set((await this.channels.some(tenant, ids)).map((c) => c.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length) throw badRequest(`channel_ids: no channel ${missing.join(', ')} in this project and mode`, { field: 'channel_ids' });
  }

  /** Monitors of the organisation (all projects and modes): the plan's cap is the organisation's. */
  private countOfOrg(orgId: string, db: Kysely<Database> = this.db): Promise<number> {
    return monitorsOfOrg(db, orgId);
  }

}
