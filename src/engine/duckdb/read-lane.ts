import type { DuckDBConnection } from '@duckdb/node-api';

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
 * of it (docs/benchmarks.md "Session 22").
 */
export class MonitorLane {
  private queue: Promise<unknown> = Promise.resolve();
  private connection: DuckDBConnection | undefined;
  private apiReads = 0;
  private readonly waiting = new Set<() => void>();
  private closed = false;
  /** Statements queued or running. */
  private pending = 0;
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
    // A read still running after longReadMs gets the API's threads back (a switch takes effect
    // for the statement's tasks still to run); a short one is not worth the switch.
    const threads = this.options.threads;
    const long = threads ? setTimeout(() => void threads.forApi(), threads.longReadMs) : undefined;
    try {
      return await read();
    } finally {
      clearTimeout(long);
      if (--this.apiReads === 0) for (const wake of [...this.waiting]) wake();
    }
  }

  /** Runs one of the lane's statements on its connection, after the ones queued before it. */
  run<T>(statement: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    this.pending++;
    const next = this.queue.then(async () => {
      try {
        return await this.runNow(statement);
      } finally {
        if (--this.pending === 0) this.options.threads?.laneIdle();
      }
    });
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
      try {
        // The lane's threads only when it has DuckDB to itself (past the wait bound it runs with
        // the API's); an API read that comes during the switch is waited for like one before it.
        if (this.apiReads === 0) await this.options.threads?.forLane();
        if (this.interrupted) throw interruptedBeforeStart;
        return await statement(connection);
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

/**
 * DuckDB's `threads` while the monitors' lane works. It is the instance's setting (no
 * per-connection or per-statement one exists in DuckDB 1.5), and with 2 a statement runs on its
 * caller's thread and DuckDB's background thread: a lane statement took both cores of a 2-core
 * machine and the event loop that answers HTTP (a media list never touches DuckDB) waited its
 * turn, and DuckDB's threads spent CPU polling its task queue for each other. So the lane sets
 * `threads` to 1 before a statement, and it stays so while the lane works; an idle lane
 * (`idleMs`, 5 s) gives the API's count back. An API read then runs on its own thread beside the
 * event loop (the lane's statement has stood aside, read-lane.ts MonitorLane.api); one still
 * running after `longReadMs` (50 ms: a long scan) gets the API's count back for the tasks it
 * still has. Switching on every API read instead, and the same without the interrupt, were
 * measured worse (docs/benchmarks.md "Session 22"); a switch stops and starts DuckDB's threads
 * (~1–1.5 ms). Switches run one at a time, in order, and a failed one is left (the setting is a
 * matter of speed, never of answers).
 */
export class ThreadSwitch {
  private current: number;
  private chain: Promise<void> = Promise.resolve();
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Switches made (for benches and tests). */
  switches = 0;

  constructor(
    private readonly set: (threads: number) => Promise<void>,
    private readonly apiThreads: number,
    private readonly laneThreads = 1,
    private readonly idleMs = 5_000,
    readonly longReadMs = 50,
  ) {
    this.current = apiThreads;
  }

  /** The API's count again. */
  forApi(): Promise<void> {
    return this.to(this.apiThreads);
  }

  /** The lane's count, before one of its statements. */
  forLane(): Promise<void> {
    clearTimeout(this.idleTimer);
    return this.to(this.laneThreads);
  }

  /** The lane has nothing queued: the API's count again if it stays so for idleMs. */
  laneIdle(): void {
    clearTimeout(this.idleTimer);
    if (this.current === this.apiThreads || this.closed) return;
    this.idleTimer = setTimeout(() => void this.to(this.apiThreads), this.idleMs);
    this.idleTimer.unref();
  }

  private to(threads: number): Promise<void> {
    if (this.current === threads || this.closed) return this.chain;
    this.current = threads;
    this.switches++;
    this.chain = this.chain.then(() => this.set(threads)).catch(() => undefined);
    return this.chain;
  }

  /** After the switches queued so far; none after. */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    this.closed = true;
    await this.chain;
  }
}
