import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import type { PublicUrls } from '../kernel/public-urls.js';
import type { EventsRuntime } from '../events/runtime.js';
import { registerGated } from './gate.js';
import { registerCaseRoutes } from '../cases/routes.js';
import { registerAppRoutes } from '../apps/routes.js';
import { registerLogRoutes } from '../logs/routes.js';

/**
 * The announced resources (DECISIONS.md §13): log entries (events of the dataset `logs`),
 * cases (with media files attached), apps. Their routes always exist (and are documented);
 * each answers 501 unless OPS_FEATURES switches its feature on. Cases use the media File
 * schema, so this capability is opened after media.
 */
export function openAnnounced(ctx: AppContext, deps: { events: EventsRuntime; urls: PublicUrls }): Capability {
  return {
    name: 'announced',
    routes: async (v1) => {
      await registerGated(v1, ctx, 'logs', (scope) => registerLogRoutes(scope, ctx, deps.events));
      await registerGated(v1, ctx, 'cases', (scope) => registerCaseRoutes(scope, ctx, deps.urls));
      await registerGated(v1, ctx, 'apps', (scope) => registerAppRoutes(scope, ctx));
    },
  };
}
