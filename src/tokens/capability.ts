import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import { registerTokenRoutes } from './routes.js';

/**
 * API tokens of a project and mode (DECISIONS.md §14): create (shown once), list, revoke. Their
 * lookup on every request is the Fastify shell's auth plugin (app/build-api.ts), not this.
 */
export function openTokens({ ctx }: { ctx: AppContext }): Capability {
  return { name: 'tokens', routes: (v1) => registerTokenRoutes(v1, ctx) };
}
