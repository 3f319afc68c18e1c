import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import type { Logger } from '../kernel/logger.js';
import { registerDatasetRoutes } from './dataset-routes.js';
import { openEventsRuntime, type EventsRuntime, type EventsRuntimeOptions } from './runtime.js';
import { runRetention, type RetentionResult } from './retention.js';
import { startAdminSocket } from './admin-socket.js';
import { HotKeyChooser } from './hot-key-chooser.js';

/** The events capability, and the runtime query, live tail and log entries are opened on. */
export interface EventsCapability extends Capability, EventsRuntime {
  purge(): Promise<RetentionResult>;
}

/**
 * Datasets, schema discovery and retention (ingest, onto these datasets, is src/ingest's).
 * Opens the event store, which DuckDB lets one process hold: the server's, so opsctl never opens
 * this (it asks the admin socket started here, admin-socket.ts). Retention runs every OPS_PURGE_INTERVAL_MS; hot keys are looked after
 * every OPS_HOT_KEYS_INTERVAL_MS (hot-key-chooser.ts).
 */
export async function openEvents({ ctx, log }: { ctx: AppContext; log: Logger }, options: EventsRuntimeOptions = {}): Promise<EventsCapability> {
  const runtime = await openEventsRuntime(ctx, log, options);
  const retention = () => runRetention(ctx, runtime);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let adminSocket: Promise<() => Promise<void>> | undefined;
  // Hot keys in the background, in every process that loads events (its store owns a log).
  const chooser = runtime.store.takeActiveDatasets
    ? new HotKeyChooser({ db: ctx.metadata.db, store: runtime.store, hotKeys: runtime.hotKeys, schemas: runtime.schemas, clock: ctx.clock, intervalMs: ctx.config.hotKeysIntervalMs, log })
    : undefined;
  return {
    ...runtime,
    name: 'events',
    routes: (v1) => registerDatasetRoutes(v1, ctx, runtime),
    readiness: { events: () => runtime.store.ping() },
    start: () => {
      chooser?.start();
      // Retention runs where the events live: an API process on an events node leaves it to the node.
      if (!runtime.owner) return;
      timer = setInterval(() => {
        running = retention().catch((error: unknown) => log.error({ err: error }, 'events: retention failed; it runs again at the next interval'));
      }, ctx.config.purgeIntervalMs);
      timer.unref();
      adminSocket = startAdminSocket(ctx, runtime, log);
    },
    stop: async () => {
      await chooser?.stop();
      clearInterval(timer);
      await running;
      await (await adminSocket)?.();
    },
    purge: retention,
    close: () => runtime.store.close(),
  };
}
