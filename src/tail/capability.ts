import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import type { Logger } from '../kernel/logger.js';
import type { EventsRuntime } from '../events/runtime.js';
import { loadSecretKey } from '../shared/secret-key.js';
import type { Tenant } from '../tenancy/tenant.js';
import { defaultHubLimits, TailHub } from './hub.js';
import { TailRelay } from './relay.js';
import { registerTailRoute } from './routes/tail.js';

/**
 * Events per read of a store that is not this process's memory: ClickHouse, where a feed reads
 * only when its records do not serve (a gap, the poll, a session catching up), and an events
 * node, where every wake-up is a read over HTTP. Such a read must outrun the ingest it is
 * behind, and each costs a round trip whatever its size.
 */
export const remoteReadLimit = 2_000;

export interface TailCapability extends Capability {
  hub: TailHub;
  /** Reads the tenant's new events (up to `lastSeq`) now rather than at the next poll. */
  wake(tenant: Tenant, lastSeq?: number): void;
}

/**
 * Live tail: POST /query/tail over Server-Sent Events, fed from the events capability's store
 * and, through the relay, from this and the other API processes' ingest (relay.ts).
 */
export function openTail({ ctx, events, log }: { ctx: AppContext; events: EventsRuntime; log: Logger }): TailCapability {
  const hub = new TailHub({
    ...defaultHubLimits,
    readLimit: ctx.config.eventsClickHouseUrl || ctx.config.eventsUrl ? remoteReadLimit : defaultHubLimits.readLimit,
    store: events.store,
    activeDatasets: async (tenant) => new Map((await events.datasets.listActive(tenant)).map((d) => [d.id, d.name])),
    pollMs: ctx.config.tailPollMs,
    heartbeatMs: ctx.config.tailHeartbeatMs,
    idleTimeoutMs: ctx.config.tailIdleTimeoutMs,
    log: (message, error) => log.warn({ err: error }, `tail: ${message}`),
    // Called once sessions open, by which time the relay below exists.
    onFeedOpened: (tenant) => relay.announce(tenant),
  });
  const relay = new TailRelay({
    bus: ctx.bus,
    hub,
    events,
    secret: loadSecretKey(ctx.config.secretKey, ctx.config.dataDir),
    log: (message, error) => log.warn({ err: error }, `tail: ${message}`),
  });
  // At once, not at start(): appends made before the listeners bind (none today) would be missed.
  relay.start();
  return {
    name: 'tail',
    hub,
    wake: (tenant, lastSeq) => hub.wake(tenant, lastSeq),
    routes: (v1) => registerTailRoute(v1, ctx, events, hub),
    // Nothing runs in the background; open streams end here, or the listeners could not close.
    stop: async () => {
      relay.stop();
      await hub.close();
    },
  };
}
