/** Metadata table `monitors` (migration 0011-monitors): a tenant's monitors and their schedule. */
export interface MonitorsTable {
  /** mon_<ULID> */
  id: string;
  org_id: string;
  project_id: string;
  mode: 'live' | 'test';
  name: string;
  kind: 'threshold' | 'match';
  q: string;
  /** JSON array of channel ids. */
  channel_ids: string;
  muted_until: string | null;
  notify_on_resolve: number;
  /** Durations as written back to clients (`5m`); null where the kind has none. */
  window: string | null;
  every: string | null;
  /** `>`, `>=`, `<`, `<=`, `==` (threshold). */
  condition_op: string | null;
  condition_value: number | null;
  for: string | null;
  no_data: 'ok' | 'alerting' | null;
  repeat: string | null;
  group_window: string | null;
  /** Threshold: when the next evaluation is due (evaluator.ts). */
  next_eval_at: string | null;
  /** Held by one process's scheduler until this time (the lease, as the outbox's). */
  lease_until: string | null;
  lease_owner: string | null;
  /** Threshold: when its last evaluation was stored (migration 0013; null before the first). */
  last_eval_at: string | null;
  /**
   * Threshold: the highest and the lowest value over the groups at its last evaluation (null when
   * no group had one), stored with last_eval_at (migration 0017): the status's last_value.
   */
  last_high: number | null;
  last_low: number | null;
  /**
   * When it last matched (migration 0021; null before the first): match, the ingest time of its
   * latest matching event, written with the notification that carries it (matcher.ts); threshold,
   * the last evaluation at which a group's value met the condition, written by that evaluation's
   * commit (evaluator.ts). Only moves forward.
   */
  last_match_at: string | null;
  created_at: string;
  updated_at: string;
}

export type GroupState = 'ok' | 'pending' | 'firing';

/** Metadata table `monitor_groups`: the state of each group (`by` values) of a monitor. */
export interface MonitorGroupsTable {
  monitor_id: string;
  /** JSON of the group (`{}` without `by`), keys in the order of the `by` items. */
  group_key: string;
  org_id: string;
  project_id: string;
  mode: 'live' | 'test';
  state: GroupState;
  /** When the group entered its state (pending: since when the condition holds; firing: started_at). */
  since: string;
  /**
   * The group's value when its row was last written: a row is written when the group appears,
   * changes state (or `since`, `notified_at`) or is forgotten, not at every evaluation (the
   * monitor's row holds the last evaluation's values: MonitorsTable.last_high, last_low).
   */
  last_value: number | null;
  /** When a firing notification last went out (repeat counts from here). */
  notified_at: string | null;
  updated_at: string;
}

/** Metadata table `monitor_changes`: the history of state changes (GET /monitors/{id}/history). */
export interface MonitorChangesTable {
  /** mch_<ULID> */
  id: string;
  monitor_id: string;
  org_id: string;
  project_id: string;
  mode: 'live' | 'test';
  group_key: string;
  from_state: GroupState;
  to_state: GroupState;
  value: number | null;
  created_at: string;
}

declare module '../stores/metadata/schema.js' {
  interface Database {
    monitors: MonitorsTable;
    monitor_groups: MonitorGroupsTable;
    monitor_changes: MonitorChangesTable;
  }
}
