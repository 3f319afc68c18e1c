import type { StoredEvent } from '../shared/event-record.js';
import type { EventPredicate } from '../soql/index.js';
import type { Tenant } from '../tenancy/tenant.js';
import { advance, copyPosition, covers, encodePosition, type TailPosition } from '../engine/tail-position.js';
import { eventFrame, heartbeatFrame, SseStream, type EndReason } from './sse.js';

/** A batch the tenant's feed read once and hands to each of its sessions. */
export interface FeedBatch {
  /** Oldest first. Written to a session as one write per `batchSize` of them. */
  events: readonly StoredEvent[];
  /** Names of the tenant's active datasets when the batch was read (archived ones are left out). */
  activeDatasets: ReadonlySet<string>;
  /** The JSON of an event, serialised once per batch however many sessions match it. */
  json(event: StoredEvent): string;
}

export interface SessionTimings {
  heartbeatMs: number;
  idleTimeoutMs: number;
  /** Events per write (SPEC: up to 200 per batch). */
  batchSize: number;
  /** Events of the feed's batches a session catching up may hold (hold()); past it it lets them go and reads them. */
  maxHeldEvents: number;
}

/**
 * One open live-tail stream. `cursor` is the position of the last event this session has looked
 * at (per log, tail-position.ts): a batch only contributes events it does not cover, so the
 * catch-up read and the shared feed can overlap without repeating an event.
 */
export class TailSession {
  readonly cursor: { logs: Record<string, number>; since: number };
  private readonly heartbeat: NodeJS.Timeout;
  private readonly idle: NodeJS.Timeout;
  /** The feed's batches kept while the session catches up with its own reads (hold), oldest first. */
  private held: FeedBatch[] | undefined;
  private heldEvents = 0;
  /** Set when the held batches outgrew their bound and were let go: the catch-up must read past them. */
  overflowed = false;

  constructor(
    readonly tenant: Tenant,
    private readonly predicate: EventPredicate,
    after: TailPosition,
    readonly stream: SseStream,
    private readonly timings: SessionTimings,
  ) {
    this.cursor = copyPosition(after);
    this.heartbeat = setInterval(() => this.stream.write(heartbeatFrame), timings.heartbeatMs);
    // Only a matching event resets it (DECISIONS §11): heartbeats do not keep a session alive.
    this.idle = setTimeout(
      () => this.stream.end('idle', `closed: no matching event for ${timings.idleTimeoutMs} ms`),
      timings.idleTimeoutMs,
    );
  }

  get isOpen(): boolean {
    return this.stream.isOpen;
  }

  /** A batch of the tenant's feed: written now, or kept while the session catches up (hold). */
  deliver(batch: FeedBatch): void {
    if (!this.held) return this.write(batch);
    if (this.overflowed) return;
    this.heldEvents += batch.events.length;
    if (this.heldEvents > this.timings.maxHeldEvents) {
      this.held = [];
      this.heldEvents = 0;
      this.overflowed = true;
      return;
    }
    this.held.push(batch);
  }

  /**
   * Writes the batch's events after the cursor that match, one write per `batchSize` of the
   * batch's events (a session's own catch-up reads; the feed's batches through deliver).
   */
  write(batch: FeedBatch): void {
    const { batchSize } = this.timings;
    for (let start = 0; start < batch.events.length && this.stream.isOpen; start += batchSize) {
      let frames = '';
      const end = Math.min(batch.events.length, start + batchSize);
      for (let i = start; i < end; i++) {
        const event = batch.events[i]!;
        if (covers(this.cursor, event)) continue;
        advance(this.cursor, event);
        if (!batch.activeDatasets.has(event.dataset) || !this.predicate(event)) continue;
        frames += eventFrame(encodePosition(this.cursor), batch.json(event));
      }
      if (frames && this.stream.write(frames)) this.idle.refresh();
    }
  }

  /**
   * From now on the feed's batches are kept, not written, until release(). Called again after
   * an overflow, it starts keeping afresh: what was let go comes from the session's own reads.
   */
  hold(): void {
    this.held = [];
    this.heldEvents = 0;
    this.overflowed = false;
  }

  /** Writes the kept batches (what the cursor covers by now is skipped) and takes the feed's as they come. */
  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    this.heldEvents = 0;
    for (const batch of held) this.write(batch);
  }

  /** Stops the timers; called once the stream has ended, whatever ended it. */
  dispose(): void {
    clearInterval(this.heartbeat);
    clearTimeout(this.idle);
  }

  end(reason: EndReason, comment: string): void {
    this.stream.end(reason, comment);
  }
}
