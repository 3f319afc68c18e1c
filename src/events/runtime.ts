import path from 'node:path';
import type { AppContext } from '../app/context.js';
import type { Logger } from '../kernel/logger.js';
import type { DatasetNameResolver, EventStore, NewEvent } from '../engine/event-store.js';
import { openEventStore } from '../engine/open-event-store.js';
import { loadSecretKey } from '../shared/secret-key.js';
import { DatasetService } from './dataset-service.js';
import { SchemaService } from './schema-service.js';
import { HotKeyService } from './hot-keys.js';
import type { Tenant } from '../tenancy/tenant.js';

/**
 * Called after an append is durable: a wake-up hint for live tail (the store stays the source of
 * truth), and the appended events for match monitors (src/monitors/matcher.ts). It runs before
 * the write is answered, so it must be synchronous and cheap; anything slow goes async.
 */
export type AppendListener = (tenant: Tenant, lastSeq: number, events: readonly NewEvent[]) => void;

/** What ingest, and query, live tail and log entries beside it, work with. */
export interface EventsRuntime {
  store: EventStore;
  /**
   * True when this process owns the event store (the write-ahead log and the engine): it runs
   * retention and the admin socket. False when the store is an events node's (OPS_EVENTS_URL),
   * and in workers past the first on ClickHouse (each owns its log; worker 0 runs those).
   */
  owner: boolean;
  datasets: DatasetService;
  schemas: SchemaService;
  /** Each dataset's hot payload keys. */
  hotKeys: HotKeyService;
  /** Calls `listener` after each durable append in this process (live tail wakes its sessions; polling is the fallback). */
  onAppended(listener: AppendListener): void;
  /** The write path's report of a durable append: tells every listener; one that throws is given to `onError`. */
  appended(tenant: Tenant, lastSeq: number, events: readonly NewEvent[], onError: (error: unknown) => void): void;
}

/**
 * Where the event store keeps its files. On ClickHouse each worker of `serve --workers` is an
 * ingester with a log of its own (worker 0 keeps the one a single process uses).
 */
export const eventsDir = (ctx: AppContext) => {
  const { dataDir, eventsClickHouseUrl, workerIndex } = ctx.config;
  return path.join(dataDir, eventsClickHouseUrl && workerIndex ? `events-${workerIndex}` : 'events');
};

/** Settings of the event store, for the call that opens it (tests shrink the memory limit). */
export interface EventsRuntimeOptions {
  memoryLimit?: string;
  threads?: number;
  /** How the store names datasets in the events it returns (an events node leaves ids for its callers). */
  names?: DatasetNameResolver;
}

/**
 * Opens the event store, with the services over it; the caller closes `store`. Without
 * OPS_EVENTS_URL the store is this process's, on the context's data directory: DuckDB allows one
 * process, so the server holds it and opsctl opens it only when no server answers on the admin
 * socket (admin-socket.ts). With it, the store is an events node's, shared by every API process.
 */
export async function openEventsRuntime(ctx: AppContext, log: Logger, options: EventsRuntimeOptions = {}): Promise<EventsRuntime> {
  const datasets = new DatasetService(ctx.metadata, ctx.plans, ctx.clock);
  const names: DatasetNameResolver = (tenant, ids) => datasets.namesOf(tenant, ids);
  // On ClickHouse with --workers, worker 0 runs retention and the admin socket for the machine.
  const owner = !ctx.config.eventsUrl && !ctx.config.workerIndex;
  // Loaded only when used: its HTTP client (undici) costs a start that does not need it.
  const remote = ctx.config.eventsUrl ? (await import('../engine/node/remote-event-store.js')).RemoteEventStore : undefined;
  const store = remote
    ? new remote({
        url: ctx.config.eventsUrl!,
        secret: loadSecretKey(ctx.config.secretKey, ctx.config.dataDir),
        names,
        now: () => ctx.clock.now(),
        changeBoard: ctx.config.eventsChangeBoard,
      })
    : await openEventStore({
        dir: eventsDir(ctx),
        clickhouseUrl: ctx.config.eventsClickHouseUrl,
        names,
        now: () => ctx.clock.now(),
        log: (level, message, error) => log[level]({ err: error }, `events: ${message}`),
        readWaitMs: ctx.config.events.readWaitMs,
        segmentBytes: ctx.config.events.segmentBytes,
        maxEventsPerLoad: ctx.config.events.loadBatchEvents,
        loadIntervalMs: ctx.config.events.loadIntervalMs,
        hotKeysIntervalMs: ctx.config.hotKeysIntervalMs,
        threads: ctx.config.events.threads,
        ...options,
      });
  const listeners = new Set<AppendListener>();
  return {
    store,
    owner,
    datasets,
    schemas: new SchemaService(store, ctx.clock, ctx.config.schemaCacheTtlMs),
    hotKeys: new HotKeyService(ctx.metadata.db, store, ctx.config.hotKeysAuto),
    onAppended: (listener) => void listeners.add(listener),
    appended: (tenant, lastSeq, events, onError) => {
      for (const listener of listeners) {
        try {
          listener(tenant, lastSeq, events);
        } catch (error) {
          onError(error);
        }
      }
    },
  };
}
