import type { Tenant } from '../tenancy/tenant.js';
import { iso, type Clock } from '../shared/clock.js';
import type { EnqueuedDelivery, NotificationService } from '../notifications/notification-service.js';
import { durationMs } from './durations.js';
import { explorerUrl } from './explorer-url.js';
import { parseMatchQuery, parseThresholdQuery } from './monitor.js';
import type { MonitorsTable } from './tables.js';

/**
 * `POST /monitors/{id}/test`: a `status: "test"` notification of the monitor to each of its
 * channels, through the same outbox as real ones (so the attempts are in its history). The facts
 * are the monitor's own (its condition, its explorer link over its window, or the last hour for a
 * match monitor) without values or events.
 */
export async function sendMonitorTest(
  notifications: Pick<NotificationService, 'enqueue'>,
  clock: Clock,
  api: string,
  tenant: Tenant,
  row: MonitorsTable,
): Promise<EnqueuedDelivery[]> {
  const now = clock.now();
  const from = now - (row.kind === 'threshold' ? (durationMs(row.window!) ?? 3_600_000) : 3_600_000);
  const query = row.kind === 'threshold' ? parseThresholdQuery(row.q) : parseMatchQuery(row.q);
  return notifications.enqueue(tenant, {
    channelIds: JSON.parse(row.channel_ids) as string[],
    monitor: { id: row.id, name: row.name, kind: row.kind },
    status: 'test',
    group: {},
    value: null,
    condition: row.kind === 'threshold' ? { op: row.condition_op, value: row.condition_value } : null,
    window: { from: iso(from), to: iso(now) },
    started_at: iso(now),
    resolved_at: null,
    events_total: 0,
    events: [],
    url: explorerUrl(api, query, from, now),
  });
}
