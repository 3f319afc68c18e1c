import type { TailPosition } from './tail-position.js';
import type { TailRecord } from './tail-record.js';
import type { Tenant } from '../tenancy/tenant.js';
import type { NewEvent, StoredEvent } from '../shared/event-record.js';
import type { HotKey, HotLayout } from './hot-columns.js';
import type { SoqlQuery } from '../soql/ast.js';

// An event ready to store is declared with the stored event it becomes (shared/event-record.ts),
// which the write-ahead log's batches import without importing this interface.
export type { NewEvent } from '../shared/event-record.js';

// The errors the engine's callers answer as storage_error. They are declared below the stores, in
// src/errors, so the one error handler knows them without importing the engine.
export { EventStoreBehindError, EventStoreResourceError, EventStoreUnavailableError } from '../errors/store-errors.js';

/**
 * The one interface ingest, SOQL, live tail, the schema endpoint and retention use to reach
 * events. Every method takes the Tenant first and applies it itself: callers cannot forget
 * it, and a compiled filter never names org_id, project_id or mode.
 */

export interface AppendResult {
  /** Rows written. */
  stored: number;
  /** Events skipped because an event with the same client event_id already exists. */
  duplicates: number;
  /** Highest seq written (0 when nothing was written). */
  lastSeq: number;
}

/**
 * A filter compiled by SOQL: a SQL boolean expression over the columns of the `events` table
 * (see event-record.ts) with `?` placeholders, and its values in order. The store ANDs the
 * tenant and pagination conditions around it.
 */
/**
 * Per write-ahead log, the seq up to which its events are in the engine
 * (EventStore.loadedPositions; loaded-positions.ts reads them). Each log's events reach the engine in seq order (tail-position.ts),
 * so "seq ≤ the position of its log" names exactly the events loaded at the moment the positions
 * were taken, whichever events arrive later — with any `ts`.
 */
export type LoadedPositions = Readonly<Record<string, number>>;

/** A group key's value as an answer carries it (a JSON value). */
export type GroupValue = string | number | boolean | null | GroupValue[] | { [key: string]: GroupValue };

export interface CompiledFilter {
  where: string;
  params: ReadonlyArray<string | number | boolean | null>;
  /**
   * ClickHouse `stats` only: a cheap condition every row of the answer meets too, which the
   * statement reads first (PREWHERE) so the other columns are read only for the rows it keeps —
   * the monitors' window counts' narrow seq ranges (loaded-positions.ts). 18.16's own choice
   * of PREWHERE picks the filter's columns instead. Other engines and reads ignore it.
   */
  prewhere?: { where: string; params: ReadonlyArray<string | number | boolean | null> };
}

/** Position of the last event of a page, newest first. */
export interface EventKey {
  ts: number;
  event_id: string;
}

/**
 * Which lane of the engine runs a read: the API's (the default), or the threshold monitors'
 * evaluations' — on DuckDB one statement at a time on a connection of their own, each started
 * when no API read is in flight (duckdb/read-lane.ts). The answer is the same in either.
 */
export type ReadLane = 'api' | 'monitors';

export interface EventPageRequest {
  filter: CompiledFilter;
  lane?: ReadLane;
  /** Page size (1..1000). */
  limit: number;
  /** Continue after this event (exclusive). */
  after?: EventKey;
  /** Dataset id → name when the caller has them already (else the store's resolver is asked). */
  names?: ReadonlyMap<string, string>;
}

export interface EventPage {
  events: StoredEvent[];
  /** Key of the last event when more events follow, else undefined. */
  next: EventKey | undefined;
}

/**
 * What to group by: a SQL expression over the columns of `events`, compiled by SOQL
 * (compileDuckDbGroupKey) like the filter, with its `?` values. The store groups by it and
 * hands each group's key back as DuckDB returned it; SOQL decodes it (decodeGroupValue).
 */
export interface CompiledGroupKey {
  sql: string;
  params: ReadonlyArray<string | number | boolean | null>;
  /**
   * ClickHouse `group by` (aggregate) only, for a key cheaper to group by in two steps
   * (clickhouse-soql-hot.ts hotGroupOf): the rows are grouped first by `keys`
   * (aliases of `columns`, the inner SELECT's items, aggregates allowed), then by `value`, an
   * expression over the aliases giving each inner group's key as `sql` would, their counts
   * summed. No `?` in any of them; stats use `sql`.
   */
  twoStep?: TwoStepGroup & {
    /**
     * A key narrowed by the types this process knows its rows to hold (its own loads and the
     * table's when it first asked): `bits` those types, `typeColumn` the slot's type column.
     * Another ingester's rows may hold a type it has not seen, which the narrowed key would
     * group wrongly; so the statement also reads the types of every row it groups, and when
     * one is outside `bits` the answer is `exact`'s (every column).
     */
    assumed?: { typeColumn: string; bits: number; exact: TwoStepGroup };
  };
}

/** The two steps of a `group by` key (CompiledGroupKey.twoStep). */
export interface TwoStepGroup {
  columns: string[];
  keys: string[];
  value: string;
}

export interface AggregateRequest {
  filter: CompiledFilter;
  lane?: ReadLane;
  key: CompiledGroupKey;
  /** Maximum group rows (SPEC: 100). */
  limit: number;
}

/**
 * One group as the store found it: `key` is the key expression's value (NULL for the events
 * without the field; integers as numbers). Ordered by count desc, then key asc, NULL last.
 */
/** `stats`: SELECT keys AS k0…, values AS v0… GROUP BY the keys ORDER BY orderBy LIMIT limit. */
export interface StatsRequest {
  filter: CompiledFilter;
  lane?: ReadLane;
  keys: CompiledGroupKey[];
  values: CompiledGroupKey[];
  /** Over the aliases k0…, v0… (soql-stats.ts). */
  orderBy: string;
  limit: number;
}

/** One stats row: the keys' raw values (as a group key's) and the values, numbers or null. */
export interface RawStatsRow {
  keys: Array<string | number | boolean | null>;
  values: Array<number | null>;
}

/** A stats request's SELECT list (k0…, v0…) with its parameters, and its GROUP BY (none without keys). */
export function statsSelect(request: StatsRequest): { select: string; groupBy: string; params: Array<string | number | boolean | null> } {
  const keys = request.keys.map((k, i) => `${k.sql} AS k${i}`);
  const values = request.values.map((v, i) => `${v.sql} AS v${i}`);
  return {
    select: [...keys, ...values].join(', '),
    // By alias: the keys' `?` are bound once, in the SELECT list.
    groupBy: keys.length ? ` GROUP BY ${request.keys.map((_, i) => `k${i}`).join(', ')}` : '',
    params: [...request.keys.flatMap((k) => k.params), ...request.values.flatMap((v) => v.params)],
  };
}

export interface RawGroupRow {
  key: string | number | boolean | null;
  count: number;
}

export interface FieldStat {
  /** Dot path below payload (`match.map`). */
  key: string;
  /** Approximate distinct count of the values. */
  cardinality: number;
  /** Up to `maxSamples` distinct values, as strings. */
  samples: string[];
}

/** A payload key most often held as one scalar type in the sample: a hot-key candidate. */
export interface FrequentKey {
  /** As FieldStat.key (dot path). */
  key: string;
  /** Its keys below payload. */
  path: string[];
  type: 'string' | 'number' | 'boolean';
  /** Sampled events holding a value of that type there. */
  count: number;
  /**
   * Distinct values the sample shows there (any type): a string key with nearly as many as
   * `count` is identifier-like (its column barely compresses; events/hot-keys.ts). Absent from
   * engines that do not tell.
   */
  distinct?: number;
}

export interface FieldStatsRequest {
  datasetId: string;
  /** Only events with ts >= this (epoch ms). */
  sinceMs: number;
  maxKeys: number;
  maxSamples: number;
}

/** Payload fields of a dataset, from a bounded sample of its newest events. */
export interface FieldStats {
  fields: FieldStat[];
  /** Events the fields were drawn from (the newest of the window, within the sample's bounds). */
  sampledEvents: number;
  /** True when a bound stopped discovery: too many distinct paths, or nesting too deep. */
  truncated: boolean;
  /** Up to 32 keys by how often they hold one scalar type (absent from engines that do not tell). */
  frequent?: FrequentKey[];
}

export interface TailRequest {
  /** Events the position does not cover (tail-position.ts), oldest first. */
  after: TailPosition;
  filter: CompiledFilter;
  limit: number;
}

/** The SQL a store's engine speaks: the engine compiles SOQL to it (soql-compile.ts). */
export type SqlDialect = 'duckdb' | 'clickhouse';

/**
 * A parsed SOQL query to run (EventStore.soql), with the tenant's scope: everything in it
 * crosses to an events node as JSON. The store compiles it to its engine's SQL against the
 * hot-key layouts of the datasets, restricted to `datasets`.
 */
export interface SoqlRequest {
  /** Parsed and planned (soql/stats-plan.ts planStats). */
  query: SoqlQuery;
  /** Epoch milliseconds relative times resolve against. */
  now: number;
  /** The tenant's active datasets: the only ones read, and the names a query's `dataset` means. */
  datasets: ReadonlyArray<{ id: string; name: string }>;
  /** Events of a page, groups, or stats rows at most. */
  limit: number;
  /** Events only: continue after this event (exclusive). */
  after?: EventKey;
  lane?: ReadLane;
  /** Only the events loaded at `upTo`, and not at `after` when given (the monitors' window counts: loaded-positions.ts). */
  loaded?: LoadedScope;
}

/** Events by the loaded positions they were read at (SoqlRequest.loaded). */
export interface LoadedScope {
  upTo: LoadedPositions;
  after?: LoadedPositions;
}

/** One row of a group-by answer. */
export interface GroupRow {
  value: GroupValue;
  count: number;
}

/** One row of a stats answer (SOQL.md "Statistics"), keyed by the items' canonical text. */
export interface StatsRow {
  by: Record<string, GroupValue>;
  values: Record<string, number | null>;
}

/** What a SOQL query answers: a page of events (newest first), the groups of `group by`, or the rows of `stats`. */
export type SoqlAnswer = { kind: 'events'; page: EventPage } | { kind: 'groups'; groups: GroupRow[] } | { kind: 'stats'; stats: StatsRow[] };

/** A dataset the background task of hot keys looks at (EventStore.takeActiveDatasets). */
export interface ActiveDataset {
  tenant: Tenant;
  datasetId: string;
  /** Its hot keys were set to new ones: the rows stored before them are to be filled. */
  keysChanged: boolean;
}

export interface EventStore {
  /** The dialect of this store's engine (an events node's store learns it from the node). */
  dialect(): Promise<SqlDialect>;
  /** Stores a batch; resolves once it is durable (group-committed with concurrent calls). */
  append(tenant: Tenant, events: readonly NewEvent[]): Promise<AppendResult>;
  /** A batch already encoded and checked (the events node's callers'), without client event ids; stores that own a log only. */
  appendEncoded?(tenant: Tenant, body: Buffer, count: number): Promise<AppendResult>;
  /**
   * A parsed SOQL query over the tenant's active datasets (soql-read.ts): the store compiles it
   * to its engine's SQL against its hot-key layouts and runs it; not_found for a dataset the
   * query names that is not among them.
   */
  soql(tenant: Tenant, request: SoqlRequest): Promise<SoqlAnswer>;
  /** One page, newest first (ts desc, event_id desc). */
  query(tenant: Tenant, request: EventPageRequest): Promise<EventPage>;
  /**
   * A number that moves whenever the tenant's stored events change (an acknowledged append, a
   * delete), the one this store keeps its own pages under; undefined when the store cannot
   * tell (ClickHouse: other hosts load events unseen; closed; the engine failing). Taken before
   * a read, an answer kept under it is the answer a read would give while it is unchanged.
   */
  changeCount?(tenant: Tenant): number | undefined;
  /** Group-by count. */
  aggregate(tenant: Tenant, request: AggregateRequest): Promise<RawGroupRow[]>;
  /** SOQL `stats`: aggregates by keys (soql-stats.ts compiles the request). */
  stats(tenant: Tenant, request: StatsRequest): Promise<RawStatsRow[]>;
  /** Event counts per dataset id with ts >= sinceMs, from the per-minute rollup. */
  rollupCounts(tenant: Tenant, datasetIds: readonly string[], sinceMs: number): Promise<Map<string, number>>;
  /** Payload field statistics of one dataset, for the schema endpoint. */
  fieldStats(tenant: Tenant, request: FieldStatsRequest): Promise<FieldStats>;
  /** Deletes the dataset's events with ts < beforeMs; returns how many. */
  deleteBefore(tenant: Tenant, datasetId: string, beforeMs: number): Promise<number>;
  /** Live tail: events after a position, oldest first. */
  readAfter(tenant: Tenant, request: TailRequest): Promise<StoredEvent[]>;
  /** The dataset's hot payload keys for events stored from now on (hot-columns.ts). */
  setHotKeys(tenant: Tenant, datasetId: string, keys: readonly HotKey[]): Promise<void>;
  /**
   * The datasets this store's log took events of, or whose hot keys were set to new ones, since
   * the last call, for the background task of hot keys (src/events/hot-key-chooser.ts); stores
   * that own a log only.
   */
  takeActiveDatasets?(): ActiveDataset[];
  /**
   * Starts giving the dataset's events stored before its current hot keys their columns, in the
   * background (engine.ts EventEngine.backfillHotKeys); true while such events are known to be
   * left. Stores that own a log only.
   */
  backfillHotKeys?(tenant: Tenant, datasetId: string): Promise<boolean>;
  /** The hot-key layouts events of these datasets may be stored with; SOQL compiles against them. */
  hotLayouts(tenant: Tenant, datasetIds: readonly string[]): Promise<HotLayout[]>;
  /** Acknowledged events not yet loaded into the engine (the freshness lag, in events). */
  readonly backlog: number;
  /** The highest seq stored in this store's log (0 when empty). */
  lastSeq(): Promise<number>;
  /** Where a new tail session of the tenant starts: after every event stored so far. */
  tailStart(tenant: Tenant): Promise<TailPosition>;
  /**
   * A store that owns a log on ClickHouse: tells `listener` of each record of its log when it is
   * durable and again once ClickHouse holds it (live tail hands the events to the sessions
   * without reading ClickHouse: src/tail/relay.ts); true then. False, or absent, where tail
   * reads the store on each wake-up (the embedded engine answers those reads from memory).
   */
  onTailRecord?(listener: (record: TailRecord, loaded: boolean) => void): boolean;
  /**
   * Per write-ahead log, the seq up to which every event of the log is readable by the next read
   * (tail-position.ts on logs): what the monitors' window counts count events by
   * (src/monitors/window-counts.ts). A log missing has none loaded.
   */
  loadedPositions(): Promise<Readonly<Record<string, number>>>;
  ping(): Promise<void>;
  /** Waits for pending appends, then releases the database. */
  close(): Promise<void>;
}

/** Maps dataset ids to names for StoredEvent.dataset (archived included). */
export type DatasetNameResolver = (tenant: Tenant, ids: readonly string[]) => Promise<Map<string, string>>;

/**
 * Replaces each event's dataset id with its name, in place: from `known` when it covers every
 * id (the caller had them), else from `names` (one lookup); an id without a name stays as it is.
 */
export async function nameDatasets(tenant: Tenant, events: StoredEvent[], names: DatasetNameResolver, known?: ReadonlyMap<string, string>): Promise<StoredEvent[]> {
  const ids = [...new Set(events.map((e) => e.dataset))];
  const found = known && ids.every((id) => known.has(id)) ? known : ids.length ? await names(tenant, ids) : new Map<string, string>();
  for (const e of events) e.dataset = found.get(e.dataset) ?? e.dataset;
  return events;
}

/** The filter that matches everything. */
export const matchAll: CompiledFilter = { where: 'true', params: [] };

/**
 * Thrown when another process holds the store (DuckDB allows one writing process). Declared
 * here, beside the interface, so callers can tell it apart without loading an engine.
 */
export class EventStoreLockedError extends Error {
  constructor(file: string, cause: unknown) {
    super(`the event store ${file} is in use by another process`, { cause });
    this.name = 'EventStoreLockedError';
  }
}
