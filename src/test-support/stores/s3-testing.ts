import crypto from 'node:crypto';
import net from 'node:net';
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
} from '@aws-sdk/client-s3';
import { S3BlobStore, parseS3Url } from '../../stores/blobs/s3-blob-store.js';

/**
 * The S3 leg of the tests: OPS_TEST_BLOB_URL names a bucket on a real S3-compatible server
 * (`eval "$(scripts/swift-s3.sh env)"`); undefined when the leg is not being run.
 */
export const testBlobUrl = (): string | undefined => process.env.OPS_TEST_BLOB_URL || undefined;


const ensured = new Map<string, Promise<void>>();

/** Creates the URL's bucket unless it exists (once per process and bucket). */
export function ensureBucket(url: string): Promise<void> {
  const options = parseS3Url(url);
  const id = `${options.endpoint ?? ''} ${options.bucket}`;
  let done = ensured.get(id);
  if (!done) {
    const store = new S3BlobStore(options);
    done = store.client
      .send(new CreateBucketCommand({ Bucket: options.bucket }))
      .then(
        () => undefined,
        (error: unknown) => {
          const name = (error as { name?: string }).name;
          if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw error;
        },
      )
      .finally(() => store.close());
    ensured.set(id, done);
  }
  return done;
}

/**
 * `url` with a fresh random prefix appended to its own (`s3://bucket/a` → `s3://bucket/a/t-<hex>`),
 * so that test servers never see each other's objects; the bucket exists when it resolves.
 */
export async function freshS3Url(url: string): Promise<string> {
  await ensureBucket(url);
  const parsed = new URL(url);
  parsed.pathname = `${parsed.pathname.replace(/\/+$/, '')}/t-${crypto.randomBytes(6).toString('hex')}`;
  return parsed.toString();
}

/** Deletes every object and aborts every multipart upload under the URL's prefix. */
export async function clearS3Prefix(url: string): Promise<void> {
  const options = parseS3Url(url);
  if (!options.prefix) throw new Error('refusing to clear a whole bucket');
  const store = new S3BlobStore(options);
  const Bucket = options.bucket;
  const Prefix = `${options.prefix}/`;
  try {
    for (;;) {
      const page = await store.client.send(new ListObjectsV2Command({ Bucket, Prefix }));
      for (const o of page.Contents ?? []) await store.client.send(new DeleteObjectCommand({ Bucket, Key: o.Key }));
      if (!page.IsTruncated) break;
    }
    const uploads = await store.client.send(new ListMultipartUploadsCommand({ Bucket, Prefix }));
    for (const u of uploads.Uploads ?? []) await store.client.send(new AbortMultipartUploadCommand({ Bucket, Key: u.Key, UploadId: u.UploadId }));
  } finally {
    store.close();
  }
}

/**
 * A TCP proxy in front of the S3 server: `down()` closes it (and cuts every connection through
 * it), `up()` listens again on the same port. A store pointed at it can be taken down and back.
 */
export interface TcpProxy {
  port: number;
  down(): Promise<void>;
  up(): Promise<void>;
  /** Accepts connections but never answers: a store that hangs. */
  hang(): void;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let hanging = false;
  let server: net.Server;
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server = net.createServer((client) => {
        sockets.add(client);
        client.on('close', () => sockets.delete(client));
        client.on('error', () => {});
        if (hanging) return;
        const upstream = net.connect(target.port, target.host);
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.pipe(upstream).pipe(client);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
    });
  const port = await listen(0);
  return {
    port,
    down: async () => {
      // Resolves also when it was down already (close then reports "not running").
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    up: async () => {
      hanging = false;
      await listen(port);
    },
    hang: () => {
      hanging = true;
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** `url` (an s3:// test URL) with its endpoint replaced by `endpoint` and its options extended. */
export function withEndpoint(url: string, endpoint: string, extra: Record<string, string> = {}): string {
  const parsed = new URL(url);
  parsed.searchParams.set('endpoint', endpoint);
  for (const [name, value] of Object.entries(extra)) parsed.searchParams.set(name, value);
  return parsed.toString();
}
