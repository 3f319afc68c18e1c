import type { DatasetNameResolver, EventStore } from './event-store.js';

export interface OpenEventStoreOptions {
  /** Directory of the engine's files (OPS_DATA_DIR/events). */
  dir: string;
  names: DatasetNameResolver;
  now: () => number;
  /** DuckDB memory_limit (tests shrink it). */
  memoryLimit?: string;
  threads?: number;
  readWaitMs?: number;
  segmentBytes?: number;
  maxEventsPerLoad?: number;
  /** Where the engine's background errors go (the server's logger). */
  log?: (level: 'warn' | 'error', message: string, error?: unknown) => void;
}

/**
 * Opens the events engine the configuration selects (today: embedded DuckDB, in a worker
 * thread behind the write-ahead log). DuckDB's library loads in that thread only.
 */
export async function openEventStore(options: OpenEventStoreOptions): Promise<EventStore> {
  const { LoggedEventStore } = await import('./logged-event-store.js');
  return LoggedEventStore.open(options);
}
