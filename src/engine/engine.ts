import type { Tenant } from '../tenancy/tenant.js';
import type { StoredEvent } from '../shared/event-record.js';
import type { HotKey, HotLayout } from './hot-columns.js';
import type { AggregateRequest, CompiledFilter, EventKey, FieldStats, FieldStatsRequest, RawGroupRow, RawStatsRow, ReadLane, StatsRequest, TailRequest } from './event-store.js';

/**
 * What an events engine (DuckDB embedded today, ClickHouse next) implements behind the
 * write-ahead log. The log (wal.ts) acknowledges appends; the loader (wal-loader.ts) hands the
 * engine the log's records in order through `load`; reads answer from what is loaded. Events
 * come back with `dataset` holding the dataset *id*: names are the metadata store's business
 * and are mapped by the caller.
 *
 * Every method takes the Tenant first and applies it itself (the engine owns the one place
 * tenancy turns into its query language).
 */
export interface EventEngine {
  /** Seq of the last event loaded (0 when none): the log is replayed after it. */
  loadedSeq(): Promise<number>;
  /**
   * Loads records, oldest first, and records `lastSeq` as the loaded position atomically with
   * them (or idempotently), so a crash at any point loads each record exactly once.
   */
  load(records: readonly LoadRecord[], lastSeq: number): Promise<void>;
  /**
   * Events the next load should hold at most to end exactly where the engine's storage unit
   * does (DuckDB: the open row group); the log's loader takes the whole records that fit, or a
   * full load when not even the first one does (the engine closes the unit before it). Absent:
   * no preference.
   */
  loadRoom?(): number;
  query(tenant: Tenant, request: EnginePageRequest): Promise<{ events: StoredEvent[]; more: boolean }>;
  aggregate(tenant: Tenant, request: AggregateRequest): Promise<RawGroupRow[]>;
  stats(tenant: Tenant, request: StatsRequest): Promise<RawStatsRow[]>;
  rollupCounts(tenant: Tenant, datasetIds: readonly string[], sinceMs: number): Promise<Array<[string, number]>>;
  fieldStats(tenant: Tenant, request: FieldStatsRequest): Promise<FieldStats>;
  deleteBefore(tenant: Tenant, datasetId: string, beforeMs: number): Promise<number>;
  readAfter(tenant: Tenant, request: TailRequest): Promise<StoredEvent[]>;
  /**
   * Per log that stored events of the tenant ingested at or after `sinceMs`, its highest seq
   * (where a tail session starts on an engine many logs load into; {} from a one-log engine).
   */
  logPositions(tenant: Tenant, sinceMs: number): Promise<Record<string, number>>;
  /**
   * Per log loading into this engine, its loaded position: every event of the log up to it is
   * readable here ({} from a one-log engine: its store knows the position).
   */
  loadedPositions(): Promise<Record<string, number>>;
  /** The dataset's hot payload keys for rows loaded from now on (hot-columns.ts; an engine without hot columns ignores them). */
  setHotKeys(tenant: Tenant, datasetId: string, keys: readonly HotKey[]): Promise<void>;
  /**
   * Starts giving the dataset's rows stored before its current hot keys their columns, in the
   * background, bounded so that loads and reads go on beside it (the backfill); a no-op while one
   * runs. True while such rows are known to be left.
   */
  backfillHotKeys(tenant: Tenant, datasetId: string): Promise<boolean>;
  /** The hot-key layouts rows of these datasets may carry (none: every payload read goes to the JSON). */
  hotLayouts(tenant: Tenant, datasetIds: readonly string[]): Promise<HotLayout[]>;
  /** Which of these client event ids the tenant has stored already. */
  existingIds(tenant: Tenant, eventIds: readonly string[]): Promise<string[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface LoadRecord {
  firstSeq: number;
  /**
   * The record's body: read it with event-batch.ts's BatchReader. Valid until `load` settles:
   * the loader reads the next records into the same buffer (wal-loader.ts).
   */
  body: Buffer;
}

export interface EnginePageRequest {
  filter: CompiledFilter;
  lane?: ReadLane;
  limit: number;
  after?: EventKey;
}

/** The read methods, by name: what crosses to an engine running in a worker thread. */
export type EngineReadMethod = Exclude<keyof EventEngine, 'load' | 'loadedSeq' | 'close'>;
