import type { Capability } from '../app/capabilities.js';
import { registerDatasetRoutes } from './routes.js';
import { eventsRuntime } from './runtime.js';
import { runRetention } from './retention.js';
import { retentionFromCli, startAdminSocket } from './admin-socket.js';

/** The events capability: datasets, ingest, schema, retention (one entry in `capabilities`). */
export const eventsCapability: Capability = {
  name: 'events',
  routes: registerDatasetRoutes,
  readiness: async (ctx) => (await eventsRuntime(ctx)).store.ping(),
  background: (ctx) => {
    const log = (message: string, error?: unknown) => console.error(`events: ${message}${error ? `: ${(error as Error).message}` : ''}`);
    let running: Promise<unknown> = Promise.resolve();
    const timer = setInterval(() => {
      running = eventsRuntime(ctx)
        .then((runtime) => runRetention(ctx, runtime))
        .catch((error: unknown) => log('retention failed', error));
    }, ctx.config.purgeIntervalMs);
    timer.unref();
    const socket = startAdminSocket(ctx, log);
    return async () => {
      clearInterval(timer);
      await running;
      await (await socket)();
    };
  },
  purge: async (ctx) => ({ ...(ctx.role === 'server' ? await runRetention(ctx, await eventsRuntime(ctx)) : await retentionFromCli(ctx)) }),
};
