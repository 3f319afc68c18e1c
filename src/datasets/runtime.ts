import path from 'node:path';
import type { AppContext } from '../app/context.js';
import type { EventStore } from '../stores/events/event-store.js';
import { openEventStore } from '../stores/events/open-event-store.js';
import { DatasetService } from './dataset-service.js';
import { SchemaService } from './schema-service.js';
import type { Tenant } from '../tenancy/tenant.js';

/** Called after an append is durable: a wake-up hint for live tail (the store stays the source of truth). */
export type AppendListener = (tenant: Tenant, lastSeq: number) => void;

/** What the events capability (and SOQL / live tail beside it) work with. */
export interface EventsRuntime {
  store: EventStore;
  datasets: DatasetService;
  schemas: SchemaService;
  /** Told after each durable ingest append (live tail wakes its sessions; polling is the fallback). */
  appendListeners: Set<AppendListener>;
}

const runtimes = new WeakMap<AppContext, Promise<EventsRuntime>>();

/** Where the DuckDB event store lives. */
export const eventsDir = (ctx: AppContext) => path.join(ctx.config.dataDir, 'events');

/** DuckDB settings of the store, for the call that opens it (tests shrink the memory limit). */
export interface EventsRuntimeOptions {
  memoryLimit?: string;
  threads?: number;
}

/** Opens an event store on the context's data directory (the caller closes it). */
export async function openRuntime(ctx: AppContext, options: EventsRuntimeOptions = {}): Promise<EventsRuntime> {
  const datasets = new DatasetService(ctx.metadata.db, ctx.plans, ctx.clock);
  const store = await openEventStore({
    dir: eventsDir(ctx),
    names: (tenant, ids) => datasets.namesOf(tenant, ids),
    now: () => ctx.clock.now(),
    ...options,
  });
  return { store, datasets, schemas: new SchemaService(store, ctx.clock, ctx.config.schemaCacheTtlMs), appendListeners: new Set() };
}

/**
 * The server's events runtime, opened once per context (with `options`, given only to the call
 * that opens it). DuckDB allows one writing process, so only the server holds it; it is closed
 * with the context, after the listeners stopped.
 */
export function eventsRuntime(ctx: AppContext, options?: EventsRuntimeOptions): Promise<EventsRuntime> {
  let runtime = runtimes.get(ctx);
  if (runtime && options) throw new Error('the events runtime is open already: pass its options on the first call');
  if (!runtime) {
    if (ctx.role !== 'server') throw new Error('the event store is held by the server; opsctl reaches it through the admin socket');
    runtime = openRuntime(ctx, options).then((opened) => {
      const closeContext = ctx.close;
      ctx.close = async () => {
        await opened.store.close();
        await closeContext();
      };
      return opened;
    });
    runtimes.set(ctx, runtime);
  }
  return runtime;
}
