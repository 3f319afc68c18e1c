import type { Readable } from 'node:stream';

// Declared below the stores, in src/errors, so the one error handler knows it without importing the blob store.
export { BlobStoreUnavailableError } from '../../errors/store-errors.js';

/** Inclusive byte positions, as in HTTP ranges. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface BlobStat {
  size: number;
}

/**
 * Asked by `sweep` before it removes a stored blob: which of these keys the metadata still
 * knows (a file record, soft-deleted ones included, or an upload in flight). Only the others
 * are orphans.
 */
export type KnownKeys = (keys: string[]) => Promise<Set<string>>;

/** What a store holds, read whole: for tests and diagnostics, never on a request path. */
export interface BlobInventory {
  /** Keys of stored blobs. */
  blobs: string[];
  /** Writes in progress or left by interrupted ones (temp files, multipart uploads). */
  pending: string[];
}

/**
 * Where file bytes live. Small on purpose: each backend is one file implementing these
 * methods. Keys are `/`-separated segments of `[A-Za-z0-9._-]`, never `.` or `..`.
 *
 * A store that cannot do its work (unreachable, refusing our credentials, failing) rejects with
 * `BlobStoreUnavailableError`, which the media layer answers as 503 storage_error.
 */
export interface BlobStore {
  /**
   * Writes `body` under `key` atomically: readers see the whole blob or nothing. If `body`
   * fails or is destroyed, the promise rejects with its error and nothing is left behind.
   * A write that fails on the store's side destroys `body`.
   */
  put(key: string, body: Readable): Promise<BlobStat>;
  /** The blob's bytes (or one range of them); undefined when there is no such blob. */
  get(key: string, range?: ByteRange): Promise<Readable | undefined>;
  stat(key: string): Promise<BlobStat | undefined>;
  exists(key: string): Promise<boolean>;
  /** Idempotent: deleting a missing blob is not an error (purges may run twice). */
  delete(key: string): Promise<void>;
  /**
   * Removes what interrupted writes left behind (temp files, multipart uploads) and stored
   * blobs that `known` does not know, each only once it is older than the store's grace
   * period (so a write in flight is never touched). Returns how many items it removed.
   */
  sweep(known: KnownKeys): Promise<number>;
  /** Cheap reachability check for /readyz. */
  ping(): Promise<void>;
  inventory(): Promise<BlobInventory>;
  /** Releases connections (the server's shutdown); the store is not used afterwards. */
  close?(): Promise<void> | void;
}

/** A blob store with no grace period to speak of would sweep writes in flight: a day by default. */
export const defaultSweepGraceMs = 24 * 60 * 60 * 1000;

const segment = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

/** True when `key` is a key this store accepts (so no key can name a path outside it). */
export function isValidKey(key: string): boolean {
  const parts = key.split('/');
  return parts.length >= 1 && parts.length <= 4 && parts.every((p) => segment.test(p) && p !== '.' && p !== '..');
}
