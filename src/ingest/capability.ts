import type { AppContext } from '../app/context.js';
import type { Capability } from '../app/capability.js';
import type { EventsRuntime } from '../events/runtime.js';
import type { Api } from '../http/types.js';
import { registerLokiPushRoute } from './loki/push-route.js';
import { registerElasticRoutes } from './elastic/routes.js';

/**
 * Ingest from the shippers people already run (DECISIONS §21; docs/shippers.md): Loki's push
 * API under /v1/loki and Elasticsearch's bulk API under /v1/elastic, onto the events
 * capability's write path (store-shipped.ts).
 */
export function openShippers(ctx: AppContext, events: EventsRuntime): Capability {
  return {
    name: 'shippers',
    routes: async (v1: Api) => {
      await registerLokiPushRoute(v1, ctx, events);
      await registerElasticRoutes(v1, ctx, events);
    },
  };
}
