import type { AppContext } from '../app/context.js';
import type { Capability } from '../app/capability.js';
import type { Logger } from '../app/logger.js';
import type { EventsRuntime } from '../events/runtime.js';
import type { Tenant } from '../tenancy/tenant.js';
import { defaultHubLimits, TailHub } from './hub.js';
import { registerTailRoute } from './routes/tail.js';

export interface TailCapability extends Capability {
  hub: TailHub;
  /** Reads the tenant's new events (up to `lastSeq`) now rather than at the next poll: each ingest's wake-up, from any process. */
  wake(tenant: Tenant, lastSeq?: number): void;
}

/** Live tail: POST /v1/query/tail over Server-Sent Events, fed from the events capability's store. */
export function openTail(ctx: AppContext, events: EventsRuntime, log: Logger): TailCapability {
  const hub = new TailHub({
    ...defaultHubLimits,
    store: events.store,
    activeDatasets: async (tenant) => new Set((await events.datasets.listActive(tenant)).map((d) => d.name)),
    pollMs: ctx.config.tailPollMs,
    heartbeatMs: ctx.config.tailHeartbeatMs,
    idleTimeoutMs: ctx.config.tailIdleTimeoutMs,
    log: (message, error) => log.warn({ err: error }, `tail: ${message}`),
  });
  return {
    name: 'tail',
    hub,
    wake: (tenant, lastSeq) => hub.wake(tenant, lastSeq),
    routes: (v1) => registerTailRoute(v1, ctx, events, hub),
    // Nothing runs in the background; open streams end here, or the listeners could not close.
    stop: () => hub.close(),
  };
}
