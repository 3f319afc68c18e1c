/**
 * DuckDB's `threads`: one for the work in the background (the monitors' lane and the loader's
 * loads), the API's count for the API's reads. It is the instance's setting (no per-connection or
 * per-statement one exists in DuckDB 1.5), and DuckDB fixes how many tasks a pipeline runs when it
 * schedules it, so a read runs with the count set when it started: a switch in the middle of a
 * read does not reach it (a group-by switched from 1 to 2 threads after it started runs as slowly
 * as at 1).
 *
 * - Background work sets 1 before it starts, unless an API read is in flight. With 2, a statement
 *   runs on its caller's thread and DuckDB's background thread: a lane statement took both cores
 *   of a 2-core machine from the event loop that answers HTTP (a media list never touches DuckDB),
 *   and the caller's thread spent CPU polling DuckDB's task queue for the other (a load's COMMIT:
 *   3.5 ms of CPU at 1 thread against 8.4 at 2).
 * - An API read sets the API's count before it starts, so a long scan is not left on one thread
 *   because a load or an evaluation ran before it. The lane's statement in flight has stood aside
 *   (MonitorLane.api); a load goes on beside it with the API's count.
 * - With no background work for `idleMs` the API's count comes back, so an idle server's next read
 *   does not wait for a switch.
 *
 * A switch stops or starts DuckDB's threads: 0.2–0.5 ms, a few ms now and then (measured).
 * Switches run one at a time, in order, and a failed one is left (the setting is a matter of
 * speed, never of answers).
 */
export class ThreadSwitch {
  private current: number;
  private chain: Promise<void> = Promise.resolve();
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private apiReads = 0;
  private backgroundWork = 0;
  /** Switches made (for benches and tests). */
  switches = 0;

  constructor(
    private readonly set: (threads: number) => Promise<void>,
    private readonly apiThreads: number,
    private readonly backgroundThreads = 1,
    private readonly idleMs = 5_000,
  ) {
    this.current = apiThreads;
  }

  /** Runs an API read with the API's count. */
  async api<T>(read: () => Promise<T>): Promise<T> {
    this.apiReads++;
    try {
      await this.to(this.apiThreads);
      return await read();
    } finally {
      this.apiReads--;
    }
  }

  /** Runs background work (a lane statement, a load) with the background's count unless an API read is in flight. */
  async background<T>(work: () => T | Promise<T>): Promise<T> {
    this.backgroundWork++;
    clearTimeout(this.idleTimer);
    try {
      if (this.apiReads === 0) await this.to(this.backgroundThreads);
      return await work();
    } finally {
      if (--this.backgroundWork === 0) this.idle();
    }
  }

  /** No background work: the API's count again if it stays so for idleMs. */
  private idle(): void {
    if (this.current === this.apiThreads || this.closed) return;
    this.idleTimer = setTimeout(() => {
      if (this.backgroundWork === 0) void this.to(this.apiThreads);
    }, this.idleMs);
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
