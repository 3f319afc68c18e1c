import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import { registerUsageRoutes } from './routes.js';

/** The organisation's usage against its plan's quotas, and its plan (`/usage`, `/billing`). */
export function openUsage({ ctx }: { ctx: AppContext }): Capability {
  return { name: 'usage', routes: (v1) => registerUsageRoutes(v1, ctx) };
}
