import path from 'node:path';
import type { BlobStore } from './blob-store.js';
import { FsBlobStore } from './fs-blob-store.js';
import { parseS3Url, type S3BlobStoreOptions } from './s3-url.js';

/**
 * OPS_BLOB_URL chooses the backend; unset means the file system under OPS_DATA_DIR/blobs.
 * `s3://bucket/prefix?endpoint=…&region=…&path_style=true` is an S3-compatible object store
 * (s3-blob-store.ts); a malformed one is refused here with a ConfigError naming the variable.
 */
export function openBlobStore(options: { blobUrl: string | undefined; dataDir: string }): BlobStore {
  if (!options.blobUrl) return new FsBlobStore(path.join(options.dataDir, 'blobs'));
  const url = new URL(options.blobUrl);
  if (url.protocol === 'file:') return new FsBlobStore(url.pathname);
  if (url.protocol === 's3:') return openS3(parseS3Url(options.blobUrl));
  throw new Error(`OPS_BLOB_URL: the ${url.protocol} backend is not available in this build; use file://, s3:// or leave it unset`);
}

/**
 * The S3 store, its module (and the AWS SDK's, ~20 MB and 150 ms) loaded on first use: a
 * server on the file store never loads it. The URL is checked now, at start-up.
 */
function openS3(options: S3BlobStoreOptions): BlobStore {
  let loading: Promise<BlobStore> | undefined;
  const store = () => (loading ??= import('./s3-blob-store.js').then((m) => new m.S3BlobStore(options)));
  return {
    put: async (key, body) => (await store()).put(key, body),
    get: async (key, range) => (await store()).get(key, range),
    stat: async (key) => (await store()).stat(key),
    exists: async (key) => (await store()).exists(key),
    delete: async (key) => (await store()).delete(key),
    sweep: async (known) => (await store()).sweep(known),
    ping: async () => (await store()).ping(),
    inventory: async () => (await store()).inventory(),
    close: async () => {
      if (loading) await (await loading.catch(() => undefined))?.close?.();
    },
  };
}
