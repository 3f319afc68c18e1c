import crypto from 'node:crypto';
import os from 'node:os';
import { iso, type Clock } from '../shared/clock.js';
import type { Logger } from '../kernel/logger.js';
import type { Outbox } from './outbox.js';
import type { NotificationFacts } from './notification.js';
import type { NotificationsTable } from './tables.js';
import { renderRequest } from './render.js';
import type { AttemptAnswer } from './send.js';
import { outcomeOf } from './outcome.js';

/** One POST of a rendered body within `timeoutMs`, never throwing (send.ts's postOnce through the guarded dispatcher). */
export type Send = (target: { url: string; body: string; headers: Record<string, string> }, timeoutMs: number, stopping: AbortSignal) => Promise<AttemptAnswer>;

export interface WorkerTimings {
  /** One attempt's whole exchange (DECISIONS.md §18: 10 s); tests shrink it. */
  timeoutMs: number;
  /** Between two looks at the outbox when nothing woke the worker: other processes' rows go out within it. */
  pollMs: number;
  /** The first retry's wait; each further one doubles it. */
  backoffBaseMs: number;
}

export const defaultTimings: WorkerTimings = { timeoutMs: 10_000, pollMs: 1_000, backoffBaseMs: 1_000 };

/** Rows claimed per look, and channels served at once (each channel's rows go one after another). */
const batch = 32;
const parallelChannels = 8;

/**
 * The delivery worker every API process runs: it claims due outbox rows with a lease (so each
 * notification is sent by one process at a time, and a dead holder's rows go out once its lease
 * ends), sends each through the guarded dispatcher and stores the attempt. Woken at once by an
 * enqueue in this process and by its own scheduled retries, it also looks every `pollMs` for
 * rows other processes stored.
 */
export class DeliveryWorker {
  private readonly owner = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  private readonly stopping = new AbortController();
  private readonly timers = new Set<NodeJS.Timeout>();
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private running: Promise<void> | undefined;

  constructor(
    private readonly outbox: Outbox,
    private readonly send: Send,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly timings: WorkerTimings,
  ) {}

  /** A lease outlasts any attempt (bounded by timeoutMs) with room for storing its result. */
  private get leaseMs(): number {
    return this.timings.timeoutMs + 5_000;
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** Interrupts attempts in flight (their rows are given back, not counted) and waits for the loop to end. */
  async stop(): Promise<void> {
    this.stopping.abort();
    for (const timer of this.timers) clearTimeout(timer);
    this.wake();
    await this.running;
  }

  /** Look at the outbox now (a notification was just stored, or a retry is due). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  private wakeAt(at: string): void {
    const delay = Date.parse(at) - this.clock.now();
    if (this.stopping.signal.aborted || delay >= this.timings.pollMs) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.wake();
    }, Math.max(0, delay));
    timer.unref();
    this.timers.add(timer);
  }

  private async loop(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      this.woken = false;
      let claimed = 0;
      try {
        claimed = await this.round();
      } catch (error) {
        this.log.error({ err: error }, 'notifications: the delivery worker could not read the outbox; it tries again');
      }
      if (claimed === 0 && !this.woken && !this.stopping.signal.aborted) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.timings.pollMs);
          this.wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wakeUp = undefined;
      }
    }
  }

  /** Claims what is due and sends it; the number of rows claimed. */
  private async round(): Promise<number> {
    const now = this.clock.now();
    const ids = await this.outbox.due(iso(now), batch);
    const claimed: NotificationsTable[] = [];
    for (const id of ids) {
      const row = await this.outbox.claim(id, this.owner, iso(now), iso(now + this.leaseMs));
      if (row) claimed.push(row);
    }
    const byChannel = new Map<string, NotificationsTable[]>();
    for (const row of claimed) byChannel.set(row.channel_id, [...(byChannel.get(row.channel_id) ?? []), row]);
    const queues = [...byChannel.values()];
    const lanes = Array.from({ length: Math.min(parallelChannels, queues.length) }, async () => {
      for (let rows = queues.shift(); rows; rows = queues.shift()) {
        for (const row of rows) await this.deliver(row).catch((error: unknown) => this.failedToStore(row, error));
      }
    });
    await Promise.all(lanes);
    return claimed.length;
  }

  private failedToStore(row: NotificationsTable, error: unknown): void {
    // The row keeps its lease until it ends, then is sent again: at least once, never dropped.
    this.log.error({ err: error, delivery_id: row.id }, 'notifications: an attempt could not be stored; the notification is sent again when its lease ends');
  }

  private async deliver(row: NotificationsTable): Promise<void> {
    const nowIso = iso(this.clock.now());
    if (this.stopping.signal.aborted) return this.outbox.release(row.id, this.owner, row.next_attempt_at, nowIso);
    const channel = await this.outbox.channelOf(row);
    if (!channel) return this.outbox.abandon(row, this.owner, 'the channel was deleted', nowIso);
    if (channel.enabled !== 1) return this.outbox.abandon(row, this.owner, `the channel is disabled: ${channel.disabled_reason ?? ''}`.trim(), nowIso);
    if (channel.not_before && channel.not_before > nowIso) {
      // The receiver asked for a pause: no request before it ends, and no attempt counted.
      await this.outbox.release(row.id, this.owner, channel.not_before, nowIso);
      return this.wakeAt(channel.not_before);
    }
    const facts = JSON.parse(row.facts) as NotificationFacts;
    const request = renderRequest(channel, facts, row.id, Math.floor(this.clock.now() / 1000));
    const answer = await this.send({ url: channel.url, ...request }, this.timings.timeoutMs, this.stopping.signal);
    if (answer.interrupted) return this.outbox.release(row.id, this.owner, row.next_attempt_at, iso(this.clock.now()));
    const now = this.clock.now();
    const outcome = outcomeOf(row, answer, now, this.timings.backoffBaseMs);
    const { disabled } = await this.outbox.record(row, this.owner, outcome, iso(now));
    if (disabled) this.log.warn({ channel_id: channel.id, org_id: row.org_id }, 'notifications: a channel failed 20 deliveries in a row and is disabled');
    if (outcome.row.state === 'pending') this.wakeAt(outcome.row.next_attempt_at);
    if (outcome.channelNotBefore) this.wakeAt(outcome.channelNotBefore);
  }
}
