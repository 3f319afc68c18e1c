import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { Tenant } from '../tenancy/tenant.js';
import type { PageRequest } from '../pagination/page.js';
import { keysetBefore } from '../pagination/keyset.js';
import { scoped } from '../tenancy/scoped.js';
import type { DeliveryView, NotificationService } from '../notifications/notification-service.js';
import type { MonitorService } from './monitor-service.js';
import type { GroupState } from './tables.js';

export type HistoryItem =
  | { type: 'state_change'; id: string; group: Record<string, unknown>; from: GroupState; to: GroupState; value: number | null; created_at: string }
  | { type: 'notification'; id: string; created_at: string; delivery: DeliveryView };

/**
 * A monitor's history: its state changes (monitor_changes) and its notifications (the outbox,
 * through notifications.deliveriesOfMonitor) merged newest first. Both are keyed (created_at,
 * id) with ULID ids, so one cursor position pages both.
 */
export class MonitorHistory {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly monitors: MonitorService,
    private readonly notifications: NotificationService,
  ) {}

  async page(tenant: Tenant, monitorId: string, page: PageRequest): Promise<HistoryItem[]> {
    await this.monitors.get(tenant, monitorId);
    let changes = scoped(this.db, tenant).selectFrom('monitor_changes').selectAll().where('monitor_id', '=', monitorId);
    if (page.after) changes = changes.where(keysetBefore('created_at', 'id', page.after));
    const [states, deliveries] = await Promise.all([
      changes.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute(),
      this.notifications.deliveriesOfMonitor(tenant, monitorId, page),
    ]);
    const items: HistoryItem[] = [
      ...states.map((c) => ({ type: 'state_change' as const, id: c.id, group: JSON.parse(c.group_key) as Record<string, unknown>, from: c.from_state, to: c.to_state, value: c.value, created_at: c.created_at })),
      ...deliveries.map((d) => ({ type: 'notification' as const, id: d.id, created_at: d.created_at, delivery: d })),
    ];
    items.sort((a, b) => (a.created_at !== b.created_at ? (a.created_at < b.created_at ? 1 : -1) : a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return items.slice(0, page.limit + 1);
  }
}
