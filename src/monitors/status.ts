import type { Tenant } from '../tenancy/tenant.js';
import type { Clock } from '../shared/clock.js';
import type { NotificationService } from '../notifications/notification-service.js';
import type { GroupStore } from './group-store.js';
import type { MonitorsTable } from './tables.js';

/**
 * A monitor's `status` as the API shows it (docs/monitors.md "Status"), read-only. One shape for
 * both kinds; the fields of the other kind are null (and `groups_firing` 0).
 */
export interface MonitorStatus {
  /**
   * Threshold: the worst of its groups' states, firing > pending > no_data > ok (`no_data`: no
   * group had a value at the last evaluation, or there was none yet). Match: `watching`. A mute
   * does not change it (`muted_until` says so).
   */
  state: 'firing' | 'pending' | 'no_data' | 'ok' | 'watching';
  groups_firing: number;
  /**
   * The last evaluation's value: over several groups, the one nearest to firing — the highest for
   * a condition `>`/`>=`, the lowest for `<`/`<=`; null without one.
   */
  last_value: number | null;
  last_evaluated_at: string | null;
  /** When the scheduler evaluates it next (in the past: due, taken at the next tick). */
  next_evaluation_at: string | null;
  /**
   * When it last matched, null before: match, the ingest time of its latest matching event (as of
   * its latest notification, at most `group_window` behind); threshold, the last evaluation at
   * which a group's value met the condition. From the monitor's row (MonitorsTable.last_match_at).
   */
  last_match_at: string | null;
  /** When it last stored a firing or resolved notification (tests left out). */
  last_notified_at: string | null;
}

/**
 * The statuses of a page of monitors: one query on the group states (threshold monitors; their
 * last values are on their rows) and one on the outbox, whatever the number of monitors, both through scoped().
 */
export class MonitorStatuses {
  constructor(
    private readonly clock: Clock,
    private readonly groups: Pick<GroupStore, 'summaries'>,
    private readonly notifications: Pick<NotificationService, 'lastNotifiedOf'>,
  ) {}

  async of(tenant: Tenant, rows: readonly MonitorsTable[]): Promise<Map<string, MonitorStatus>> {
    const thresholds = rows.filter((r) => r.kind === 'threshold').map((r) => r.id);
    const [groups, notified] = await Promise.all([this.groups.summaries(tenant, thresholds), this.notifications.lastNotifiedOf(tenant, rows.map((r) => r.id))]);
    const now = this.clock.now();
    const statuses = new Map<string, MonitorStatus>();
    for (const row of rows) {
      const last_notified_at = notified.get(row.id) ?? null;
      if (row.kind === 'match') {
        statuses.set(row.id, { state: 'watching', groups_firing: 0, last_value: null, last_evaluated_at: null, next_evaluation_at: null, last_match_at: row.last_match_at, last_notified_at });
        continue;
      }
      const g = groups.get(row.id) ?? { firing: 0, pending: 0 };
      const lastValue = row.condition_op === '<' || row.condition_op === '<=' ? row.last_low : row.last_high;
      const state = g.firing > 0 ? 'firing' : g.pending > 0 ? 'pending' : lastValue === null ? 'no_data' : 'ok';
      statuses.set(row.id, {
        state,
        groups_firing: g.firing,
        last_value: lastValue,
        last_evaluated_at: row.last_eval_at,
        next_evaluation_at: nextEvaluation(row, now),
        last_match_at: row.last_match_at,
        last_notified_at,
      });
    }
    return statuses;
  }

  async one(tenant: Tenant, row: MonitorsTable): Promise<MonitorStatus> {
    return (await this.of(tenant, [row])).get(row.id)!;
  }
}

/**
 * When the scheduler (evaluator.ts) evaluates the monitor next: it takes a monitor whose
 * `next_eval_at` has passed and whose lease is free. While a process holds the lease (it is being
 * evaluated now) the next one is when the lease ends: the lease lasts `every`, exactly the
 * interval the evaluation moves `next_eval_at` on by.
 */
export function nextEvaluation(row: Pick<MonitorsTable, 'next_eval_at' | 'lease_until'>, now: number): string | null {
  if (row.lease_until !== null && Date.parse(row.lease_until) > now && (row.next_eval_at === null || row.lease_until > row.next_eval_at)) return row.lease_until;
  return row.next_eval_at;
}
