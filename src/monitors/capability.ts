import type { AppContext } from '../app/context.js';
import type { Capability } from '../app/capability.js';
import type { Logger } from '../app/logger.js';
import type { PublicUrls } from '../app/public-urls.js';
import type { EventsRuntime } from '../events/runtime.js';
import type { NotificationsCapability } from '../notifications/capability.js';
import { QueryService } from '../query/query-service.js';
import { MonitorService } from './monitor-service.js';
import { GroupStore } from './group-store.js';
import { Evaluator } from './evaluator.js';
import { MonitorHistory } from './history.js';
import { MonitorSchema } from './routes/schemas.js';
import { registerMonitorRoutes } from './routes/monitors.js';
import { registerHistoryRoutes } from './routes/history.js';
import { registerPreviewRoutes } from './routes/preview.js';

export interface MonitorsCapability extends Capability {
  monitors: MonitorService;
  /** Evaluates the threshold monitors due now (the scheduler's tick; tests call it after moving the clock). */
  evaluateDue(): Promise<number>;
}

export interface MonitorsOptions {
  /** How often the scheduler looks for due monitors (default 5 s). */
  tickMs?: number;
}

/** Monitors (DECISIONS.md §18, docs/monitors.md): CRUD per project and mode, the threshold scheduler. */
export function openMonitors(
  ctx: AppContext,
  deps: { events: EventsRuntime; notifications: NotificationsCapability; urls: PublicUrls; log: Logger },
  options: MonitorsOptions = {},
): MonitorsCapability {
  const { db } = ctx.metadata;
  const monitors = new MonitorService(db, ctx.clock, ctx.plans, deps.notifications.channels);
  // Its own query service: evaluations go the query path (tenancy, active datasets, memory bound) but are never charged as queries.
  const queries = new QueryService({ store: deps.events.store, datasets: deps.events.datasets, cursors: ctx.cursors, now: () => ctx.clock.now() });
  const notifications = deps.notifications.notifications;
  const evaluator = new Evaluator(db, ctx.clock, queries, notifications, new GroupStore(db), deps.urls, deps.log, options.tickMs ?? 5_000);
  const history = new MonitorHistory(db, monitors, notifications);
  return {
    name: 'monitors',
    monitors,
    evaluateDue: () => evaluator.evaluateDue(),
    routes: (v1) => {
      v1.addSchema(MonitorSchema);
      registerMonitorRoutes(v1, ctx, monitors);
      registerHistoryRoutes(v1, ctx, history);
      registerPreviewRoutes(v1, ctx, queries);
    },
    start: () => evaluator.start(),
    stop: () => evaluator.stop(),
  };
}
