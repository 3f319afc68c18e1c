import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import type { Logger } from '../kernel/logger.js';
import type { PublicUrls } from '../kernel/public-urls.js';
import type { EventsRuntime } from '../events/runtime.js';
import type { NotificationsCapability } from '../notifications/capability.js';
import { QueryService } from '../query/query-service.js';
import { MonitorService } from './monitor-service.js';
import { GroupStore } from './group-store.js';
import { Evaluator } from './evaluator.js';
import { WindowCounts } from './window-counts.js';
import { MatchEvaluator } from './matcher.js';
import { MonitorHistory } from './history.js';
import { MonitorStatuses } from './status.js';
import { MonitorSchema } from './routes/schemas.js';
import { registerMonitorRoutes } from './routes/monitors.js';
import { registerHistoryRoutes } from './routes/history.js';
import { registerPreviewRoutes } from './routes/preview.js';
import { tenantOnly } from '../tenancy/tenant.js';

export interface MonitorsCapability extends Capability {
  monitors: MonitorService;
  /** Evaluates the threshold monitors due now (the scheduler's tick; tests call it after moving the clock). */
  evaluateDue(): Promise<number>;
  /** Long windows' counts kept between evaluations (its `reads` tell whole from counted; tests, bench). */
  windowCounts: WindowCounts;
}

export interface MonitorsOptions {
  /** How often the scheduler looks for due monitors (default 5 s). */
  tickMs?: number;
}

/** Monitors (DECISIONS.md §18, docs/monitors.md): CRUD per project and mode, the threshold scheduler, match monitors on the write path. */
export function openMonitors(
  { ctx, ...deps }: { ctx: AppContext; events: EventsRuntime; notifications: NotificationsCapability; urls: PublicUrls; log: Logger },
  options: MonitorsOptions = {},
): MonitorsCapability {
  const { db } = ctx.metadata;
  const monitors = new MonitorService(db, ctx.clock, ctx.plans, deps.notifications.channels);
  // Its own query service: evaluations go the query path (tenancy, active datasets, memory bound) but are never charged as queries,
  // and run in the engine's monitors lane (one statement at a time, after the API's reads: duckdb/read-lane.ts).
  const serviceOf = (lane: 'api' | 'monitors') => new QueryService({ store: deps.events.store, datasets: deps.events.datasets, cursors: ctx.cursors, now: () => ctx.clock.now(), lane });
  const queries = serviceOf('monitors');
  const notifications = deps.notifications.notifications;
  const groups = new GroupStore(db);
  const windowCounts = new WindowCounts({ queries, store: deps.events.store, retentionDays: (tenant) => deps.events.datasets.shortestActiveRetentionDays(tenant) });
  const evaluator = new Evaluator(db, ctx.clock, queries, notifications, groups, deps.urls, deps.log, options.tickMs ?? 5_000, ctx.config.monitorConcurrency, ctx.config.monitorWindowCounts ? windowCounts : undefined);
  const statuses = new MonitorStatuses(ctx.clock, groups, notifications);
  const history = new MonitorHistory(db, monitors, notifications);
  // Match monitors: every append of this process is matched in memory (matcher.ts).
  const matcher = new MatchEvaluator({
    clock: ctx.clock,
    notifications,
    db,
    recordMatch: (tenant, id, at, trx) => monitors.recordMatch(tenant, id, at, trx),
    load: (tenant) => monitors.matchMonitors(tenant),
    datasets: (tenant) => deps.events.datasets.listActive(tenant),
    apiUrl: () => deps.urls.api,
    log: deps.log,
  });
  // A change reaches this process's matcher inside publish, and the other processes' through
  // NATS at once rather than after their cache's 5 s (a lost message costs only that wait).
  monitors.onChanged = (tenant) => ctx.bus.publish('monitors.changed', { tenant: tenantOnly(tenant) });
  ctx.bus.subscribe('monitors.changed', ({ tenant }) => matcher.forget(tenant));
  deps.events.onAppended((tenant, _lastSeq, events) => matcher.matchAppended(tenant, events));
  return {
    name: 'monitors',
    monitors,
    evaluateDue: () => evaluator.evaluateDue(),
    windowCounts,
    routes: (v1) => {
      v1.addSchema(MonitorSchema);
      registerMonitorRoutes(v1, ctx, monitors, statuses, { notifications, urls: deps.urls });
      registerHistoryRoutes(v1, ctx, history);
      // A preview is a request of the API's, answered in its lane.
      registerPreviewRoutes(v1, ctx, serviceOf('api'));
    },
    start: () => evaluator.start(),
    stop: async () => {
      await evaluator.stop();
      await matcher.stop();
    },
  };
}
