import type { DuckDBConnection } from '@duckdb/node-api';

/**
 * The monitor evaluations' lane into DuckDB (docs/monitors.md "Scheduler"). Threshold
 * evaluations run 1,000 statements a minute (100 of the bench's monitors scan 24 h); run as API
 * reads are, on a connection each and at once, they ran beside every API read and a burst of
 * them could start while one was in flight. Here they run one at a time, on one connection of
 * their own that stays open, and each starts only when no API read is in flight, or after
 * `maxWaitMs` of waiting for that, so a steady API load delays an evaluation by at most that
 * and never starves it. An API read never waits for the lane: it runs on its own connection,
 * in parallel (DuckDB runs each connection's statement on its caller's thread plus the shared
 * background threads).
 */
export class MonitorLane {
  private queue: Promise<unknown> = Promise.resolve();
  private connection: DuckDBConnection | undefined;
  private apiReads = 0;
  private readonly waiting = new Set<() => void>();
  private closed = false;

  constructor(
    private readonly connect: () => Promise<DuckDBConnection>,
    private readonly maxWaitMs = 25,
  ) {}

  /** Runs an API read, counted so that the lane's next statement waits for it to end. */
  async api<T>(read: () => Promise<T>): Promise<T> {
    this.apiReads++;
    try {
      return await read();
    } finally {
      if (--this.apiReads === 0) for (const wake of [...this.waiting]) wake();
    }
  }

  /** Runs one of the lane's statements on its connection, after the ones queued before it. */
  run<T>(statement: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    const next = this.queue.then(async () => {
      await this.apiFirst();
      if (this.closed) throw new Error('event store closed');
      this.connection ??= await this.connect();
      return statement(this.connection);
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Resolves when no API read is in flight, or after maxWaitMs. */
  private apiFirst(): Promise<void> {
    if (this.apiReads === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, this.maxWaitMs);
      this.waiting.add(wake);
    });
  }

  /** After the statements queued so far; later ones fail as reads of a closed store do. */
  async close(): Promise<void> {
    this.closed = true;
    await this.queue;
    this.connection?.closeSync();
    this.connection = undefined;
  }
}
