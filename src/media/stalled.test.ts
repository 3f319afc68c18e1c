import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { sized } from '../test-support/media/test-files.js';
import { blobFiles, eventually, pngPartHead, rawConnection, uploadHead } from '../test-support/media/test-helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a test server holds for uploads in flight: quota (GET /v1/usage), reservation rows, temp files. */
async function held(s: TestServer): Promise<{ used: number; reservations: number; temp: number }> {
  const usage = await s.request('GET', '/usage');
  const used = (usage.body.quotas as Array<{ metric: string; used: number }>).find((q) => q.metric === 'storage_bytes')!.used;
  const reservations = await s.server.ctx.metadata.db.selectFrom('upload_reservations').select('id').execute();
  return { used, reservations: reservations.length, temp: (await blobFiles(s)).temp.length };
}

describe('stalled and slow uploads (OPS_IDLE_TIMEOUT_MS=1500)', () => {
  let s: TestServer;
  before(async () => {
    // 1.5 s, not less: the test must see the stalled uploads' reservations before the cut, and a
    // machine loaded by other test files once took longer than a 500 ms timeout to answer.
    s = await startTestServer({ env: { OPS_IDLE_TIMEOUT_MS: '1500', OPS_TAIL_HEARTBEAT_MS: '100' } });
  });
  after(() => s.close());

  test('3 clients that declare Content-Length 10 MB, send a few bytes and stall are cut after the idle timeout; quota, reservations and temp files are given back', async () => {
    const boundary = 'stalled';
    const first = Buffer.concat([Buffer.from(pngPartHead(boundary)), sized('image/png', 64)]);
    const clients = await Promise.all([0, 1, 2].map(() => rawConnection(s.apiUrl)));
    for (const client of clients) client.socket.write(Buffer.concat([Buffer.from(uploadHead(s.tenants.a.token, boundary, 10_000_000)), first]));
    const lastByte = Date.now();

    // While they stall, each holds a 10 MB reservation (the declared length) and a temp file
    // (on S3 nothing yet: a multipart upload starts with the first 5 MiB part).
    const temp = s.server.ctx.config.blobUrl?.startsWith('s3:') ? 0 : 3;
    await eventually(async () => assert.deepEqual(await held(s), { used: 30_000_000, reservations: 3, temp }), 2_000);

    const closed = await Promise.race([Promise.all(clients.map((c) => c.closed)), sleep(5_000).then(() => undefined)]);
    clients.forEach((c) => c.socket.destroy());
    assert.ok(closed, 'the server closed the stalled connections within 5 s');
    for (const at of closed) assert.ok(at - lastByte >= 1_400, `cut after ${at - lastByte} ms, before the idle timeout`);
    await eventually(async () => assert.deepEqual(await held(s), { used: 0, reservations: 0, temp: 0 }));
  });

  test('a slow upload that keeps sending (a piece every 150 ms for 3 s, twice the idle timeout) is not cut: 201', async () => {
    const boundary = 'slow';
    const file = sized('image/png', 15 * 1024);
    const body = Buffer.concat([Buffer.from(pngPartHead(boundary)), file, Buffer.from(`\r\n--${boundary}--\r\n`)]);
    const client = await rawConnection(s.apiUrl);
    client.socket.write(uploadHead(s.tenants.a.token, boundary, body.length, 'Connection: close\r\n'));
    const pieces = 20;
    const step = Math.ceil(body.length / pieces);
    const started = Date.now();
    for (let i = 0; i < pieces; i++) {
      await sleep(150);
      if (client.socket.destroyed) assert.fail(`cut after ${Date.now() - started} ms`);
      client.socket.write(body.subarray(i * step, (i + 1) * step));
    }
    await Promise.race([client.closed, sleep(5_000)]);
    client.socket.destroy();
    const answer = client.received();
    assert.match(answer, /^HTTP\/1\.1 201 /, answer.slice(0, 300));
    assert.equal(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).size, file.length);
    assert.ok(Date.now() - started >= 3_000);
  });
});

describe('a whole-request timeout (OPS_REQUEST_TIMEOUT_MS=1500) ends an upload that trickles', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ env: { OPS_REQUEST_TIMEOUT_MS: '1500', OPS_HEADERS_TIMEOUT_MS: '500' } });
  });
  after(() => s.close());

  test('a byte every 100 ms never trips the idle timeout, but the request is ended after 1.5 s and its reservation released', async () => {
    const boundary = 'trickle';
    const client = await rawConnection(s.apiUrl);
    const started = Date.now();
    client.socket.write(Buffer.concat([Buffer.from(uploadHead(s.tenants.a.token, boundary, 10_000_000)), Buffer.from(pngPartHead(boundary)), sized('image/png', 64)]));
    await eventually(async () => assert.equal((await held(s)).reservations, 1), 1_000);
    while (!client.socket.destroyed && Date.now() - started < 6_000) {
      client.socket.write(Buffer.alloc(1));
      await sleep(100);
    }
    const closedAfter = (await Promise.race([client.closed, sleep(1_000).then(() => Infinity)])) - started;
    client.socket.destroy();
    assert.ok(closedAfter >= 1_400 && closedAfter < 4_000, `closed after ${closedAfter} ms`);
    // The answer, when the client can still read one, is an error in the envelope, never a 2xx.
    const answer = client.received();
    if (answer) assert.match(answer, /^HTTP\/1\.1 4\d\d /);
    await eventually(async () => assert.deepEqual(await held(s), { used: 0, reservations: 0, temp: 0 }));
  });
});
