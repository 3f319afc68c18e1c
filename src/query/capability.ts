import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import type { EventsRuntime } from '../events/runtime.js';
import { QueryService } from './query-service.js';
import { registerQueryRoutes } from './routes.js';

/** POST /v1/query: SOQL over the events capability's store and datasets. */
export function openQuery({ ctx, events }: { ctx: AppContext; events: EventsRuntime }): Capability {
  const service = new QueryService({
    store: events.store,
    datasets: events.datasets,
    cursors: ctx.cursors,
    now: () => ctx.clock.now(),
    // The keys queries name count toward the datasets' hot keys (OPS_HOT_KEYS_AUTO).
    payloadKeysUsed: (datasetIds, paths) => events.hotKeys.use.note(datasetIds, paths),
  });
  return { name: 'query', routes: (v1) => registerQueryRoutes(v1, ctx, service) };
}
