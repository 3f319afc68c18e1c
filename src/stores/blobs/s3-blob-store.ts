import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3BlobStoreOptions } from './s3-url.js';
import {
  BlobStoreUnavailableError,
  isValidKey,
  type BlobInventory,
  type BlobStat,
  type BlobStore,
  type ByteRange,
  type KnownKeys,
} from './blob-store.js';

/** Parts of a multipart upload: S3's minimum, so an upload holds at most `queueSize + 1` of them. */
export const partSize = 5 * 1024 * 1024;
/** Parts in flight at once per upload. */
const queueSize = 2;
/** Connecting to the store: a store that is down answers at once (refused), a lost one within this. */
const connectionTimeoutMs = 3_000;
/** A store that stops sending in the middle of a body: the read fails instead of hanging. */
const socketTimeoutMs = 60_000;
const pingTimeoutMs = 5_000;

/** Carries a failure of the sweep's `known` callback past the store's own error wrapping. */
class KnownKeysFailure {
  constructor(readonly cause: unknown) {}
}

/** A failed S3 call's HTTP status, when the store answered at all. */
const statusOf = (error: unknown) => (error instanceof S3ServiceException ? error.$metadata?.httpStatusCode : undefined);
const isMissing = (error: unknown) => {
  const name = (error as { name?: string }).name;
  return name === 'NoSuchKey' || name === 'NotFound' || (statusOf(error) === 404 && name !== 'NoSuchBucket');
};

export { parseS3Url, type S3BlobStoreOptions } from './s3-url.js';

/**
 * Blobs as objects of an S3 bucket, under the URL's prefix (`prefix/<key>`).
 *
 * - `put` streams: lib-storage's Upload sends 5 MiB parts, two in flight, so memory stays flat
 *   whatever the size; a body that fails (the size limit, a client gone) ends the upload with
 *   its own error and the multipart upload aborted. A small body is one PutObject.
 * - Nothing is visible until the upload completes; an upload killed with its process leaves
 *   parts that `sweep` (and `delete` of its key, run by the reservation reclaim) aborts.
 * - Every failure of the store is a BlobStoreUnavailableError (503 storage_error); requests
 *   have connection and response timeouts, so a store that is down or hangs never hangs a
 *   request, and the client reconnects by itself when the store is back.
 */
export class S3BlobStore implements BlobStore {
  readonly client: S3Client;
  private readonly bucket: string;
  private readonly where: string;

  constructor(readonly options: S3BlobStoreOptions) {
    this.bucket = options.bucket;
    this.where = `the S3 store (bucket "${options.bucket}" at ${options.endpoint ?? `AWS ${options.region}`})`;
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      // Checksums only where S3 requires them: trailing checksums (aws-chunked bodies) are not
      // understood by every S3-compatible server (Swift's s3api, older MinIO, Ceph).
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 2,
      requestHandler: {
        connectionTimeout: connectionTimeoutMs,
        requestTimeout: options.requestTimeoutMs,
        throwOnRequestTimeout: true,
        socketTimeout: socketTimeoutMs,
        // Each delivery in progress holds a connection for as long as its client reads.
        httpAgent: { keepAlive: true, maxSockets: 256 },
        httpsAgent: { keepAlive: true, maxSockets: 256 },
      },
    });
  }

  /** The object key of a store key. */
  private objectKey(key: string): string {
    if (!isValidKey(key)) throw new Error('invalid blob key');
    return this.options.prefix ? `${this.options.prefix}/${key}` : key;
  }

  /** The store key of an object key under the prefix; undefined for anything else found there. */
  private storeKey(objectKey: string): string | undefined {
    const head = this.options.prefix ? `${this.options.prefix}/` : '';
    if (!objectKey.startsWith(head)) return undefined;
    const key = objectKey.slice(head.length);
    return isValidKey(key) ? key : undefined;
  }

  private get listPrefix(): string {
    return this.options.prefix ? `${this.options.prefix}/` : '';
  }

  /** Any failure of the store, in words an operator can act on. */
  private unavailable(operation: string, error: unknown): BlobStoreUnavailableError {
    if (error instanceof BlobStoreUnavailableError) return error;
    const e = error as { name?: string; code?: string; message?: string };
    const status = statusOf(error);
    const detail = `${e.name ?? 'Error'}${e.code && e.code !== e.name ? ` ${e.code}` : ''}: ${e.message ?? String(error)}`;
    let reason: string;
    let advice: string;
    if (e.name === 'NoSuchBucket') {
      reason = 'the storage bucket does not exist';
      advice = `create the bucket or correct OPS_BLOB_URL`;
    } else if (e.name === 'CredentialsProviderError' || status === 401 || status === 403 || e.name === 'InvalidAccessKeyId' || e.name === 'SignatureDoesNotMatch') {
      reason = 'the storage refused the server\'s credentials';
      advice = 'check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY and the bucket\'s permissions';
    } else if (e.name === 'TimeoutError' || e.code === 'ETIMEDOUT' || e.name === 'AbortError') {
      reason = 'the storage did not answer in time';
      advice = 'is the store overloaded or the network to it down?';
    } else if (status !== undefined && status >= 500) {
      reason = 'the storage is failing';
      advice = 'see the store\'s own logs';
    } else if (status === undefined) {
      reason = 'the storage cannot be reached';
      advice = 'is the store running, and does OPS_BLOB_URL\'s endpoint name it?';
    } else {
      reason = 'the storage refused a request';
      advice = 'see the store\'s own logs';
    }
    return new BlobStoreUnavailableError(`${this.where}: ${operation} failed (${detail}): ${reason}; ${advice}`, reason, { cause: error });
  }

  async put(key: string, body: Readable): Promise<BlobStat> {
    const Key = this.objectKey(key);
    let size = 0;
    // Counts on the way (lib-storage would take a stream's own `size` property for its length).
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        done(null, chunk);
      },
    });
    // The body's own failure reaches the upload through `counter`, destroyed by the pipeline
    // with that very error. A failure of the store leaves `counter` open until we end it: the
    // upload leaving its read loop early (a failed part) must not destroy it, or it would look
    // like a failed body.
    counter[Symbol.asyncIterator] = () => counter.iterator({ destroyOnReturn: false });
    const feeding = pipeline(body, counter).catch(() => {});
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key, Body: counter },
      partSize,
      queueSize,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      // The upload is over, its multipart upload aborted (unless the store is down: then
      // `sweep` or the reservation's reclaim aborts it later).
      const bodyError: unknown = counter.errored;
      if (bodyError) {
        await feeding;
        throw bodyError;
      }
      // The store failed first: stop reading the body, which stops the client's upload upstream.
      counter.destroy();
      await feeding;
      throw this.unavailable(`writing ${Key}`, error);
    }
    await feeding;
    return { size };
  }

  async get(key: string, range?: ByteRange): Promise<Readable | undefined> {
    const Key = this.objectKey(key);
    try {
      const output = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }));
      return output.Body as Readable;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw this.unavailable(`reading ${Key}`, error);
    }
  }

  async stat(key: string): Promise<BlobStat | undefined> {
    const Key = this.objectKey(key);
    try {
      const output = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key }));
      return { size: output.ContentLength ?? 0 };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw this.unavailable(`reading ${Key}`, error);
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== undefined;
  }

  /** Deletes the object and aborts any multipart upload still open for its key (a killed writer's). */
  async delete(key: string): Promise<void> {
    const Key = this.objectKey(key);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key }));
      for await (const upload of this.multipartUploads(Key)) {
        if (upload.key === Key) await this.abortUpload(upload.key, upload.uploadId);
      }
    } catch (error) {
      throw this.unavailable(`deleting ${Key}`, error);
    }
  }

  private async abortUpload(Key: string, UploadId: string): Promise<void> {
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId }));
    } catch (error) {
      // Aborted meanwhile (by another sweeper, or completed): nothing left to do.
      if ((error as { name?: string }).name !== 'NoSuchUpload' && statusOf(error) !== 404) throw error;
    }
  }

  /** Open multipart uploads under `prefix`, page by page. */
  private async *multipartUploads(prefix: string): AsyncGenerator<{ key: string; uploadId: string; initiated: number }> {
    let KeyMarker: string | undefined;
    let UploadIdMarker: string | undefined;
    for (;;) {
      const page = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: prefix, KeyMarker, UploadIdMarker }));
      for (const u of page.Uploads ?? []) {
        if (u.Key && u.UploadId) yield { key: u.Key, uploadId: u.UploadId, initiated: u.Initiated?.getTime() ?? 0 };
      }
      if (!page.IsTruncated || (!page.NextKeyMarker && !page.NextUploadIdMarker)) return;
      KeyMarker = page.NextKeyMarker;
      UploadIdMarker = page.NextUploadIdMarker;
    }
  }

  /** Objects under the prefix, page by page. */
  private async *objects(): AsyncGenerator<{ key: string; objectKey: string; modified: number }> {
    let ContinuationToken: string | undefined;
    for (;;) {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.listPrefix, ContinuationToken, MaxKeys: 1000 }));
      for (const o of page.Contents ?? []) {
        const key = o.Key === undefined ? undefined : this.storeKey(o.Key);
        if (key !== undefined) yield { key, objectKey: o.Key!, modified: o.LastModified?.getTime() ?? 0 };
      }
      if (!page.IsTruncated || !page.NextContinuationToken) return;
      ContinuationToken = page.NextContinuationToken;
    }
  }

  /**
   * Aborts multipart uploads older than the grace period (a writer killed mid-upload), then
   * deletes objects older than it that no record knows (a delete that failed while the store
   * was down). Objects under the prefix that are not store keys are never touched.
   */
  async sweep(known: KnownKeys): Promise<number> {
    const cutoff = Date.now() - this.options.sweepGraceMs;
    let removed = 0;
    try {
      for await (const upload of this.multipartUploads(this.listPrefix)) {
        if (upload.initiated >= cutoff) continue;
        await this.abortUpload(upload.key, upload.uploadId);
        removed++;
      }
      // Page by page (1,000 keys): listings continue after the last key seen, so deleting
      // what a page held does not make the next page skip anything.
      let batch: Array<{ key: string; objectKey: string }> = [];
      const flush = async () => {
        // The metadata's own failure is not the store's: it goes up as it is.
        const keep = batch.length ? await known(batch.map((o) => o.key)).catch((error: unknown) => Promise.reject(new KnownKeysFailure(error))) : new Set<string>();
        for (const o of batch) {
          if (keep.has(o.key)) continue;
          await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: o.objectKey }));
          removed++;
        }
        batch = [];
      };
      for await (const o of this.objects()) {
        if (o.modified >= cutoff) continue;
        batch.push(o);
        if (batch.length >= 1000) await flush();
      }
      await flush();
    } catch (error) {
      if (error instanceof KnownKeysFailure) throw error.cause;
      throw this.unavailable('sweeping', error);
    }
    return removed;
  }

  async ping(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), { abortSignal: AbortSignal.timeout(pingTimeoutMs) });
    } catch (error) {
      throw this.unavailable('checking the bucket', statusOf(error) === 404 ? Object.assign(error as Error, { name: 'NoSuchBucket' }) : error);
    }
  }

  async inventory(): Promise<BlobInventory> {
    try {
      const blobs: string[] = [];
      for await (const o of this.objects()) blobs.push(o.key);
      const pending: string[] = [];
      for await (const u of this.multipartUploads(this.listPrefix)) pending.push(this.storeKey(u.key) ?? u.key);
      return { blobs, pending };
    } catch (error) {
      throw this.unavailable('listing', error);
    }
  }

  /** Releases the client's sockets. */
  close(): void {
    this.client.destroy();
  }
}
