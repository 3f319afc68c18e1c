import type { Tenant } from '../../tenancy/tenant.js';
import type { StoredEvent } from './event-record.js';

/**
 * The one interface ingest, SOQL, live tail, the schema endpoint and retention use to reach
 * events. Every method takes the Tenant first and applies it itself: callers cannot forget
 * it, and a compiled filter never names org_id, project_id or mode.
 */

/** An event ready to store, already validated and normalised by ingest. */
export interface NewEvent {
  datasetId: string;
  /** Lower-case UUID. Client-sent ids are de-duplicated per tenant (a retry is stored once). */
  eventId: string;
  /** True when the client sent event_id (only those are checked for duplicates). */
  clientEventId: boolean;
  /** epoch ms */
  ts: number;
  /** index into `severities` */
  severity: number;
  bytesRaw: number;
  event: string;
  actor: string | null;
  source: string | null;
  message: string;
  /** JSON text of the payload object (`{}` when the event has none). */
  payload: string;
}

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
export interface CompiledFilter {
  where: string;
  params: ReadonlyArray<string | number | boolean | null>;
}

/** Position of the last event of a page, newest first. */
export interface EventKey {
  ts: number;
  event_id: string;
}

export interface EventPageRequest {
  filter: CompiledFilter;
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

/** What to group by: a canonical column, or a payload path (['match', 'map'] = payload.match.map). */
export type GroupKey =
  | { kind: 'canonical'; name: 'dataset' | 'severity' | 'event' | 'actor' | 'source' | 'message' | 'event_id' | 'bytes_raw' | 'ts' | 'ingested_at' }
  | { kind: 'payload'; path: string[] };

export interface AggregateRequest {
  filter: CompiledFilter;
  key: GroupKey;
  /** Maximum group rows (SPEC: 100). */
  limit: number;
  /** As EventPageRequest.names. */
  names?: ReadonlyMap<string, string>;
}

/**
 * One group: `value` is the field's value (severity and dataset as names, payload values as
 * their JSON type), null for events without the field. Ordered by count desc, then value.
 */
export interface GroupRow {
  value: string | number | boolean | null;
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

export interface FieldStatsRequest {
  datasetId: string;
  /** Only events with ts >= this (epoch ms). */
  sinceMs: number;
  maxKeys: number;
  maxSamples: number;
}

export interface TailRequest {
  /** Events with seq > afterSeq, oldest first. */
  afterSeq: number;
  filter: CompiledFilter;
  limit: number;
}

export interface EventStore {
  /** Stores a batch; resolves once it is durable (group-committed with concurrent calls). */
  append(tenant: Tenant, events: readonly NewEvent[]): Promise<AppendResult>;
  /** One page, newest first (ts desc, event_id desc). */
  query(tenant: Tenant, request: EventPageRequest): Promise<EventPage>;
  /** Group-by count. */
  aggregate(tenant: Tenant, request: AggregateRequest): Promise<GroupRow[]>;
  /** Event counts per dataset id with ts >= sinceMs, from the per-minute rollup. */
  rollupCounts(tenant: Tenant, datasetIds: readonly string[], sinceMs: number): Promise<Map<string, number>>;
  /** Payload field statistics of one dataset, for the schema endpoint. */
  fieldStats(tenant: Tenant, request: FieldStatsRequest): Promise<FieldStat[]>;
  /** Deletes the dataset's events with ts < beforeMs; returns how many. */
  deleteBefore(tenant: Tenant, datasetId: string, beforeMs: number): Promise<number>;
  /** Live tail: events after a position, oldest first. */
  readAfter(tenant: Tenant, request: TailRequest): Promise<StoredEvent[]>;
  /** The highest seq stored (0 when empty): where a new tail session starts. */
  lastSeq(): Promise<number>;
  ping(): Promise<void>;
  /** Waits for pending appends, then releases the database. */
  close(): Promise<void>;
}

/** Maps dataset ids to names for StoredEvent.dataset (archived included). */
export type DatasetNameResolver = (tenant: Tenant, ids: readonly string[]) => Promise<Map<string, string>>;

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
