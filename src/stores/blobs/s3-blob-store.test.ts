import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { CreateMultipartUploadCommand, ListMultipartUploadsCommand, ListObjectsV2Command, UploadPartCommand } from '@aws-sdk/client-s3';
import { ConfigError } from '../../config/config.js';
import { BlobStoreUnavailableError } from './blob-store.js';
import { openBlobStore } from './open-blob-store.js';
import { S3BlobStore, parseS3Url, partSize } from './s3-blob-store.js';
import { clearS3Prefix, freshS3Url, startTcpProxy, testBlobUrl, withEndpoint, type TcpProxy } from '../../test-support/stores/s3-testing.js';
import { legs } from '../../test-support/ci.js';

const base = testBlobUrl();
const onLeg = legs.s3();

const read = async (r: Readable | undefined) => {
  const chunks: Buffer[] = [];
  for await (const c of r!) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};
const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
/** `size` bytes in 64 KiB chunks, as a request body arrives. */
const chunked = (data: Buffer) => Readable.from((function* () {
  for (let i = 0; i < data.length; i += 65_536) yield data.subarray(i, i + 65_536);
})());
const unavailable = (reason: RegExp) => (error: unknown) => {
  assert.ok(error instanceof BlobStoreUnavailableError, `expected BlobStoreUnavailableError, got ${String(error)}`);
  assert.match(error.reason, reason);
  assert.match(error.message, /OPS_BLOB_URL|AWS_ACCESS_KEY_ID|store/);
  return true;
};

describe('OPS_BLOB_URL s3:// is checked at start-up', () => {
  test('bucket, prefix and options', () => {
    const o = parseS3Url('s3://media-bucket/a/b?endpoint=http://127.0.0.1:9000&region=eu-west-1&path_style=false&sweep_grace_s=60&timeout_ms=5000', {});
    assert.deepEqual(o, {
      bucket: 'media-bucket',
      prefix: 'a/b',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-1',
      forcePathStyle: false,
      sweepGraceMs: 60_000,
      requestTimeoutMs: 5000,
    });
    // Defaults: AWS itself (virtual-host addressing), the region from AWS_REGION, a day of grace.
    const aws = parseS3Url('s3://media-bucket', { AWS_REGION: 'ap-south-1' });
    assert.deepEqual([aws.prefix, aws.endpoint, aws.region, aws.forcePathStyle, aws.sweepGraceMs], ['', undefined, 'ap-south-1', false, 86_400_000]);
    // AWS_ENDPOINT_URL_S3 names a compatible server, which gets path-style requests.
    const compatible = parseS3Url('s3://media-bucket/p/', { AWS_ENDPOINT_URL_S3: 'http://store:8080/' });
    assert.deepEqual([compatible.prefix, compatible.endpoint, compatible.forcePathStyle], ['p', 'http://store:8080', true]);
  });

  for (const bad of [
    's3://Bad_Bucket/x',
    's3://ab/x',
    's3://bucket/x?endpoint=ftp://host',
    's3://bucket/x?endpoint=http://host/path',
    's3://bucket/x?path_style=yes',
    's3://bucket/x?colour=blue',
    's3://bucket/x?sweep_grace_s=-1',
    's3://user:secret@bucket/x',
    's3://bucket/a b',
    's3://bucket/a%2F..%2Fb',
  ]) {
    test(`refused: ${bad}`, () => {
      assert.throws(() => openBlobStore({ blobUrl: bad, dataDir: '/nonexistent' }), (error: unknown) => error instanceof ConfigError && error.variable === 'OPS_BLOB_URL');
    });
  }
});

onLeg.describe('S3 blob store on a real S3-compatible server', () => {
  let url: string;
  let store: S3BlobStore;
  before(async () => {
    url = await freshS3Url(base!);
    store = new S3BlobStore(parseS3Url(url));
  });
  after(async () => {
    store?.close();
    if (url) await clearS3Prefix(url);
  });

  test('put, stat, exists, get (whole and a range), delete (twice); keys live under the prefix', async () => {
    assert.deepEqual(await store.put('abc123/x.bin', Readable.from([Buffer.from('hello '), Buffer.from('world')])), { size: 11 });
    assert.deepEqual(await store.stat('abc123/x.bin'), { size: 11 });
    assert.equal(await store.exists('abc123/x.bin'), true);
    assert.equal((await read(await store.get('abc123/x.bin'))).toString(), 'hello world');
    assert.equal((await read(await store.get('abc123/x.bin', { start: 6, end: 10 }))).toString(), 'world');
    const listed = await store.client.send(new ListObjectsV2Command({ Bucket: store.options.bucket, Prefix: `${store.options.prefix}/` }));
    assert.deepEqual(listed.Contents?.map((o) => o.Key), [`${store.options.prefix}/abc123/x.bin`]);
    await store.delete('abc123/x.bin');
    await store.delete('abc123/x.bin');
    assert.equal(await store.get('abc123/x.bin'), undefined);
    assert.equal(await store.stat('abc123/x.bin'), undefined);
    assert.equal(await store.exists('abc123/x.bin'), false);
    assert.deepEqual(await store.inventory(), { blobs: [], pending: [] });
  });

  test('an empty body, and a body of several parts (multipart upload) read back whole and by ranges', async () => {
    assert.deepEqual(await store.put('empty/e.bin', Readable.from([])), { size: 0 });
    assert.equal((await read(await store.get('empty/e.bin'))).length, 0);
    const data = crypto.randomBytes(2 * partSize + 12_345);
    assert.deepEqual(await store.put('big/b.bin', chunked(data)), { size: data.length });
    assert.equal(sha(await read(await store.get('big/b.bin'))), sha(data));
    // A range across the first part boundary, and the last byte.
    const start = partSize - 10;
    assert.deepEqual(await read(await store.get('big/b.bin', { start, end: start + 19 })), data.subarray(start, start + 20));
    assert.deepEqual(await read(await store.get('big/b.bin', { start: data.length - 1, end: data.length - 1 })), data.subarray(data.length - 1));
    assert.deepEqual((await store.inventory()).pending, [], 'no multipart upload left open');
    await store.delete('empty/e.bin');
    await store.delete('big/b.bin');
  });

  test('a body that fails mid-stream (after its first part was sent): its own error, no object, the multipart upload aborted', async () => {
    let sent = 0;
    const failing = new Readable({
      read() {
        if (sent >= partSize + 3 * 65_536) {
          this.destroy(new Error('client went away'));
          return;
        }
        sent += 65_536;
        this.push(crypto.randomBytes(65_536));
      },
    });
    await assert.rejects(store.put('fail/y.bin', failing), /client went away/);
    assert.equal(await store.exists('fail/y.bin'), false);
    assert.deepEqual(await store.inventory(), { blobs: [], pending: [] });
  });

  test('the sweep aborts stale multipart uploads and deletes unknown objects, keeping known ones; nothing younger than the grace period', async () => {
    await store.put('kept/k.bin', Readable.from([Buffer.from('committed')]));
    await store.put('orphan/o.bin', Readable.from([Buffer.from('no record')]));
    // A writer killed mid-upload: an open multipart upload with one part.
    const Key = `${store.options.prefix}/killed/u.bin`;
    const { UploadId } = await store.client.send(new CreateMultipartUploadCommand({ Bucket: store.options.bucket, Key }));
    await store.client.send(new UploadPartCommand({ Bucket: store.options.bucket, Key, UploadId, PartNumber: 1, Body: Buffer.alloc(partSize, 1) }));
    assert.deepEqual((await store.inventory()).pending, ['killed/u.bin']);
    const asked: string[][] = [];
    const known = async (keys: string[]) => {
      asked.push(keys);
      return new Set(keys.filter((k) => k.startsWith('kept/')));
    };
    // A day of grace (the default): all of it is too young to touch.
    const patient = new S3BlobStore(parseS3Url(url));
    try {
      assert.equal(await patient.sweep(known), 0);
    } finally {
      patient.close();
    }
    // No grace: everything is old enough.
    const eager = new S3BlobStore(parseS3Url(withEndpoint(url, store.options.endpoint!, { sweep_grace_s: '0' })));
    try {
      await new Promise((r) => setTimeout(r, 1100)); // S3 times have whole seconds
      assert.equal(await eager.sweep(known), 2);
    } finally {
      eager.close();
    }
    assert.deepEqual(asked.at(-1)!.sort(), ['kept/k.bin', 'orphan/o.bin']);
    assert.deepEqual(await store.inventory(), { blobs: ['kept/k.bin'], pending: [] });
    const uploads = await store.client.send(new ListMultipartUploadsCommand({ Bucket: store.options.bucket, Prefix: `${store.options.prefix}/` }));
    assert.equal(uploads.Uploads?.length ?? 0, 0);
    await store.delete('kept/k.bin');
  });

  test('delete also aborts a multipart upload left open under its key (the reclaim of a killed upload)', async () => {
    const Key = `${store.options.prefix}/reclaimed/r.bin`;
    await store.client.send(new CreateMultipartUploadCommand({ Bucket: store.options.bucket, Key }));
    assert.deepEqual((await store.inventory()).pending, ['reclaimed/r.bin']);
    await store.delete('reclaimed/r.bin');
    assert.deepEqual((await store.inventory()).pending, []);
  });

  describe('a store that goes down and comes back', () => {
    let proxy: TcpProxy;
    let behind: S3BlobStore;
    before(async () => {
      const endpoint = new URL(store.options.endpoint!);
      proxy = await startTcpProxy({ host: endpoint.hostname, port: Number(endpoint.port) });
      behind = new S3BlobStore(parseS3Url(withEndpoint(url, `http://127.0.0.1:${proxy.port}`, { timeout_ms: '1000' })));
      await behind.put('down/before.bin', Readable.from([Buffer.from('stored before')]));
    });
    after(async () => {
      behind?.close();
      await proxy?.down();
    });

    test('down: every operation fails fast with BlobStoreUnavailableError (503 storage_error upstream); back up: it works again by itself', async () => {
      await proxy.down();
      const started = Date.now();
      await assert.rejects(behind.ping(), unavailable(/cannot be reached/));
      await assert.rejects(behind.get('down/before.bin'), unavailable(/cannot be reached/));
      await assert.rejects(behind.stat('down/before.bin'), unavailable(/cannot be reached/));
      await assert.rejects(behind.delete('down/before.bin'), unavailable(/cannot be reached/));
      // A write: the body is destroyed (the upload upstream stops), not read to its end.
      const body = chunked(crypto.randomBytes(3 * partSize));
      await assert.rejects(behind.put('down/during.bin', body), unavailable(/cannot be reached/));
      assert.equal(body.destroyed, true);
      assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);

      await proxy.up();
      await behind.ping();
      assert.equal((await read(await behind.get('down/before.bin'))).toString(), 'stored before');
      assert.deepEqual(await behind.put('down/after.bin', Readable.from([Buffer.from('stored after')])), { size: 12 });
      assert.equal(await behind.exists('down/during.bin'), false);
    });

    test('a store that accepts connections but never answers: the request times out (timeout_ms) instead of hanging', async () => {
      proxy.hang();
      try {
        const started = Date.now();
        await assert.rejects(behind.stat('down/before.bin'), unavailable(/did not answer in time/));
        assert.ok(Date.now() - started < 8_000, `took ${Date.now() - started} ms`);
      } finally {
        await proxy.down();
        await proxy.up();
      }
      assert.equal(await behind.exists('down/before.bin'), true);
    });
  });
});
