import type { Capability } from '../app/capabilities.js';
import { registerGated } from './gate.js';
import { registerCaseRoutes } from '../cases/routes.js';
import { registerAppRoutes } from '../apps/routes.js';
import { registerLogRoutes } from '../logs/routes.js';

/**
 * The announced resources (DECISIONS.md §13): log entries, cases, apps. Their routes always
 * exist (and are documented); each answers 501 unless OPS_FEATURES switches its feature on.
 * Cases use the media File schema, so this capability is registered after media.
 */
export const announcedCapability: Capability = {
  name: 'announced',
  routes: async (v1, ctx) => {
    await registerGated(v1, ctx, 'logs', (scope) => registerLogRoutes(scope, ctx));
    await registerGated(v1, ctx, 'cases', (scope) => registerCaseRoutes(scope, ctx));
    await registerGated(v1, ctx, 'apps', (scope) => registerAppRoutes(scope, ctx));
  },
};
