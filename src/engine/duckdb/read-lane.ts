import type { DuckDBConnection } from '@duckdb/node-api';
import type { ThreadSwitch } from './thread-switch.js';

/**
 * The monitor evaluations' lane into DuckDB (docs/monitors.md "Beside the API"). Threshold
 * evaluations run 1,000 statements a minute (100 of the bench's monitors scan 24 h); run as API
 * reads are, on a connection each and at once, they ran beside every API read and a burst of
 * them could start while one was in flight. Here they run one at a time, on one connection of
 * their own that stays open, and each starts only when no API read is in flight, or after
 * `maxWaitMs` of waiting for that, so a steady API load delays an evaluation by at most that
 * and never starves it.
 *
 * An API read never waits for the lane, and while the yield budget lasts it does not run beside
 * it either: one that starts while a lane statement runs interrupts that statement (DuckDB stops
 * it within a millisecond or two, measured), and the statement runs again from the start once
 * the API's reads are done. Lane statements are reads, so a second run answers what the first
 * would have. What yielding may cost the lane is bounded twice: a statement yields at most
 * `maxYields` times, and the time the lane loses to yields (the interrupted runs and the waits
 * after them) comes from a budget that refills at `yieldShare` of the wall time (15%: 9 s of
 * every minute), so under an API that is never idle the lane's statements run to their end
 * beside it as they did before: a busy API slows the evaluations but never stops them. Without
 * the interrupt an API read that came during a 50 ms scan shared the cores with it for the rest
 * of it.
 */
export class MonitorLane {
  private queue: Promise<unknown> = Promise.resolve();
  private connection: DuckDBConnection | undefined;
  private apiReads = 0;
  private readonly waiting = new Set<() => void>();
  private closed = false;
  /** The lane's connection while a statement that may still yield runs on it. */
  private yieldable: DuckDBConnection | undefined;
  /** Set when an API read interrupted the statement in flight. */
  private interrupted = false;
  /** Statements run again after an API read interrupted them (for benches and tests). */
  yields = 0;
  /** Wall time (ms) the lane may still lose to yields, and when it was last refilled. */
  private budgetMs: number;
  private budgetAt = performance.now();

  constructor(
    private readonly connect: () => Promise<DuckDBConnection>,
    private readonly maxWaitMs = 25,
    private readonly options: { maxYields?: number; yieldShare?: number; maxBudgetMs?: number; threads?: ThreadSwitch } = {},
  ) {
    this.budgetMs = this.maxBudgetMs;
  }

  private get maxBudgetMs(): number {
    return this.options.maxBudgetMs ?? 5_000;
  }

  /** The yield budget now: refilled at yieldShare of the time since it was last looked at. */
  private budget(): number {
    const now = performance.now();
    this.budgetMs = Math.min(this.maxBudgetMs, this.budgetMs + (now - this.budgetAt) * (this.options.yieldShare ?? 0.15));
    this.budgetAt = now;
    return this.budgetMs;
  }

  /** Runs an API read, counted so that the lane's next statement waits for it to end. */
  async api<T>(read: () => Promise<T>): Promise<T> {
    this.apiReads++;
    if (this.yieldable && !this.interrupted) {
      this.interrupted = true;
      this.yieldable.interrupt();
    }
    const threads = this.options.threads;
    try {
      return await (threads ? threads.api(read) : read());
    } finally {
      if (--this.apiReads === 0) for (const wake of [...this.waiting]) wake();
    }
  }

  /** Runs one of the lane's statements on its connection, after the ones queued before it. */
  run<T>(statement: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    const next = this.queue.then(() => this.runNow(statement));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async runNow<T>(statement: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    let lostSince: number | undefined;
    for (let yields = 0; ; yields++) {
      // After a yield the wait is longer: the API read that interrupted is still running.
      await this.apiFirst(lostSince === undefined ? this.maxWaitMs : 4 * this.maxWaitMs);
      if (lostSince !== undefined) this.budgetMs -= performance.now() - lostSince;
      if (this.closed) throw new Error('event store closed');
      const connection = (this.connection ??= await this.connect());
      this.interrupted = false;
      this.yieldable = yields < (this.options.maxYields ?? 3) && this.budget() > 0 ? connection : undefined;
      const started = performance.now();
      // An API read that comes while the threads switch is waited for like one before it.
      const run = () => {
        if (this.interrupted) throw interruptedBeforeStart;
        return statement(connection);
      };
      const threads = this.options.threads;
      try {
        return await (threads ? threads.background(run) : run());
      } catch (error) {
        if (!this.interrupted || !isInterrupt(error)) throw error;
        this.yields++;
        lostSince = started;
      } finally {
        this.yieldable = undefined;
      }
    }
  }

  /** Resolves when no API read is in flight, or after waitMs. */
  private apiFirst(waitMs: number): Promise<void> {
    if (this.apiReads === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, waitMs);
      this.waiting.add(wake);
    });
  }

  /** After the statements queued so far; later ones fail as reads of a closed store do. */
  async close(): Promise<void> {
    this.closed = true;
    await this.queue;
    await this.options.threads?.close();
    this.connection?.closeSync();
    this.connection = undefined;
  }
}

/** DuckDB's error for a statement stopped by `connection.interrupt()`. */
const isInterrupt = (error: unknown) => error instanceof Error && /^INTERRUPT Error/.test(error.message);
const interruptedBeforeStart = new Error('INTERRUPT Error: an API read came before the statement started');
