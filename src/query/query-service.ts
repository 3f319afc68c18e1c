/**
 * POST /query: parse SOQL, scope it to the caller and the caller's active datasets, and run it
 * on the event store as one keyset page (newest first) or a group-by count.
 *
 * The tenant never appears in the compiled filter: the store ANDs its own tenant condition
 * (`tenant = ?`, the engine's id for org, project and mode) around it. This service ANDs the restriction to active datasets (archived datasets are never
 * searched) and binds the cursor to the tenant and the normalised query.
 */
import crypto from 'node:crypto';
import { badRequest } from '../errors/app-error.js';
import type { CursorCodec } from '../pagination/cursor.js';
import type { AnswerStamp } from './kept-answers.js';
import { tenantKey } from '../tenancy/tenant.js';
import { isUuid } from '../shared/ids.js';
import { EventStoreResourceError, type CompiledFilter, type EventKey, type EventStore, type ReadLane, type SqlDialect } from '../engine/event-store.js';
import type { StoredEvent } from '../shared/event-record.js';
import type { Tenant } from '../tenancy/tenant.js';
import { aggregateText, byItemText, planStats, statsRowLimit, parseSoql, payloadPaths, readScope, printField, printSoql, readsClock, type SoqlQuery } from '../soql/index.js';
import { compileFilter, compileGroupKey, compileStats, hotContext, hotReadsFor, stillHolds, type AnyHotReads, decodeGroupValue, withinDatasets, type GroupValue } from '../engine/soql-compile.js';

/** SPEC.md §8: events per page and group rows. */
export const pageSize = 100;
export const maxGroups = 100;

/** What the query service needs of the datasets: the tenant's active ones. */
export interface ActiveDatasets {
  listActive(tenant: Tenant): Promise<ReadonlyArray<{ id: string; name: string }>>;
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

export type QueryResult =
  | { kind: 'events'; events: StoredEvent[]; nextCursor: string; hasMore: boolean }
  | { kind: 'groups'; field: string; groups: GroupRow[] }
  | { kind: 'stats'; stats: StatsRow[] };

export interface QueryServiceDeps {
  store: EventStore;
  datasets: ActiveDatasets;
  cursors: CursorCodec;
  now: () => number;
  /** Told the payload keys each query names and the datasets it can read (hot keys: events/hot-keys.ts QueryKeyUse). */
  payloadKeysUsed?: (datasetIds: readonly string[], paths: readonly string[][]) => void;
  /** The engine's lane for this service's reads (the monitors' evaluations have their own: ReadLane); the API's by default. */
  lane?: ReadLane;
}

/** The cursor's list name: the query, normalised (whitespace, keyword case), hashed. */
/**
 * What a caller inside the service adds to one run (the monitors' window counts,
 * src/monitors/window-counts.ts): a condition in the store's dialect ANDed into the compiled
 * filter, and the ids of the active datasets the run read, told before it runs.
 */
export interface RunScope {
  where?: (dialect: SqlDialect) => CompiledFilter;
  datasets?: (ids: readonly string[]) => void;
}

export const queryListName = (query: SoqlQuery): string =>
  `query:${crypto.createHash('sha256').update(printSoql(query)).digest('base64url')}`;

/**
 * Reads a cursor key: [ts, event_id, now] for a query naming a relative time, [ts, event_id]
 * for one that does not (its pages are the same whatever `now` is, and a cursor without it is
 * the same string on every request: the answer can be kept, kept-answers.ts). Cursors of the
 * three-part form made for a query without relative times before still read. Anything else
 * is a 400 like a tampered cursor.
 */
function readKey(key: ReadonlyArray<string | number>): { after: EventKey; now: number | undefined } {
  const [ts, eventId, now] = key;
  if (
    (key.length !== 3 && key.length !== 2) ||
    typeof ts !== 'number' ||
    !Number.isSafeInteger(ts) ||
    typeof eventId !== 'string' ||
    !isUuid(eventId) ||
    (key.length === 3 && (typeof now !== 'number' || !Number.isSafeInteger(now)))
  ) {
    throw badRequest('invalid cursor: pass the next_cursor value of the previous page of this same list, unchanged');
  }
  return { after: { ts, event_id: eventId }, now: key.length === 3 ? (now as number) : undefined };
}

/** What a query that ran out of the event store's memory answers (a 400: its own size). */
export const tooBigMessage =
  'the query needs more memory than one query may use; narrow the time range (ts >= now-1h), add conditions, ' +
  'or group by a field with fewer distinct values';

/** Runs a store read; a read too big for the store's memory is the caller's 400. */
async function bounded<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof EventStoreResourceError) throw Object.assign(badRequest(tooBigMessage), { cause: error });
    throw error;
  }
}

/** Placeholders for `dataset_id IN (…)`. */

export class QueryService {
  constructor(private readonly deps: QueryServiceDeps) {}

  /**
   * Parses q (soql_parse_error / soql_reserved_field as AppErrors): call before charging quota.
   * A stats query with a bin gets its default time range here, and too many bins are a parse
   * error (planStats).
   */
  parse(q: string): SoqlQuery {
    return planStats(parseSoql(q), q, this.deps.now());
  }

  /**
   * Whether an events answer of `query` with `cursor` may be kept and served again while its
   * stamp holds (kept-answers.ts): it depends on the time it runs only through relative times,
   * which a cursor pins.
   */
  keepable(query: SoqlQuery, cursor: string | undefined): boolean {
    return !query.groupBy && !query.stats && (!!cursor || !readsClock(query));
  }

  /** What the tenant's answers are made from (AnswerStamp), taken before one is made; undefined when the store cannot tell. */
  async stamp(tenant: Tenant): Promise<AnswerStamp | undefined> {
    // The events' count first: a list of datasets read after it is at least as new.
    const change = this.deps.store.changeCount?.(tenant);
    if (change === undefined) return undefined;
    return { change, active: await this.deps.datasets.listActive(tenant) };
  }

  /** For an answer served again without running: what run tells payloadKeysUsed (hot keys count the query all the same). */
  tellKeysUsed(query: SoqlQuery, active: AnswerStamp['active']): void {
    if (!this.deps.payloadKeysUsed) return;
    const paths = payloadPaths(query);
    if (!paths.length) return;
    const datasetIds = new Map(active.map((d) => [d.name, d.id]));
    this.deps.payloadKeysUsed(readScope(query, { now: this.deps.now(), datasetIds }).datasetIds, paths);
  }

  async run(tenant: Tenant, query: SoqlQuery, cursor?: string, scope?: RunScope): Promise<QueryResult> {
    const owner = tenantKey(tenant);
    const list = queryListName(query);
    // The cursor pins `now`, so relative times (now-15m) mean the same on every page.
    const position = cursor ? readKey(this.deps.cursors.decode(cursor, list, owner)) : undefined;
    if (position && (query.groupBy || query.stats)) {
      throw badRequest(`a ${query.groupBy ? 'group by' : 'stats'} query has a single answer and takes no cursor`);
    }
    const clock = readsClock(query);
    // A relative time is resolved against the cursor's `now`; a cursor of such a query without one was made for another query.
    if (position && clock && position.now === undefined) throw badRequest('invalid cursor: pass the next_cursor value of the previous page of this same list, unchanged');
    const now = position?.now ?? this.deps.now();

    const active = await this.deps.datasets.listActive(tenant);
    const datasetIds = new Map(active.map((d) => [d.name, d.id]));
    scope?.datasets?.([...datasetIds.values()]);
    // The store would otherwise look the names of the page's datasets up again.
    const names = new Map(active.map((d) => [d.id, d.name]));
    // Throws not_found for a named dataset that does not exist (or is archived).
    // The store's engine decides the SQL dialect (DuckDB embedded, ClickHouse).
    const dialect = await this.deps.store.dialect();
    const paths = payloadPaths(query);
    if (!paths.length) return this.runOnce(tenant, query, { now, clock, datasetIds, names, position, dialect, hot: undefined, where: scope?.where });
    this.deps.payloadKeysUsed?.(readScope(query, { now, datasetIds }).datasetIds, paths);
    // Hot payload keys: read from their typed columns where the rows have them (duckdb-hot.ts,
    // clickhouse-hot.ts). On DuckDB a key may be read from its column alone when the store's
    // counts say no row of the query's datasets needs the JSON (on ClickHouse, a `group by` key
    // groups by the columns its types leave varying); if those counts changed while the query
    // ran (rows needing it may have been read), it runs again — the third time with the JSON
    // (every column) whatever the counts say, which is always exact.
    const ids = [...datasetIds.values()];
    let layouts = await this.deps.store.hotLayouts(tenant, ids);
    for (let attempt = 1; ; attempt++) {
      const hot = hotReadsFor(dialect, layouts, query, { now, datasetIds }, { withJson: attempt >= 3 });
      const result = await this.runOnce(tenant, query, { now, clock, datasetIds, names, position, dialect, hot, where: scope?.where });
      if (!('relied' in hot) || !hot.relied.size) return result;
      layouts = await this.deps.store.hotLayouts(tenant, ids);
      if (stillHolds(hot, layouts)) return result;
    }
  }

  private async runOnce(
    tenant: Tenant,
    query: SoqlQuery,
    run: {
      now: number;
      /** whether the query names a relative time (readsClock): then its cursor carries `now` */
      clock: boolean;
      datasetIds: ReadonlyMap<string, string>;
      names: ReadonlyMap<string, string>;
      position: ReturnType<typeof readKey> | undefined;
      dialect: SqlDialect;
      hot: AnyHotReads | undefined;
      where: RunScope['where'];
    },
  ): Promise<QueryResult> {
    const { now, clock, datasetIds, names, position, dialect, hot } = run;
    const owner = tenantKey(tenant);
    const list = queryListName(query);
    const compiled = compileFilter(query, { now, datasetIds, ...hotContext(hot) }, dialect);
    const within = withinDatasets(compiled, [...datasetIds.values()], dialect);
    const extra = run.where?.(dialect);
    const filter: CompiledFilter = extra ? { where: `${within.where} AND (${extra.where})`, params: [...within.params, ...extra.params], ...(extra.prewhere ? { prewhere: extra.prewhere } : {}) } : within;
    const lane = this.deps.lane ? { lane: this.deps.lane } : {};

    if (query.stats) {
      const stats = query.stats;
      const rows = await bounded(this.deps.store.stats(tenant, { filter, ...lane, ...compileStats(stats, dialect, hot), limit: statsRowLimit(stats) }));
      return {
        kind: 'stats',
        stats: rows.map((row) => ({
          by: Object.fromEntries(
            stats.by.map((b, i) => {
              const raw = row.keys[i] ?? null;
              const value = b.kind === 'field' ? decodeGroupValue(b.field, raw, names) : raw === null ? null : new Date(Number(raw)).toISOString();
              return [byItemText(b), value];
            }),
          ),
          // A sum past the largest double is infinite, which JSON cannot carry: null.
          values: Object.fromEntries(stats.aggregates.map((a, i) => [aggregateText(a), finiteOrNull(row.values[i])])),
        })),
      };
    }

    if (query.groupBy) {
      const field = query.groupBy;
      const isDataset = field.kind === 'canonical' && field.name === 'dataset';
      // Group ties order by value; the store orders dataset ties by id, so fetch every dataset
      // group (at most one per active dataset) and order them by name here.
      const rows = await bounded(
        this.deps.store.aggregate(tenant, {
          filter,
          ...lane,
          key: compileGroupKey(field, dialect, hot),
          limit: isDataset ? Math.max(maxGroups, datasetIds.size) : maxGroups,
        }),
      );
      let groups = rows.map((r) => ({ value: decodeGroupValue(field, r.key, names), count: r.count }));
      if (isDataset) groups = groups.sort(byCountThenValue).slice(0, maxGroups);
      return { kind: 'groups', field: printField(field), groups };
    }

    const page = await bounded(this.deps.store.query(tenant, { filter, ...lane, limit: pageSize, names, ...(position ? { after: position.after } : {}) }));
    const nextCursor = page.next ? this.deps.cursors.encode(list, owner, clock ? [page.next.ts, page.next.event_id, now] : [page.next.ts, page.next.event_id]) : '';
    return { kind: 'events', events: page.events, nextCursor, hasMore: page.next !== undefined };
  }
}

const finiteOrNull = (v: number | null | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function byCountThenValue(a: GroupRow, b: GroupRow): number {
  if (a.count !== b.count) return b.count - a.count;
  if (a.value === b.value) return 0;
  if (a.value === null) return 1;
  if (b.value === null) return -1;
  return String(a.value) < String(b.value) ? -1 : 1;
}

/** For callers outside HTTP (bench, tests): parse and run in one call. */
export async function runQuery(service: QueryService, tenant: Tenant, q: string, cursor?: string): Promise<QueryResult> {
  return service.run(tenant, service.parse(q), cursor);
}
