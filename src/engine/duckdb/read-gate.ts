import { EventStoreResourceError } from '../event-store.js';

/** DuckDB's error for the memory limit, and for a spill directory that is full. */
export function isOutOfMemory(error: unknown): boolean {
  return error instanceof Error && /Out of Memory Error/i.test(error.message);
}

interface SharedRun {
  /** Another read ran at some moment of this one. */
  overlapped: boolean;
}

/**
 * Reads share one DuckDB memory limit, so one read that takes it all makes its neighbours'
 * allocations fail too. Reads run side by side ("shared"); a read that runs out of memory
 * while another ran is retried once with the engine to itself ("exclusive": running reads
 * finish first, new ones wait). A neighbour that only suffered succeeds then; a read that runs
 * out of memory alone (first time or on its retry) is too big by itself:
 * EventStoreResourceError, for the caller to answer as such. Exclusive retries run one at a time.
 */
export class ReadGate {
  private readonly active = new Set<SharedRun>();
  private exclusiveRunning = false;
  private readonly exclusiveQueue: Array<() => void> = [];
  private sharedWaiters: Array<() => void> = [];

  async run<T>(read: () => Promise<T>): Promise<T> {
    const run: SharedRun = { overlapped: false };
    await this.enterShared(run);
    let failure: unknown;
    try {
      return await read();
    } catch (error) {
      if (!isOutOfMemory(error)) throw error;
      failure = error;
    } finally {
      this.leaveShared(run);
    }
    if (!run.overlapped) throw new EventStoreResourceError(failure);
    await this.enterExclusive();
    try {
      return await read();
    } catch (error) {
      throw isOutOfMemory(error) ? new EventStoreResourceError(error) : error;
    } finally {
      this.leaveExclusive();
    }
  }

  /**
   * Runs `task` with no read running and new reads waiting until it ends, or not at all (undefined)
   * when a read runs or waits now: for work that a read's allocation beside it could make fail.
   */
  async whenIdle<T>(task: () => Promise<T>): Promise<T | undefined> {
    if (this.exclusiveRunning || this.active.size > 0 || this.exclusiveQueue.length > 0) return undefined;
    this.exclusiveRunning = true;
    try {
      return await task();
    } finally {
      this.leaveExclusive();
    }
  }

  private async enterShared(run: SharedRun): Promise<void> {
    while (this.exclusiveRunning || this.exclusiveQueue.length > 0) {
      await new Promise<void>((resolve) => this.sharedWaiters.push(resolve));
    }
    if (this.active.size > 0) {
      run.overlapped = true;
      for (const other of this.active) other.overlapped = true;
    }
    this.active.add(run);
  }

  private leaveShared(run: SharedRun): void {
    this.active.delete(run);
    if (this.active.size === 0) this.startExclusive();
  }

  private enterExclusive(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.exclusiveQueue.push(resolve);
      this.startExclusive();
    });
  }

  private startExclusive(): void {
    if (this.exclusiveRunning || this.active.size > 0) return;
    const next = this.exclusiveQueue.shift();
    if (!next) return;
    this.exclusiveRunning = true;
    next();
  }

  private leaveExclusive(): void {
    this.exclusiveRunning = false;
    if (this.exclusiveQueue.length > 0) return this.startExclusive();
    const waiters = this.sharedWaiters;
    this.sharedWaiters = [];
    for (const wake of waiters) wake();
  }
}
