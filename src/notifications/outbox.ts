import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { Tenant } from '../tenancy/tenant.js';
import { scoped } from '../tenancy/scoped.js';
import type { PageRequest } from '../pagination/page.js';
import { keysetBefore } from '../pagination/keyset.js';
import { newId } from '../shared/ids.js';
import type { ChannelsTable, NotificationAttemptsTable, NotificationsTable } from './tables.js';
import './tables.js';

/** A channel fails this many attempts in a row, and is disabled (DECISIONS.md §18). */
export const failuresBeforeDisabling = 20;

/** What one attempt changed: the row's next state and the channel's health. */
export interface AttemptRecord {
  attempt: Omit<NotificationAttemptsTable, 'id' | 'notification_id' | 'org_id' | 'project_id' | 'mode'>;
  row: Pick<NotificationsTable, 'state' | 'next_attempt_at' | 'last_status' | 'last_error' | 'finished_at'>;
  /** true: the channel's failure count restarts; false: it grows (and may disable the channel). */
  success: boolean;
  /** No request to the channel before this time (429, X-RateLimit-Remaining: 0). */
  channelNotBefore: string | undefined;
}

/**
 * The notification outbox in the metadata store. Rows are written before anything is sent, and
 * a worker sends one only while it holds its lease: `claim` is one conditional UPDATE, so of
 * several processes or hosts asking at once exactly one gets it, and a holder that died (kill -9)
 * lets it go when its lease runs out. The system paths (due, claim, record) are cross-tenant by
 * nature; the tenant paths go through scoped().
 */
export class Outbox {
  constructor(private readonly db: Kysely<Database>) {}

  /** `db`: the caller's transaction, when the rows must commit with its own writes. */
  async insert(rows: readonly NotificationsTable[], db: Kysely<Database> = this.db): Promise<void> {
    if (rows.length) await db.insertInto('notifications').values([...rows]).execute();
  }

  /** Ids of pending rows due at `now` that nobody holds, oldest due first. */
  async due(now: string, limit: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('notifications')
      .select('id')
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .orderBy('next_attempt_at')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /** Takes the row until `leaseUntil` if nobody holds it; the row as claimed, or undefined when another worker has it. */
  async claim(id: string, owner: string, now: string, leaseUntil: string): Promise<NotificationsTable | undefined> {
    const result = await this.db
      .updateTable('notifications')
      .set({ lease_until: leaseUntil, lease_owner: owner })
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return undefined;
    return this.db.selectFrom('notifications').selectAll().where('id', '=', id).where('lease_owner', '=', owner).executeTakeFirst();
  }

  /** The channel a claimed row goes to (system path: the row names its tenant). */
  async channelOf(row: NotificationsTable): Promise<ChannelsTable | undefined> {
    const tenant: Tenant = { orgId: row.org_id, projectId: row.project_id, mode: row.mode };
    return scoped(this.db, tenant).selectFrom('channels').selectAll().where('id', '=', row.channel_id).executeTakeFirst();
  }

  /** Gives the row back without an attempt (the channel is paused, or this process stops): due again at `nextAt`. */
  async release(id: string, owner: string, nextAt: string, now: string): Promise<void> {
    await this.db
      .updateTable('notifications')
      .set({ lease_until: null, lease_owner: null, next_attempt_at: nextAt, updated_at: now })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .execute();
  }

  /** Ends a claimed row without an attempt: its channel was deleted or disabled. */
  async abandon(row: NotificationsTable, owner: string, reason: string, now: string): Promise<void> {
    await this.db
      .updateTable('notifications')
      .set({ state: 'failed', last_error: reason, finished_at: now, updated_at: now, lease_until: null, lease_owner: null })
      .where('id', '=', row.id)
      .where('lease_owner', '=', owner)
      .execute();
  }

  /**
   * Stores an attempt and its consequences in one transaction: the attempt row, the
   * notification's next state (lease released), the channel's failure count — disabling it at
   * the 20th failure in a row (its rows still pending then fail when claimed) — and its pause.
   */
  async record(row: NotificationsTable, owner: string, outcome: AttemptRecord, now: string): Promise<{ disabled: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('notification_attempts')
        .values({ id: newId.attempt(), notification_id: row.id, org_id: row.org_id, project_id: row.project_id, mode: row.mode, ...outcome.attempt })
        .execute();
      await trx
        .updateTable('notifications')
        .set({ ...outcome.row, attempts: row.attempts + 1, lease_until: null, lease_owner: null, updated_at: now })
        .where('id', '=', row.id)
        .where('lease_owner', '=', owner)
        .execute();
      const tenant: Tenant = { orgId: row.org_id, projectId: row.project_id, mode: row.mode };
      const channels = scoped(trx, tenant);
      const pause = outcome.channelNotBefore ? { not_before: outcome.channelNotBefore } : {};
      if (outcome.success) {
        await channels.updateTable('channels').set({ consecutive_failures: 0, ...pause }).where('id', '=', row.channel_id).execute();
        return { disabled: false };
      }
      await channels
        .updateTable('channels')
        .set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1), ...pause }))
        .where('id', '=', row.channel_id)
        .execute();
      const reason = `disabled after ${failuresBeforeDisabling} failed deliveries in a row (the last: ${outcome.attempt.error ?? `HTTP ${outcome.attempt.status_code}`}) at ${now}; PATCH {"enabled": true} enables it again`;
      const disabled = await channels
        .updateTable('channels')
        .set({ enabled: 0, disabled_reason: reason, updated_at: now })
        .where('id', '=', row.channel_id)
        .where('enabled', '=', 1)
        .where('consecutive_failures', '>=', failuresBeforeDisabling)
        .executeTakeFirst();
      return { disabled: Number(disabled.numUpdatedRows) === 1 };
    });
  }

  /**
   * Forgets delivered and failed notifications (and their attempts) that finished before
   * `before`: the outbox keeps what is pending forever, the history for a while. System path.
   */
  async purgeFinished(before: string): Promise<number> {
    const old = this.db.selectFrom('notifications').select('id').where('finished_at', '<', before);
    await this.db.deleteFrom('notification_attempts').where('notification_id', 'in', old).execute();
    const result = await this.db.deleteFrom('notifications').where('finished_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** A channel's deliveries, newest first, `limit + 1` rows after the page's position. */
  async listByChannel(tenant: Tenant, channelId: string, page: PageRequest): Promise<NotificationsTable[]> {
    let query = scoped(this.db, tenant).selectFrom('notifications').selectAll().where('channel_id', '=', channelId);
    if (page.after) query = query.where(keysetBefore('created_at', 'id', page.after));
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute();
  }

  /** A monitor's notifications (its history), newest first, `limit + 1` rows after the page's position. */
  async listByMonitor(tenant: Tenant, monitorId: string, page: PageRequest): Promise<NotificationsTable[]> {
    let query = scoped(this.db, tenant).selectFrom('notifications').selectAll().where('monitor_id', '=', monitorId);
    if (page.after) query = query.where(keysetBefore('created_at', 'id', page.after));
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute();
  }

  /** When each of these monitors last stored a notification (tests left out), in one query. */
  async lastOfMonitors(tenant: Tenant, monitorIds: readonly string[]): Promise<Map<string, string>> {
    if (!monitorIds.length) return new Map();
    const rows = await scoped(this.db, tenant)
      .selectFrom('notifications')
      .select((eb) => ['monitor_id', eb.fn.max('created_at').as('last')])
      .where('monitor_id', 'in', [...monitorIds])
      .where('status', '!=', 'test')
      .groupBy('monitor_id')
      .execute();
    return new Map(rows.map((r) => [r.monitor_id, r.last]));
  }

  /** The attempts of these notifications, oldest first, in one query. */
  async attemptsOf(tenant: Tenant, ids: readonly string[]): Promise<Map<string, NotificationAttemptsTable[]>> {
    const byId = new Map<string, NotificationAttemptsTable[]>(ids.map((id) => [id, []]));
    if (!ids.length) return byId;
    const rows = await scoped(this.db, tenant)
      .selectFrom('notification_attempts')
      .selectAll()
      .where('notification_id', 'in', [...ids])
      .orderBy('attempted_at')
      .orderBy('id')
      .execute();
    for (const row of rows) byId.get(row.notification_id)?.push(row);
    return byId;
  }
}
