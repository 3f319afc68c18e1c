import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import type { EventsRuntime } from '../events/runtime.js';
import { registerGated } from '../features/gate.js';
import { registerLogRoutes } from './routes.js';

/**
 * Log entries, the events of the dataset `logs` (DECISIONS.md §13), an announced resource: its
 * routes always exist (and are documented) and answer 501 unless OPS_FEATURES switches `logs` on.
 */
export function openLogs({ ctx, events }: { ctx: AppContext; events: EventsRuntime }): Capability {
  return { name: 'logs', routes: (v1) => registerGated(v1, ctx, 'logs', (scope) => registerLogRoutes(scope, ctx, events)) };
}
