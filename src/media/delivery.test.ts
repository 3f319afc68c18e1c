import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { sized } from '../test-support/media/test-files.js';

const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

/** A raw GET, so the path reaches the server exactly as written (fetch normalises `..`). */
const rawGet = (base: string, path: string) =>
  new Promise<number>((resolve, reject) => {
    const url = new URL(base);
    http.get({ host: url.hostname, port: url.port, path }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });

describe('delivery listener', () => {
  let s: TestServer;
  let bytes: Buffer;
  let file: { id: string; url: string; key: string; sha256: string };
  before(async () => {
    s = await startTestServer();
    bytes = sized('application/pdf', 300_000);
    for (let i = 8; i < bytes.length; i++) bytes[i] = (i * 31) & 0xff;
    const res = await s.request('POST', '/media/base64', { json: { filename: 'report "Q1".pdf', content_type: 'application/pdf', data: bytes.toString('base64') } });
    assert.equal(res.status, 201, res.text);
    file = res.body;
  });
  after(() => s.close());

  test('GET serves identical bytes with the headers of DECISIONS §7', async () => {
    const res = await fetch(file.url);
    assert.equal(res.status, 200);
    const body = Buffer.from(await res.arrayBuffer());
    assert.equal(sha(body), sha(bytes));
    assert.equal(res.headers.get('etag'), `"${file.sha256}"`);
    assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('content-type'), 'application/pdf');
    assert.equal(res.headers.get('accept-ranges'), 'bytes');
    assert.equal(res.headers.get('content-length'), String(bytes.length));
    assert.equal(res.headers.get('content-disposition'), `inline; filename="report-Q1-.pdf"; filename*=UTF-8''report%20%22Q1%22.pdf`);
    assert.ok(!file.url.startsWith(s.apiUrl), 'content never shares the API origin');
  });

  const range = async (header: string) => {
    const res = await fetch(file.url, { headers: { range: header } });
    return { status: res.status, body: Buffer.from(await res.arrayBuffer()), headers: res.headers };
  };

  test('ranges: first, middle, suffix, open-ended past the end, unsatisfiable', async () => {
    const size = bytes.length;
    const first = await range('bytes=0-99');
    assert.equal(first.status, 206);
    assert.deepEqual(first.body, bytes.subarray(0, 100));
    assert.equal(first.headers.get('content-range'), `bytes 0-99/${size}`);
    assert.equal(first.headers.get('accept-ranges'), 'bytes');
    const middle = await range('bytes=1000-1999');
    assert.deepEqual(middle.body, bytes.subarray(1000, 2000));
    const suffix = await range('bytes=-500');
    assert.deepEqual(suffix.body, bytes.subarray(size - 500));
    assert.equal(suffix.headers.get('content-range'), `bytes ${size - 500}-${size - 1}/${size}`);
    const clipped = await range(`bytes=${size - 10}-${size + 1000}`);
    assert.equal(clipped.status, 206);
    assert.deepEqual(clipped.body, bytes.subarray(size - 10));
    const past = await range(`bytes=${size}-`);
    assert.equal(past.status, 416);
    assert.equal(past.headers.get('content-range'), `bytes */${size}`);
  });

  test('If-None-Match with the ETag → 304; If-Range with another ETag → the whole file', async () => {
    const res = await fetch(file.url, { headers: { 'if-none-match': `"other", "${file.sha256}"` } });
    assert.equal(res.status, 304);
    assert.equal(res.headers.get('etag'), `"${file.sha256}"`);
    const ifRange = await fetch(file.url, { headers: { range: 'bytes=0-9', 'if-range': '"stale"' } });
    assert.equal(ifRange.status, 200);
    assert.equal((await ifRange.arrayBuffer()).byteLength, bytes.length);
  });

  test('HEAD: the GET headers, no body', async () => {
    const res = await fetch(file.url, { method: 'HEAD' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-length'), String(bytes.length));
    assert.equal(res.headers.get('etag'), `"${file.sha256}"`);
    assert.equal((await res.arrayBuffer()).byteLength, 0);
  });

  test('unknown keys and paths that try to escape the store → 404', async () => {
    const [token] = file.key.split('/');
    for (const path of [
      `/${'0'.repeat(32)}/x.pdf`,
      `/${token}/other.pdf`,
      '/../../etc/passwd',
      '/%2e%2e/%2e%2e/etc/passwd',
      `/${token}/..%2f..%2fmetadata.sqlite`,
      '/.tmp/x',
      `/${token}`,
      '/blobs/../metadata.sqlite',
    ]) {
      assert.equal(await rawGet(s.cdnUrl, path), 404, path);
    }
  });

  test('a blocked file is no longer delivered', async () => {
    const other = await s.request('POST', '/media/base64', { json: { filename: 'b.pdf', content_type: 'application/pdf', data: bytes.toString('base64') } });
    assert.equal((await fetch(other.body.url)).status, 200);
    await s.server.ctx.metadata.db.updateTable('files').set({ abuse_status: 'blocked' }).where('id', '=', other.body.id).execute();
    assert.equal((await fetch(other.body.url)).status, 404);
  });
});
