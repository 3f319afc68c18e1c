/**
 * POST /query: parse SOQL, scope it to the caller and the caller's active datasets, and hand it
 * to the event store (EventStore.soql) as one keyset page (newest first), a group-by count or
 * stats. The store compiles and runs it (engine/soql-read.ts): archived datasets are never
 * searched, and the tenant is the store's own condition. This service binds the cursor to the
 * tenant and the normalised query.
 */
import crypto from 'node:crypto';
import { badRequest } from '../errors/app-error.js';
import type { CursorCodec } from '../pagination/cursor.js';
import type { AnswerStamp } from './kept-answers.js';
import { tenantKey } from '../tenancy/tenant.js';
import { isUuid } from '../shared/ids.js';
import { EventStoreResourceError, type EventKey, type EventStore, type GroupRow, type LoadedScope, type ReadLane, type StatsRow } from '../engine/event-store.js';
import type { StoredEvent } from '../shared/event-record.js';
import type { Tenant } from '../tenancy/tenant.js';
import { assertDatasetsExist, planStats, statsRowLimit, parseSoql, payloadPaths, readScope, printField, printSoql, readsClock, type SoqlQuery } from '../soql/index.js';

/** SPEC.md §8: events per page and group rows. */
export const pageSize = 100;
export const maxGroups = 100;

/** What the query service needs of the datasets: the tenant's active ones. */
export interface ActiveDatasets {
  listActive(tenant: Tenant): Promise<ReadonlyArray<{ id: string; name: string }>>;
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

/**
 * What a caller inside the service adds to one run (the monitors' window counts,
 * src/monitors/window-counts.ts): only the events loaded at given positions, and the ids of the
 * active datasets the run read, told before it runs.
 */
export interface RunScope {
  loaded?: LoadedScope;
  datasets?: (ids: readonly string[]) => void;
}

/** The cursor's list name: the query, normalised (whitespace, keyword case), hashed. */
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
    const paths = payloadPaths(query);
    if (paths.length) this.deps.payloadKeysUsed?.(readScope(query, { now, datasetIds }).datasetIds, paths);
    // Throws not_found for a named dataset that does not exist (or is archived).
    assertDatasetsExist(query, datasetIds);
    const isDataset = query.groupBy?.kind === 'canonical' && query.groupBy.name === 'dataset';
    // Group ties order by value; the store orders dataset ties by id, so fetch every dataset
    // group (at most one per active dataset) and order them by name here.
    const limit = query.stats ? statsRowLimit(query.stats) : query.groupBy ? (isDataset ? Math.max(maxGroups, datasetIds.size) : maxGroups) : pageSize;
    const answer = await bounded(
      this.deps.store.soql(tenant, {
        query,
        now,
        datasets: active.map((d) => ({ id: d.id, name: d.name })),
        limit,
        ...(this.deps.lane ? { lane: this.deps.lane } : {}),
        ...(position ? { after: position.after } : {}),
        ...(scope?.loaded ? { loaded: scope.loaded } : {}),
      }),
    );
    switch (answer.kind) {
      case 'stats':
        return answer;
      case 'groups': {
        const groups = isDataset ? answer.groups.sort(byCountThenValue).slice(0, maxGroups) : answer.groups;
        return { kind: 'groups', field: printField(query.groupBy!), groups };
      }
      case 'events': {
        const { page } = answer;
        const nextCursor = page.next ? this.deps.cursors.encode(list, owner, clock ? [page.next.ts, page.next.event_id, now] : [page.next.ts, page.next.event_id]) : '';
        return { kind: 'events', events: page.events, nextCursor, hasMore: page.next !== undefined };
      }
    }
  }
}

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
