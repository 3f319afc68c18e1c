import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import type { EventsRuntime } from '../events/runtime.js';
import type { Api } from '../http/types.js';
import { Inserter } from './core/insert.js';
import { registerIngestRoute } from './native/route.js';
import { registerOtlpLogsRoute } from './otlp/routes/logs.js';
import { registerLokiPushRoute } from './loki/push-route.js';
import { registerElasticRoutes } from './elastic/routes.js';

/**
 * Every ingest protocol, side by side over one insert path (core/insert.ts; docs/ingest.md):
 * native NDJSON/JSON (POST /v1/datasets/{name}/ingest, DECISIONS §9), OTLP/HTTP logs
 * (POST /v1/otlp/v1/logs, §15), and the shippers people already run (§21; docs/shippers.md):
 * Loki's push API under /v1/loki and Elasticsearch's bulk API under /v1/elastic. The datasets
 * they write to, and the event store, are the events capability's.
 */
export function openIngest({ ctx, events }: { ctx: AppContext; events: EventsRuntime }): Capability {
  const inserter = new Inserter(ctx, events);
  return {
    name: 'ingest',
    routes: async (v1: Api) => {
      await registerIngestRoute(v1, inserter);
      await registerOtlpLogsRoute(v1, inserter);
      await registerLokiPushRoute(v1, inserter);
      await registerElasticRoutes(v1, inserter);
    },
  };
}
