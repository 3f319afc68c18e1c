import type { ServerResponse } from 'node:http';
import { matchAll, type EventStore } from '../engine/event-store.js';
import type { StoredEvent } from '../shared/event-record.js';
import type { EventPredicate } from '../soql/index.js';
import { apiEventJson } from '../query/event-shape.js';
import { tenantKey, type Tenant } from '../tenancy/tenant.js';
import { SseStream } from './sse.js';
import { advanced, copyPosition, reaches, singleSeq, type TailPosition } from '../engine/tail-position.js';
import { lastSeqOf, recordEvents, type TailRecord } from '../engine/tail-record.js';
import { TailSession, type FeedBatch } from './session.js';

/**
 * Live tail's fan-out. Each tenant with open sessions has one feed, which takes the tenant's new
 * events, oldest first, and hands each batch to every session of the tenant; each session
 * filters it in memory with its compiled SOQL predicate. The feed's cursor (tail-position.ts)
 * is the position of the last event it handed on. Two ways in:
 *
 * - **Reads of the store** after the cursor (at most `readLimit` events each, again while full):
 *   on each wake-up without a record (an ingest here or, over the bus, in another process:
 *   src/cluster), on the poll every `pollMs` (the fallback for a lost wake-up: the store, not
 *   the hint, is the source of truth), and when a record cannot be used.
 * - **Records** (ClickHouse: relay.ts, engine/tail-record.ts): a write-ahead log record with its
 *   events, from this process's log when durable or another process's once loaded. A record
 *   that follows the cursor (its log known, and `prev` at or before the cursor's seq there) is
 *   handed on without reading ClickHouse; one that does not (a record between was lost, or it
 *   came without its events) makes the feed read the store, which holds every record it was
 *   given. At most `maxQueuedEvents` wait; past it the feed reads instead.
 *
 * A new or resumed session behind the feed catches up with its own reads while the feed's
 * batches are kept for it (bounded; past the bound it lets them go and reads on), then writes
 * those and takes the feed's as they come; each session skips events at or before its own
 * cursor, so the hand-over neither loses nor repeats an event.
 */

export interface TailHubOptions {
  store: Pick<EventStore, 'readAfter'>;
  /** The tenant's active datasets, id → name (events of archived ones are never sent). */
  activeDatasets: (tenant: Tenant) => Promise<ReadonlyMap<string, string>>;
  pollMs: number;
  heartbeatMs: number;
  idleTimeoutMs: number;
  /** Sessions per token in this process (SPEC: 3). */
  maxSessionsPerToken: number;
  /** Events per write to a session (SPEC: up to 200 per batch). */
  batchSize: number;
  /** Events per read of the store, the feed's and a catching-up session's. */
  readLimit: number;
  /** Events of records a feed may have waiting, and of the feed's batches a catching-up session may keep. */
  maxQueuedEvents: number;
  maxBufferedBytes: number;
  flushGraceMs: number;
  log: (message: string, error: unknown) => void;
  /** A tenant got a feed in this process (relay.ts tells the other processes). */
  onFeedOpened?: (tenant: Tenant) => void;
}

export const defaultHubLimits = {
  maxSessionsPerToken: 3,
  batchSize: 200,
  readLimit: 200,
  maxQueuedEvents: 20_000,
  maxBufferedBytes: 1024 * 1024,
  flushGraceMs: 2_000,
} as const;

/** A reserved session slot; releasing twice is harmless. */
export interface Slot {
  release(): void;
}

export interface OpenSession {
  tenant: Tenant;
  predicate: EventPredicate;
  /** Deliver the events this position does not cover. */
  after: TailPosition;
  /** The response, its head already written. */
  res: ServerResponse;
  slot: Slot;
}

class TenantFeed {
  readonly sessions = new Set<TailSession>();
  /** The store must be read: the feed is new, a wake-up without a record, the poll, a record it could not use. */
  private readNeeded = true;
  private reading = false;
  /** Records waiting, in the order they came, and whether a batch of them is being handed on. */
  private queue: TailRecord[] = [];
  private queuedEvents = 0;
  private handing = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly hub: TailHub,
    readonly tenant: Tenant,
    /** Position of the last event handed to the sessions. Replaced, never changed in place; it only moves forward. */
    public cursor: TailPosition,
  ) {
    this.timer = setInterval(() => this.wake(), hub.options.pollMs);
    this.timer.unref();
  }

  /** Reads the store now (or after the read in flight). */
  wake(): void {
    this.readNeeded = true;
    if (!this.reading) void this.read();
  }

  /** A record of the tenant: handed on from memory when it follows the cursor, else read. */
  offer(record: TailRecord): void {
    const at = this.cursor.logs[record.log];
    if (at !== undefined && lastSeqOf(record) <= at) return;
    if (this.queuedEvents + record.count > this.hub.options.maxQueuedEvents) {
      // Every record given to a feed is in the store by its next read (relay.ts).
      this.queue = [];
      this.queuedEvents = 0;
      this.wake();
      return;
    }
    this.queue.push(record);
    this.queuedEvents += record.count;
    if (!this.handing) void this.hand();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * Reads after the cursor until a read comes back short. Runs beside hand(): a read waits for
   * the loader and ClickHouse, and records keep coming meanwhile. Either may hand on an event
   * the other did (sessions skip what their cursor covers); neither skips one, because a
   * record is used only when it follows the cursor, which only moves forward.
   */
  private async read(): Promise<void> {
    this.reading = true;
    const { store, readLimit } = this.hub.options;
    try {
      while (this.readNeeded && this.sessions.size > 0) {
        this.readNeeded = false;
        let events: StoredEvent[];
        do {
          events = await store.readAfter(this.tenant, { after: this.cursor, filter: matchAll, limit: readLimit });
          if (events.length) await this.send(events, true);
        } while (events.length >= readLimit && this.sessions.size > 0);
      }
    } catch (error) {
      this.hub.options.log('live tail read failed; retrying at the next poll', error);
    } finally {
      this.reading = false;
    }
  }

  /** Hands on the waiting records' events, one batch at a time (in the order the records came). */
  private async hand(): Promise<void> {
    this.handing = true;
    try {
      while (this.queue.length && this.sessions.size > 0) {
        const records = this.queue;
        this.queue = [];
        this.queuedEvents = 0;
        const events = this.fromRecords(records);
        if (events.length) await this.send(events, false);
      }
    } catch (error) {
      this.hub.options.log('live tail could not hand on a record; reading the store instead', error);
      this.wake();
    } finally {
      this.handing = false;
    }
  }

  /**
   * The events of the records that follow the cursor, in order (dataset ids in `dataset`). From
   * a log's first record that does not follow it, or carries no events, that log's records are
   * left to a read (the store holds them); the other logs' go on.
   */
  private fromRecords(records: readonly TailRecord[]): StoredEvent[] {
    const at: Record<string, number> = { ...this.cursor.logs };
    const events: StoredEvent[] = [];
    const toRead = new Set<string>();
    for (const record of records) {
      if (toRead.has(record.log)) continue;
      // A log the cursor does not know counts from a time (tail-position.ts `since`), which each
      // session applies to the events it is given: from memory only when the record holds the
      // tenant's first events in the log (`prev` 0), else the store's business.
      const seen = at[record.log] ?? (record.prev === 0 ? 0 : undefined);
      if (seen !== undefined && lastSeqOf(record) <= seen) continue;
      if (seen === undefined || record.prev > seen || !record.body) {
        toRead.add(record.log);
        continue;
      }
      const before = events.length;
      try {
        recordEvents(record.body, record.firstSeq, record.log, seen, Infinity, events);
      } catch (error) {
        events.length = before;
        this.hub.options.log('a live tail record could not be decoded; reading the store instead', error);
        toRead.add(record.log);
        continue;
      }
      at[record.log] = lastSeqOf(record);
    }
    if (toRead.size) this.wake();
    return events;
  }

  /** Hands a batch to every session and moves the cursor past it. */
  private async send(events: StoredEvent[], named: boolean): Promise<void> {
    const batch = await this.hub.batch(this.tenant, events, named);
    // No await between delivering and moving the cursor: a session that joins later starts
    // exactly where this batch ended.
    for (const session of this.sessions) session.deliver(batch);
    this.cursor = advanced(this.cursor, events);
  }
}

export class TailHub {
  private readonly feeds = new Map<string, TenantFeed>();
  private readonly slots = new Map<string, number>();
  private readonly sessions = new Set<TailSession>();
  private closing = false;

  constructor(readonly options: TailHubOptions) {}

  /** Open sessions in this process (tests, bench). */
  get size(): number {
    return this.sessions.size;
  }

  /** Takes one of the token's slots, or undefined when all are in use (→ 429). */
  reserve(tokenId: string): Slot | undefined {
    const used = this.slots.get(tokenId) ?? 0;
    if (used >= this.options.maxSessionsPerToken || this.closing) return undefined;
    this.slots.set(tokenId, used + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const left = (this.slots.get(tokenId) ?? 1) - 1;
        if (left > 0) this.slots.set(tokenId, left);
        else this.slots.delete(tokenId);
      },
    };
  }

  /** Starts streaming on a response whose head is written; the slot is released when it ends. */
  open(request: OpenSession): TailSession {
    const { tenant, res, slot } = request;
    const stream = new SseStream(res, {
      maxBufferedBytes: this.options.maxBufferedBytes,
      flushGraceMs: this.options.flushGraceMs,
      // Runs on a later event (close, drop, timer), after `session` below is set. The moment the
      // stream ends, however it ended, the slot is free again.
      onEnd: () => {
        slot.release();
        this.detach(session);
      },
    });
    const { heartbeatMs, idleTimeoutMs, batchSize, maxQueuedEvents } = this.options;
    const session = new TailSession(tenant, request.predicate, request.after, stream, { heartbeatMs, idleTimeoutMs, batchSize, maxHeldEvents: maxQueuedEvents });
    this.sessions.add(session);
    if (res.destroyed || !res.socket || res.socket.destroyed) {
      stream.destroy();
      return session;
    }
    this.attach(session).catch((error: unknown) => {
      this.options.log('live tail catch-up failed', error);
      session.end('error', 'closed: the stream failed; reconnect with Last-Event-ID to resume');
    });
    return session;
  }

  /**
   * The ingest hint: the tenant has new events, up to `lastSeq` when known. From this process
   * or, through the bus, another: a feed of the single log already past `lastSeq` has read them
   * and skips the read (on ClickHouse a seq is one log's, so every hint reads). Only a hint
   * either way: the feed reads from its own cursor, and polls every `pollMs`.
   */
  wake(tenant: Tenant, lastSeq?: number): void {
    const feed = this.feeds.get(tenantKey(tenant));
    const read = feed && singleSeq(feed.cursor);
    if (!feed || (lastSeq !== undefined && read !== undefined && read >= lastSeq)) return;
    feed.wake();
  }

  /** A write-ahead log record (relay.ts): the tenant's feed hands its events on, or reads. */
  offer(record: TailRecord): void {
    this.feeds.get(tenantKey(record.tenant))?.offer(record);
  }

  /** True when the tenant has a feed here (its records are wanted). */
  has(tenant: Tenant): boolean {
    return this.feeds.has(tenantKey(tenant));
  }

  /** The tenants with a feed here. */
  tenants(): Tenant[] {
    return [...this.feeds.values()].map((feed) => feed.tenant);
  }

  /**
   * Reads the tenant's active datasets once for the batch and serialises each event at most
   * once. `named` false: the events carry dataset ids (a record's), named here; an id that is
   * not active gets the empty name, which no active dataset has.
   */
  async batch(tenant: Tenant, events: readonly StoredEvent[], named = true): Promise<FeedBatch> {
    const active = await this.options.activeDatasets(tenant);
    if (!named) for (const event of events) event.dataset = active.get(event.dataset) ?? '';
    const cache = new Map<StoredEvent, string>();
    return {
      events,
      activeDatasets: new Set(active.values()),
      json: (event) => {
        let json = cache.get(event);
        if (json === undefined) cache.set(event, (json = apiEventJson(event, tenant, { includeTenant: false })));
        return json;
      },
    };
  }

  /** Shutdown: every stream ends with a final comment; those that cannot flush in time are cut. */
  async close(): Promise<void> {
    this.closing = true;
    for (const feed of this.feeds.values()) feed.stop();
    this.feeds.clear();
    const streams = [...this.sessions].map((s) => s.stream);
    for (const session of [...this.sessions]) {
      session.end('shutdown', 'closed: the server is shutting down; reconnect with Last-Event-ID to resume');
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(streams.map((s) => s.settled())),
      new Promise((resolve) => (timer = setTimeout(resolve, this.options.flushGraceMs))),
    ]);
    clearTimeout(timer);
    for (const stream of streams) stream.destroy();
  }

  /**
   * Hands the session to the tenant's feed: at once when it is not behind the feed (a new feed
   * starts at the session's cursor). Else the feed's batches are kept for it while it reads the
   * store from its cursor until a read comes back short — everything the feed had handed on
   * when the keeping began was in the store before that read began — then the kept batches are
   * written and the session takes the feed's as they come.
   */
  private async attach(session: TailSession): Promise<void> {
    if (!session.isOpen || this.closing) return;
    const { store, readLimit } = this.options;
    const key = tenantKey(session.tenant);
    const feed = this.feeds.get(key);
    if (!feed) {
      const created = new TenantFeed(this, session.tenant, copyPosition(session.cursor));
      this.feeds.set(key, created);
      created.sessions.add(session);
      this.options.onFeedOpened?.(session.tenant);
      // Events may have arrived between the session's start position and now.
      created.wake();
      return;
    }
    // Synchronous from the check to the add: the feed cannot move in between.
    if (reaches(session.cursor, feed.cursor)) {
      feed.sessions.add(session);
      return;
    }
    session.hold();
    feed.sessions.add(session);
    for (;;) {
      const events = await store.readAfter(session.tenant, { after: copyPosition(session.cursor), filter: matchAll, limit: readLimit });
      if (!session.isOpen || this.closing) return;
      if (events.length) session.write(await this.batch(session.tenant, events));
      if (session.overflowed) {
        // The kept batches were let go: keep afresh, and read past where they ended.
        session.hold();
        continue;
      }
      if (events.length < readLimit) break;
    }
    session.release();
  }

  private detach(session: TailSession): void {
    session.dispose();
    this.sessions.delete(session);
    const key = tenantKey(session.tenant);
    const feed = this.feeds.get(key);
    if (!feed) return;
    feed.sessions.delete(session);
    if (feed.sessions.size === 0) {
      feed.stop();
      this.feeds.delete(key);
    }
  }
}
