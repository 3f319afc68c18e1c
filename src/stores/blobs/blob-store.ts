import type { Readable } from 'node:stream';
import path from 'node:path';
import { FsBlobStore } from './fs-blob-store.js';

/** Inclusive byte positions, as in HTTP ranges. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface BlobStat {
  size: number;
}

/**
 * Where file bytes live. Small on purpose: an S3 backend is one more folder implementing
 * these methods. Keys are `/`-separated segments of `[A-Za-z0-9._-]`, never `.` or `..`.
 */
export interface BlobStore {
  /**
   * Writes `body` under `key` atomically: readers see the whole blob or nothing. If `body`
   * fails or is destroyed, the promise rejects with its error and nothing is left behind.
   */
  put(key: string, body: Readable): Promise<BlobStat>;
  /** The blob's bytes (or one range of them); undefined when there is no such blob. */
  get(key: string, range?: ByteRange): Promise<Readable | undefined>;
  stat(key: string): Promise<BlobStat | undefined>;
  exists(key: string): Promise<boolean>;
  /** Idempotent: deleting a missing blob is not an error (purges may run twice). */
  delete(key: string): Promise<void>;
  /** Removes what interrupted writes left behind; returns how many items it removed. */
  sweep(): Promise<number>;
  /** Cheap reachability check for /readyz. */
  ping(): Promise<void>;
}

/** OPS_BLOB_URL chooses the backend; unset means the file system under OPS_DATA_DIR/blobs. */
export function openBlobStore(options: { blobUrl: string | undefined; dataDir: string }): BlobStore {
  if (!options.blobUrl) return new FsBlobStore(path.join(options.dataDir, 'blobs'));
  const url = new URL(options.blobUrl);
  if (url.protocol === 'file:') return new FsBlobStore(url.pathname);
  throw new Error(`OPS_BLOB_URL: the ${url.protocol} backend is not available in this build; use file:// or leave it unset`);
}

const segment = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

/** True when `key` is a key this store accepts (so no key can name a path outside it). */
export function isValidKey(key: string): boolean {
  const parts = key.split('/');
  return parts.length >= 1 && parts.length <= 4 && parts.every((p) => segment.test(p) && p !== '.' && p !== '..');
}
