import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import { registerGated } from '../features/gate.js';
import { registerAppRoutes } from './routes.js';

/**
 * Apps (DECISIONS.md §13), an announced resource: its routes always exist (and are documented)
 * and answer 501 unless OPS_FEATURES switches `apps` on.
 */
export function openApps({ ctx }: { ctx: AppContext }): Capability {
  return { name: 'apps', routes: (v1) => registerGated(v1, ctx, 'apps', (scope) => registerAppRoutes(scope, ctx)) };
}
