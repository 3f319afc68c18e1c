import type { DatasetNameResolver, EventStore } from './event-store.js';

export interface OpenEventStoreOptions {
  /** Directory of the engine's files (OPS_DATA_DIR/events). */
  dir: string;
  /** clickhouse://…: the events go to ClickHouse (the write-ahead log stays in `dir`). */
  clickhouseUrl?: string;
  names: DatasetNameResolver;
  now: () => number;
  /** DuckDB memory_limit (tests shrink it). */
  memoryLimit?: string;
  threads?: number;
  readWaitMs?: number;
  segmentBytes?: number;
  maxEventsPerLoad?: number;
  /** OPS_EVENTS_LOAD_INTERVAL_MS: a load starts at most this often unless a read waits for it. */
  loadIntervalMs?: number;
  /** OPS_HOT_KEYS_INTERVAL_MS: how soon other ingesters take a dataset's new hot keys (ClickHouse). */
  hotKeysIntervalMs?: number;
  /** Where the engine's background errors go (the server's logger). */
  log?: (level: 'warn' | 'error', message: string, error?: unknown) => void;
}

/**
 * Opens the events engine the configuration selects, in a worker thread behind the
 * write-ahead log: embedded DuckDB, or ClickHouse with `clickhouseUrl`. Each engine's driver
 * loads in that thread only.
 */
export async function openEventStore(options: OpenEventStoreOptions): Promise<EventStore> {
  const { LoggedEventStore } = await import('./logged-event-store.js');
  return LoggedEventStore.open(options);
}
