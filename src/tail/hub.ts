import type { ServerResponse } from 'node:http';
import { matchAll, type EventStore } from '../engine/event-store.js';
import type { StoredEvent } from '../engine/event-record.js';
import type { EventPredicate } from '../query/soql/index.js';
import { apiEventJson } from '../query/event-shape.js';
import { tenantKey, type Tenant } from '../tenancy/tenant.js';
import { SseStream } from './sse.js';
import { advanced, copyPosition, reaches, singleSeq, type TailPosition } from '../engine/tail-position.js';
import { TailSession, type FeedBatch } from './session.js';

/**
 * Live tail's fan-out. Each tenant with open sessions has one feed: one read of the store per
 * wake-up (the events after its position, tail-position.ts; at most `batchSize`, oldest first) whose batch every session
 * of the tenant filters in memory with its compiled SOQL predicate. An ingest in this process,
 * or in another one (its wake-up arrives over the bus, src/cluster), wakes the feed at once; a
 * timer every `pollMs` is the fallback that picks up whatever a lost wake-up announced (the
 * store, not the hint, is the source of truth).
 *
 * A new or resumed session first catches up with its own reads until it reaches the feed's
 * cursor, then joins the feed; each session skips events at or before its own cursor, so the
 * hand-over neither loses nor repeats an event.
 */

export interface TailHubOptions {
  store: Pick<EventStore, 'readAfter'>;
  /** Names of the tenant's active datasets (events of archived ones are never sent). */
  activeDatasets: (tenant: Tenant) => Promise<ReadonlySet<string>>;
  pollMs: number;
  heartbeatMs: number;
  idleTimeoutMs: number;
  /** Sessions per token in this process (SPEC: 3). */
  maxSessionsPerToken: number;
  /** Events per read (SPEC: 200). */
  batchSize: number;
  maxBufferedBytes: number;
  flushGraceMs: number;
  log: (message: string, error: unknown) => void;
}

export const defaultHubLimits = {
  maxSessionsPerToken: 3,
  batchSize: 200,
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
  private running = false;
  private again = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly hub: TailHub,
    private readonly tenant: Tenant,
    /** Position of the last event handed to the sessions; a read in flight starts after it. Replaced, never changed in place. */
    public cursor: TailPosition,
  ) {
    this.timer = setInterval(() => this.wake(), hub.options.pollMs);
    this.timer.unref();
  }

  wake(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    void this.run();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async run(): Promise<void> {
    this.running = true;
    const { store, batchSize } = this.hub.options;
    try {
      do {
        this.again = false;
        let full = false;
        do {
          const events = await store.readAfter(this.tenant, { after: this.cursor, filter: matchAll, limit: batchSize });
          if (events.length === 0) break;
          full = events.length >= batchSize;
          const batch = await this.hub.batch(this.tenant, events);
          // No await between delivering and moving the cursor: a session that joins later
          // starts exactly where this batch ended.
          for (const session of this.sessions) session.deliver(batch);
          this.cursor = advanced(this.cursor, events);
        } while (full && this.sessions.size > 0);
      } while (this.again && this.sessions.size > 0);
    } catch (error) {
      this.hub.options.log('live tail read failed; retrying at the next poll', error);
    } finally {
      this.running = false;
    }
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
    const session = new TailSession(tenant, request.predicate, request.after, stream, this.options);
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

  /** Reads the batch's active dataset names once and serialises each event at most once. */
  async batch(tenant: Tenant, events: readonly StoredEvent[]): Promise<FeedBatch> {
    const activeDatasets = await this.options.activeDatasets(tenant);
    const cache = new Map<StoredEvent, string>();
    return {
      events,
      activeDatasets,
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

  /** Catches the session up with its own reads, then hands it to the tenant's feed. */
  private async attach(session: TailSession): Promise<void> {
    const key = tenantKey(session.tenant);
    const { store, batchSize } = this.options;
    for (;;) {
      if (!session.isOpen || this.closing) return;
      const feed = this.feeds.get(key);
      if (!feed || reaches(session.cursor, feed.cursor)) {
        // Synchronous from the check to the add: the feed cannot move in between.
        this.join(key, session, feed);
        return;
      }
      const target = feed.cursor;
      const events = await store.readAfter(session.tenant, { after: copyPosition(session.cursor), filter: matchAll, limit: batchSize });
      if (events.length === 0) {
        // Nothing after the session's cursor although the feed is further on: the events in
        // between were deleted (retention). Join, unless the feed moved while we read.
        if (this.feeds.get(key) === feed && feed.cursor === target && session.isOpen && !this.closing) {
          this.join(key, session, feed);
          return;
        }
        continue;
      }
      session.deliver(await this.batch(session.tenant, events));
    }
  }

  private join(key: string, session: TailSession, feed: TenantFeed | undefined): void {
    if (!feed) {
      feed = new TenantFeed(this, session.tenant, copyPosition(session.cursor));
      this.feeds.set(key, feed);
      feed.sessions.add(session);
      // Events may have arrived between the session's start position and now.
      feed.wake();
      return;
    }
    feed.sessions.add(session);
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
