import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { multipart, png, sized } from '../test-support/media/test-files.js';
import { blobFiles, send } from '../test-support/media/test-helpers.js';
import { legs } from '../test-support/ci.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The head of a `file` part as a real client writes it. */
const fileHead = (boundary: string) =>
  Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`);

/** One well-formed file part and its closing delimiter. */
const whole = (boundary: string) => Buffer.concat([fileHead(boundary), png(), Buffer.from(`\r\n--${boundary}--\r\n`)]);

describe('POST /media with a malformed multipart body → 400 bad_request, nothing kept', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  const storageUsed = async () => {
    const usage = await s.request('GET', '/usage');
    return (usage.body.quotas as Array<{ metric: string; used: number }>).find((q) => q.metric === 'storage_bytes')!.used;
  };

  /** Sends the body whole (its Content-Length is right: the body itself is what is wrong). */
  const refused = async (contentType: string, body: Buffer, message: RegExp) => {
    const res = await s.request('POST', '/media', { body: new Uint8Array(body), headers: { 'content-type': contentType } });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'bad_request');
    assert.match(res.body.error.message, message);
    assert.equal(res.body.error.request_id, res.headers.get('x-request-id'));
    assert.equal(res.headers.get('retry-after'), null, 'a malformed request must not be retried as it is');
    assert.equal(await storageUsed(), 0);
    const reservations = await s.server.ctx.metadata.db.selectFrom('upload_reservations').selectAll().execute();
    assert.deepEqual(reservations, []);
    assert.deepEqual((await blobFiles(s)), { blobs: [], temp: [] });
  };

  test('Content-Type multipart/form-data without a boundary parameter', async () => {
    await refused('multipart/form-data', whole('abc'), /boundary/);
  });

  test('a boundary, but a body that is not multipart at all', async () => {
    await refused('multipart/form-data; boundary=abc', Buffer.from('this is not a multipart body\r\n'), /not a multipart\/form-data body/);
  });

  test('a body that is not delimited by the boundary Content-Type names', async () => {
    await refused('multipart/form-data; boundary=abc', whole('xyz'), /not a multipart\/form-data body/);
  });

  test('the file part is cut short: the body ends before any closing boundary (was 503 storage_error)', async () => {
    await refused('multipart/form-data; boundary=abc', Buffer.concat([fileHead('abc'), png()]), /ends before its closing boundary/);
  });

  test('the closing boundary itself is cut short (was 503 storage_error)', async () => {
    await refused('multipart/form-data; boundary=abc', Buffer.concat([fileHead('abc'), png(), Buffer.from('\r\n--ab')]), /ends before its closing boundary/);
  });

  test('the body ends inside the headers of a part after the file', async () => {
    const body = Buffer.concat([fileHead('abc'), png(), Buffer.from('\r\n--abc\r\nContent-Disposition: form-data; na')]);
    await refused('multipart/form-data; boundary=abc', body, /ends before its closing boundary/);
  });

  test('after all of these, a well-formed upload still succeeds', async () => {
    const res = await s.request('POST', '/media', { body: new Uint8Array(whole('abc')), headers: { 'content-type': 'multipart/form-data; boundary=abc' } });
    assert.equal(res.status, 201, res.text);
    assert.equal(await storageUsed(), png().length);
  });
});

// The S3 leg runs storage-down.test.ts instead: the store behind a proxy taken down and back.
// A file-store failure; on S3, storage-down.test.ts takes the store down instead.

legs.files().describe('a blob store that fails on its own is still 503 storage_error', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test('the temp directory replaced by a file (ENOTDIR, even for root): 503 with Retry-After at once, reservation released', async () => {
    const tmp = path.join(s.dataDir, 'blobs', '.tmp');
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.writeFileSync(tmp, '');
    try {
      // Larger than the inspector's buffers: a write that fails before reading must not leave the read waiting.
      const m = multipart([{ name: 'file', value: sized('image/png', 1_000_000), filename: 'a.png', type: 'image/png' }]);
      const res = await Promise.race([send(s, m, { token: s.tenants.a.token }), sleep(5_000).then(() => assert.fail('no answer within 5 s'))]);
      assert.equal(res.status, 503);
      assert.equal(res.body.error.code, 'storage_error');
      assert.equal(res.retryAfter, '1');
      assert.deepEqual(await s.server.ctx.metadata.db.selectFrom('upload_reservations').selectAll().execute(), []);
      assert.equal((await s.server.ctx.quotas.usage(s.tenants.a.orgId, 'pro')).find((q) => q.metric === 'storage_bytes')!.used, 0);
    } finally {
      fs.rmSync(tmp, { force: true });
      fs.mkdirSync(tmp);
    }
  });
});
