import type { AppContext } from '../app/context.js';
import type { Capability } from '../app/capability.js';
import type { NotificationsCapability } from '../notifications/capability.js';
import { MonitorService } from './monitor-service.js';
import { MonitorSchema } from './routes/schemas.js';
import { registerMonitorRoutes } from './routes/monitors.js';

export interface MonitorsCapability extends Capability {
  monitors: MonitorService;
}

/** Monitors (DECISIONS.md §18, docs/monitors.md): CRUD per project and mode. */
export function openMonitors(ctx: AppContext, deps: { notifications: NotificationsCapability }): MonitorsCapability {
  const monitors = new MonitorService(ctx.metadata.db, ctx.clock, ctx.plans, deps.notifications.channels);
  return {
    name: 'monitors',
    monitors,
    routes: (v1) => {
      v1.addSchema(MonitorSchema);
      registerMonitorRoutes(v1, ctx, monitors);
    },
  };
}
