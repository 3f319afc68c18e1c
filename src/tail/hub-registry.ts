import type { AppContext } from '../app/context.js';
import { eventsRuntime } from '../datasets/runtime.js';
import { defaultHubLimits, TailHub } from './hub.js';

const hubs = new WeakMap<AppContext, Promise<TailHub>>();

/**
 * The process's live-tail hub, built once per context on the events runtime. Ingest in this
 * process wakes it through the runtime's append listeners.
 */
export function tailHub(ctx: AppContext): Promise<TailHub> {
  let hub = hubs.get(ctx);
  if (!hub) {
    hub = eventsRuntime(ctx).then((runtime) => {
      const created = new TailHub({
        ...defaultHubLimits,
        store: runtime.store,
        activeDatasets: async (tenant) => new Set((await runtime.datasets.listActive(tenant)).map((d) => d.name)),
        pollMs: ctx.config.tailPollMs,
        heartbeatMs: ctx.config.tailHeartbeatMs,
        idleTimeoutMs: ctx.config.tailIdleTimeoutMs,
        log: (message, error) => console.error(`tail: ${message}: ${(error as Error)?.message ?? String(error)}`),
      });
      runtime.appendListeners.add((tenant) => created.wake(tenant));
      return created;
    });
    hubs.set(ctx, hub);
  }
  return hub;
}

/** Shutdown: ends the open streams (only when a hub was ever built). */
export async function closeTailHub(ctx: AppContext): Promise<void> {
  const hub = hubs.get(ctx);
  if (hub) await (await hub).close();
}
