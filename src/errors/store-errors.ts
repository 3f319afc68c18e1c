/**
 * The stores' failures that the error handler answers as 503 storage_error, with the Retry-After
 * each calls for. They live here, below the stores, so src/errors knows them without importing the
 * event engine or the blob store; each store re-exports its own beside its interface.
 */

/**
 * A read the engine could not run within its resources (DuckDB's "Out of Memory Error": the
 * memory limit, or the spill directory full) even with the engine to itself: the read's own
 * size, not its neighbours'. Callers answer it as the caller's request being too big.
 */
export class EventStoreResourceError extends Error {
  constructor(cause: unknown) {
    super('the read needs more memory than the event store may use for one read', { cause });
    this.name = 'EventStoreResourceError';
  }
}

/**
 * A read that would have to wait longer than its bound for the loader to reach the events
 * acknowledged before it (read-your-writes), or an append held back because the loader is far
 * behind. Answered as 503 storage_error with Retry-After: the data is safe, only late.
 */
export class EventStoreBehindError extends Error {
  constructor(
    message: string,
    readonly waitedMs: number,
  ) {
    super(message);
    this.name = 'EventStoreBehindError';
  }
}

/**
 * The engine cannot answer at all (its worker thread stopped). Answered as 503 storage_error:
 * acknowledged events are safe in the write-ahead log and load at the next start.
 */
export class EventStoreUnavailableError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'EventStoreUnavailableError';
  }
}

/**
 * The store could not do what was asked (down, timing out, refusing our credentials, no such
 * bucket). `message` is for operators (logs, /readyz) and names the store; `reason` is a short
 * phrase without addresses that may be shown to API clients.
 */
export class BlobStoreUnavailableError extends Error {
  constructor(
    message: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'BlobStoreUnavailableError';
  }
}
