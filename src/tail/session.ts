import type { StoredEvent } from '../engine/event-record.js';
import type { EventPredicate } from '../query/soql/index.js';
import type { Tenant } from '../tenancy/tenant.js';
import { advance, copyPosition, covers, encodePosition, type TailPosition } from '../engine/tail-position.js';
import { eventFrame, heartbeatFrame, SseStream, type EndReason } from './sse.js';

/** A batch the tenant's feed read once and hands to each of its sessions. */
export interface FeedBatch {
  /** Oldest first, at most the batch size. */
  events: readonly StoredEvent[];
  /** Names of the tenant's active datasets when the batch was read (archived ones are left out). */
  activeDatasets: ReadonlySet<string>;
  /** The JSON of an event, serialised once per batch however many sessions match it. */
  json(event: StoredEvent): string;
}

export interface SessionTimings {
  heartbeatMs: number;
  idleTimeoutMs: number;
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

  constructor(
    readonly tenant: Tenant,
    private readonly predicate: EventPredicate,
    after: TailPosition,
    readonly stream: SseStream,
    timings: SessionTimings,
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

  /** Writes the batch's events after the cursor that match, as one write. */
  deliver(batch: FeedBatch): void {
    if (!this.stream.isOpen) return;
    let frames = '';
    for (const event of batch.events) {
      if (covers(this.cursor, event)) continue;
      advance(this.cursor, event);
      if (!batch.activeDatasets.has(event.dataset) || !this.predicate(event)) continue;
      frames += eventFrame(encodePosition(this.cursor), batch.json(event));
    }
    if (frames && this.stream.write(frames)) this.idle.refresh();
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
