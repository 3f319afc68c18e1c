import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { clearS3Prefix, freshS3Url, startTcpProxy, testBlobUrl, withEndpoint, type TcpProxy } from '../test-support/stores/s3-testing.js';
import { multipart, png, sized } from '../test-support/media/test-files.js';
import { send } from '../test-support/media/test-helpers.js';
import { legs } from '../test-support/ci.js';

const base = testBlobUrl();

/**
 * The S3 store behind a TCP proxy the test closes and reopens: while it is down, uploads and
 * delivery answer 503 storage_error with Retry-After (never 500, never a hang) and /readyz says
 * not ready; once it is back everything works again without a restart.
 */
legs.s3().describe('media on S3 while the store is down, and after it is back', () => {
  let s: TestServer;
  let proxy: TcpProxy;
  let blobUrl: string;
  let upstream: string;
  before(async () => {
    const fresh = await freshS3Url(base!);
    upstream = new URL(fresh).searchParams.get('endpoint')!;
    const endpoint = new URL(upstream);
    proxy = await startTcpProxy({ host: endpoint.hostname, port: Number(endpoint.port) });
    blobUrl = withEndpoint(fresh, `http://127.0.0.1:${proxy.port}`, { timeout_ms: '2000' });
    s = await startTestServer({ env: { OPS_BLOB_URL: blobUrl } });
  });
  after(async () => {
    await s?.close();
    await proxy?.down();
    // Through the proxy's address no more: the prefix is emptied on the server itself.
    if (blobUrl) await clearS3Prefix(withEndpoint(blobUrl, upstream));
  });

  const upload = () => s.request('POST', '/media/base64', { json: { filename: 'p.png', content_type: 'image/png', data: png().toString('base64') } });
  const used = async () => (await s.server.ctx.quotas.usage(s.tenants.a.orgId, 'pro')).find((q) => q.metric === 'storage_bytes')!.used;

  test('503 storage_error with Retry-After for uploads and delivery, /readyz not ready; then all back by itself', async () => {
    const stored = await upload();
    assert.equal(stored.status, 201, stored.text);
    const before = await used();

    await proxy.down();
    const started = Date.now();
    const refused = await upload();
    assert.equal(refused.status, 503, refused.text);
    assert.equal(refused.body.error.code, 'storage_error');
    assert.match(refused.body.error.message, /not stored: the storage cannot be reached; retry in a few seconds/);
    assert.equal(refused.headers.get('retry-after'), '5');
    // A multipart upload larger than one part: answered, not left waiting for the whole body.
    const big = multipart([{ name: 'file', value: sized('image/png', 12_000_000), filename: 'b.png', type: 'image/png' }]);
    const bigAnswer = await send(s, big, { token: s.tenants.a.token });
    assert.equal(bigAnswer.status, 503);
    assert.equal(bigAnswer.body.error.code, 'storage_error');
    assert.equal(await used(), before, 'a refused upload keeps no quota');
    assert.deepEqual(await s.server.ctx.metadata.db.selectFrom('upload_reservations').selectAll().execute(), []);

    const delivery = await fetch(stored.body.url);
    assert.equal(delivery.status, 503);
    assert.equal(delivery.headers.get('retry-after'), '5');
    assert.equal(delivery.headers.get('cache-control'), 'no-store');
    assert.equal(delivery.headers.get('etag'), null);
    assert.equal(((await delivery.json()) as { error: { code: string } }).error.code, 'storage_error');
    // HEAD and If-None-Match answer from the record alone.
    assert.equal((await fetch(stored.body.url, { method: 'HEAD' })).status, 200);
    const etag = `"${stored.body.sha256}"`;
    assert.equal((await fetch(stored.body.url, { headers: { 'if-none-match': etag } })).status, 304);
    const ready = await fetch(`${s.apiUrl}/readyz`);
    assert.equal(ready.status, 503);
    await ready.arrayBuffer();
    assert.ok(Date.now() - started < 15_000, `the answers took ${Date.now() - started} ms`);
    assert.ok(s.logs.some((l) => l.includes('the storage cannot be reached') && l.includes('OPS_BLOB_URL')), 'the log names the store and what to check');

    await proxy.up();
    const ok = await fetch(`${s.apiUrl}/readyz`);
    assert.equal(ok.status, 200);
    await ok.arrayBuffer();
    const again = await upload();
    assert.equal(again.status, 201, again.text);
    const served = await fetch(stored.body.url, { headers: { range: 'bytes=1-3' } });
    assert.equal(served.status, 206);
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), png().subarray(1, 4));
  });
});
