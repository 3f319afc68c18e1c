import { frameAppend } from '../wal/event-batch.js';
import type { TailPosition } from '../tail-position.js';
import crypto from 'node:crypto';
import { Pool, errors as undiciErrors } from 'undici';
import { tenantKey, tenantOnly, type Tenant } from '../../tenancy/tenant.js';
import { ChangeBoardReader } from '../change-board.js';
import { NamedPages } from '../named-pages.js';
import { UnchangedAnswers, keyableParams } from '../unchanged-answers.js';
import type { StoredEvent } from '../../shared/event-record.js';
import type { HotKey, HotLayout } from '../hot-columns.js';
import {
  nameDatasets,
  EventStoreBehindError,
  EventStoreResourceError,
  EventStoreUnavailableError,
  type AggregateRequest,
  type AppendResult,
  type DatasetNameResolver,
  type EventPage,
  type EventPageRequest,
  type EventStore,
  type FieldStats,
  type FieldStatsRequest,
  type NewEvent,
  type RawGroupRow,
  type RawStatsRow,
  type SoqlAnswer,
  type SoqlRequest,
  type StatsRequest,
  type SqlDialect,
  type TailRequest,
} from '../event-store.js';
import { readsClock } from '../../soql/ast.js';

/**
 * The wire between API processes and an events node (src/engine/node/): one POST per
 * EventStore method, JSON in and out, over kept-alive HTTP/1.1. Both ends live in this repo and
 * change together, so the protocol is versioned by its path prefix only.
 */
export const eventsNodePrefix = '/events-node/v1';

/** Methods of EventStore the node serves, by the last segment of their path. */
export type EventsNodeMethod = 'append' | 'append-batch' | 'soql' | 'query' | 'aggregate' | 'stats' | 'rollup-counts' | 'field-stats' | 'delete-before' | 'read-after' | 'last-seq' | 'tail-start' | 'loaded-positions' | 'ping' | 'dialect' | 'set-hot-keys' | 'hot-layouts';

/** The header that proves a caller holds the installation's secret key (never the key itself). */
export const nodeKeyHeader = 'x-ops-node-key';

/** Derived from OPS_SECRET_KEY, so every API process of the installation can compute it. */
export function eventsNodeKey(secret: Buffer): string {
  return crypto.createHmac('sha256', secret).update('opsplatform events node v1').digest('base64url');
}

/** How an error crosses the wire: its kind, so the caller can answer what the owner would. */
export interface WireError {
  kind: 'behind' | 'unavailable' | 'resource' | 'bad_request' | 'internal';
  message: string;
  waitedMs?: number;
}

export function toWireError(error: unknown): { status: number; body: { error: WireError } } {
  if (error instanceof EventStoreBehindError) return { status: 503, body: { error: { kind: 'behind', message: error.message, waitedMs: error.waitedMs } } };
  if (error instanceof EventStoreUnavailableError) return { status: 503, body: { error: { kind: 'unavailable', message: error.message } } };
  if (error instanceof EventStoreResourceError) return { status: 507, body: { error: { kind: 'resource', message: error.message } } };
  return { status: 500, body: { error: { kind: 'internal', message: error instanceof Error ? error.message : String(error) } } };
}

function fromWireError(status: number, body: unknown, origin: string): Error {
  const wire = (body as { error?: WireError } | undefined)?.error;
  // Refused for the key: a configuration error of the installation, reported as the store being unreachable.
  if (status === 401) return new EventStoreUnavailableError(`the events node at ${origin} refused this process: ${wire?.message ?? 'wrong key'}`);
  switch (wire?.kind) {
    case 'behind':
      return new EventStoreBehindError(wire.message, wire.waitedMs ?? 0);
    case 'unavailable':
      return new EventStoreUnavailableError(wire.message);
    case 'resource':
      return new EventStoreResourceError(new Error(wire.message));
    default:
      // The node failed on something this process sent or on a bug of its own: an internal error here too.
      return new Error(`the events node at ${origin} answered ${status}: ${wire?.message ?? 'no error description'}`);
  }
}

export interface RemoteEventStoreOptions {
  /** OPS_EVENTS_URL: http://host:port of the events node. */
  url: string;
  /** The installation's secret key (OPS_SECRET_KEY or the data directory's). */
  secret: Buffer;
  names: DatasetNameResolver;
  /** Connections kept to the node (requests beyond them queue in this process). */
  connections?: number;
  /** Longest a call may wait for the node's answer (reads wait for the loader there first). */
  timeoutMs?: number;
  /** The ingest time stamped on appended events (the caller's clock; Date.now by default). */
  now?: () => number;
  /**
   * The node's change board (change-board.ts), when the node runs on this machine and this
   * process may read its file (`serve --workers`): query pages and rollup counts are then kept
   * and served again while the tenant's count is unchanged, as the node itself does.
   */
  changeBoard?: string;
}

/** Answers kept per kind; a full cache drops its oldest. As the node's own (logged-event-store.ts). */
const maxKept = { pages: 200, rollups: 10_000 };

/**
 * EventStore over an events node that owns the write-ahead log and the engine. Durability,
 * read-your-writes and client event_id de-duplication are the node's, so they hold across every
 * API process that shares it. Dataset ids become names here, with this process's metadata.
 * A node that cannot be reached is EventStoreUnavailableError (503); the pool reconnects by itself.
 */
export class RemoteEventStore implements EventStore {
  private readonly pool: Pool;
  private readonly key: string;
  private readonly origin: string;
  private lastBacklog = 0;
  private readonly board: ChangeBoardReader | undefined;
  private readonly pages = new UnchangedAnswers<EventPage>(maxKept.pages);
  private readonly soqlPages = new UnchangedAnswers<SoqlAnswer>(maxKept.pages);
  private readonly rollups = new UnchangedAnswers<Array<[string, number]>>(maxKept.rollups);
  private readonly namedPages: NamedPages;

  constructor(private readonly options: RemoteEventStoreOptions) {
    const url = new URL(options.url);
    this.origin = url.origin;
    const timeout = options.timeoutMs ?? 300_000;
    this.pool = new Pool(this.origin, {
      connections: options.connections ?? 64,
      connectTimeout: 5_000,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      keepAliveTimeout: 30_000,
    });
    this.key = eventsNodeKey(options.secret);
    this.board = options.changeBoard ? ChangeBoardReader.open(options.changeBoard) : undefined;
    this.namedPages = new NamedPages(options.names);
  }

  /**
   * `read`'s answer, kept under the tenant's count on the change board and served again while
   * the count is unchanged (the node moved it before answering any append since). Without a
   * board every call reads.
   */
  private unchanged<T>(cache: UnchangedAnswers<T>, tenant: Tenant, key: string, read: () => Promise<T>): Promise<T> {
    const change = this.changeCount(tenant);
    if (change === undefined) return read();
    return cache.get(`${tenantKey(tenant)}|${key}`, change, read);
  }

  /** The tenant's count on the node's change board (EventStore.changeCount); undefined without a board. */
  changeCount(tenant: Tenant): number | undefined {
    return this.board?.read(tenantKey(tenant));
  }

  /** Acknowledged events the node had not loaded when it last answered this process. */
  get backlog(): number {
    return this.lastBacklog;
  }

  private call<T>(method: EventsNodeMethod, body: unknown): Promise<T> {
    return this.send<T>(method, 'application/json', JSON.stringify(body));
  }

  private async send<T>(method: EventsNodeMethod, contentType: string, body: string | Buffer): Promise<T> {
    let response;
    try {
      response = await this.pool.request({
        path: `${eventsNodePrefix}/${method}`,
        method: 'POST',
        headers: { 'content-type': contentType, [nodeKeyHeader]: this.key },
        body,
      });
    } catch (error) {
      if (error instanceof undiciErrors.ClientDestroyedError || error instanceof undiciErrors.ClientClosedError) {
        throw new Error('event store closed', { cause: error });
      }
      throw new EventStoreUnavailableError(`the events node at ${this.origin} cannot be reached (${(error as Error).message})`, error);
    }
    let parsed: unknown;
    try {
      parsed = await response.body.json();
    } catch (error) {
      throw new EventStoreUnavailableError(`the events node at ${this.origin} closed its answer early (${(error as Error).message})`, error);
    }
    const backlog = Number(response.headers['x-ops-backlog']);
    if (Number.isFinite(backlog)) this.lastBacklog = backlog;
    if (response.statusCode !== 200) throw fromWireError(response.statusCode, parsed, this.origin);
    return parsed as T;
  }

  private named(tenant: Tenant, events: StoredEvent[], known?: ReadonlyMap<string, string>): Promise<StoredEvent[]> {
    return nameDatasets(tenant, events, this.options.names, known);
  }

  /** In the log's own batch encoding (event-batch.ts's frameAppend): the node stores the bytes without parsing them again. */
  append(tenant: Tenant, events: readonly NewEvent[]): Promise<AppendResult> {
    if (events.length === 0) return Promise.resolve({ stored: 0, duplicates: 0, lastSeq: 0 });
    return this.send('append-batch', 'application/octet-stream', frameAppend(tenantOnly(tenant), (this.options.now ?? Date.now)(), events));
  }

  /**
   * Run on the node, which compiles the query to its engine's SQL against its hot-key layouts
   * (soql-read.ts there) and names the page's datasets from the request's. A page is kept as
   * `query` keeps its own: by the request, without `now` when the query names no relative time
   * (its answer is the same whatever the clock).
   */
  soql(tenant: Tenant, request: SoqlRequest): Promise<SoqlAnswer> {
    const read = () => this.call<SoqlAnswer>('soql', { tenant: tenantOnly(tenant), request });
    if (request.query.groupBy || request.query.stats) return read();
    const key = JSON.stringify({ ...request, now: readsClock(request.query) ? request.now : undefined });
    return this.unchanged(this.soqlPages, tenant, key, read);
  }

  async query(tenant: Tenant, request: EventPageRequest): Promise<EventPage> {
    const wire = { filter: request.filter, limit: request.limit, after: request.after };
    const read = () => this.call<EventPage>('query', { tenant: tenantOnly(tenant), request: wire });
    // Kept as the node's own page cache keys them.
    const page = keyableParams(request.filter.params) ? await this.unchanged(this.pages, tenant, JSON.stringify(wire), read) : await read();
    // Named copies, once per kept page and set of names (named-pages.ts): a kept page stays as the node answered it.
    const events = await this.namedPages.of(tenant, page.events, request.names);
    return { events, next: page.next ?? undefined };
  }

  aggregate(tenant: Tenant, request: AggregateRequest): Promise<RawGroupRow[]> {
    return this.call('aggregate', { tenant: tenantOnly(tenant), request });
  }

  stats(tenant: Tenant, request: StatsRequest): Promise<RawStatsRow[]> {
    return this.call('stats', { tenant: tenantOnly(tenant), request });
  }

  async rollupCounts(tenant: Tenant, datasetIds: readonly string[], sinceMs: number): Promise<Map<string, number>> {
    if (!datasetIds.length) return new Map();
    // Whole minutes from the window's first, as the node keeps them: the same key while the window stays in its minute.
    const key = `${Math.floor(sinceMs / 60_000)}|${datasetIds.join(',')}`;
    const rows = await this.unchanged(this.rollups, tenant, key, () =>
      this.call<Array<[string, number]>>('rollup-counts', { tenant: tenantOnly(tenant), datasetIds, sinceMs }),
    );
    return new Map(rows);
  }

  fieldStats(tenant: Tenant, request: FieldStatsRequest): Promise<FieldStats> {
    return this.call('field-stats', { tenant: tenantOnly(tenant), request });
  }

  deleteBefore(tenant: Tenant, datasetId: string, beforeMs: number): Promise<number> {
    return this.call('delete-before', { tenant: tenantOnly(tenant), datasetId, beforeMs });
  }

  async readAfter(tenant: Tenant, request: TailRequest): Promise<StoredEvent[]> {
    return this.named(tenant, await this.call<StoredEvent[]>('read-after', { tenant: tenantOnly(tenant), request }));
  }

  lastSeq(): Promise<number> {
    return this.call('last-seq', {});
  }

  tailStart(tenant: Tenant): Promise<TailPosition> {
    return this.call('tail-start', { tenant: tenantOnly(tenant) });
  }

  loadedPositions(): Promise<Record<string, number>> {
    return this.call('loaded-positions', {});
  }

  async setHotKeys(tenant: Tenant, datasetId: string, keys: readonly HotKey[]): Promise<void> {
    await this.call('set-hot-keys', { tenant, datasetId, keys });
  }

  hotLayouts(tenant: Tenant, datasetIds: readonly string[]): Promise<HotLayout[]> {
    if (!datasetIds.length) return Promise.resolve([]);
    return this.call('hot-layouts', { tenant, datasetIds });
  }

  private knownDialect: SqlDialect | undefined;

  /** The node's engine decides; asked once (a node keeps its engine for its lifetime). */
  async dialect(): Promise<SqlDialect> {
    this.knownDialect ??= await this.call<SqlDialect>('dialect', {});
    return this.knownDialect;
  }

  async ping(): Promise<void> {
    await this.call('ping', {});
  }

  /** Lets calls in flight finish, then closes the connections (the node keeps running). */
  async close(): Promise<void> {
    await this.pool.close();
    this.board?.close();
  }
}
