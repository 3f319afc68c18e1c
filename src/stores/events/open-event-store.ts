import type { DatasetNameResolver, EventStore } from './event-store.js';

export interface OpenEventStoreOptions {
  /** Directory of the engine's files (OPS_DATA_DIR/events). */
  dir: string;
  names: DatasetNameResolver;
  now: () => number;
  /** DuckDB memory_limit (tests shrink it). */
  memoryLimit?: string;
  threads?: number;
}

/**
 * Opens the events engine the configuration selects (today: embedded DuckDB). Loaded on first
 * use: DuckDB's library costs ~25 MB in a process that never touches events.
 */
export async function openEventStore(options: OpenEventStoreOptions): Promise<EventStore> {
  const { DuckDbEventStore } = await import('./duckdb-event-store.js');
  return DuckDbEventStore.open(options);
}
