import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { multipart, sized } from '../test-support/media/test-files.js';

interface Answer {
  status: number;
  // Error and File bodies are read field by field.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
  headers: http.IncomingHttpHeaders;
  /** Bytes of the body written when the answer arrived. */
  sentWhenAnswered: number;
}

/** A multipart POST /v1/media in 64 KiB writes, as a network would send it; stops writing once answered. */
function upload(s: TestServer, m: { body: Buffer; contentType: string }, token: string, key: string, options: { holdAfter?: number } = {}): { answer: Promise<Answer>; resume(): void } {
  let resume = () => {};
  const held = options.holdAfter === undefined ? Promise.resolve() : new Promise<void>((r) => (resume = r));
  const answer = new Promise<Answer>((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = http.request(`${s.baseUrl}/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': m.contentType, 'content-length': m.body.length, 'idempotency-key': key },
    });
    req.on('response', (res) => {
      answered = true;
      const at = sent;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, text, headers: res.headers, sentWhenAnswered: at });
        req.destroy();
      });
    });
    req.on('error', (error) => answered || reject(error));
    void (async () => {
      while (sent < m.body.length && !answered && !req.destroyed) {
        if (options.holdAfter !== undefined && sent >= options.holdAfter) await held;
        const piece = m.body.subarray(sent, sent + 64 * 1024);
        sent += piece.length;
        if (!req.write(piece)) await new Promise((r) => req.once('drain', r));
        await new Promise((r) => setImmediate(r));
      }
      if (!answered && !req.destroyed) req.end();
    })().catch(reject);
  });
  return { answer, resume: () => resume() };
}

describe('Idempotency-Key on streamed multipart uploads', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  const files = async () => Number((await s.server.ctx.metadata.db.selectFrom('files').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  test('a 12 MB upload is hashed as it streams to storage, and its retry compares all 12 MB before the first answer is sent again', async () => {
    const bytes = sized('image/png', 12_000_000);
    const m = multipart([{ name: 'file', value: bytes, filename: 'big.png', type: 'image/png' }]);
    const before = await files();
    const first = await upload(s, m, s.tenants.a.token, 'big-1').answer;
    assert.equal(first.status, 201, first.text);
    assert.equal(first.body.sha256, crypto.createHash('sha256').update(bytes).digest('hex'));
    const again = await upload(s, m, s.tenants.a.token, 'big-1').answer;
    assert.equal(again.status, 201);
    assert.equal(again.text, first.text);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.sentWhenAnswered, m.body.length, 'the whole body was read to compare it');
    // One byte different, far into the file: a different body.
    const changed = Buffer.from(m.body);
    changed.writeUInt8(changed.readUInt8(changed.length - 1000) ^ 1, changed.length - 1000);
    const refused = await upload(s, { body: changed, contentType: m.contentType }, s.tenants.a.token, 'big-1').answer;
    assert.equal(refused.status, 409, refused.text);
    assert.match(refused.body.error.message, /different request body/);
    assert.equal(await files(), before + 1);
  });

  test('a retry while the first upload is still arriving → 409 with Retry-After; the first then completes and is what later retries get', async () => {
    const m = multipart([{ name: 'file', value: sized('image/png', 1_000_000), filename: 'slow.png', type: 'image/png' }]);
    const first = upload(s, m, s.tenants.a.token, 'slow-1', { holdAfter: 256 * 1024 });
    // The first request holds the key (its body is a quarter sent and waiting) once its claim is
    // in the database: a retry sent before that (PostgreSQL under load) would take the key itself.
    for (let i = 0; i < 500; i++) {
      const row = await s.server.ctx.metadata.db.selectFrom('idempotency_keys').select('state').where('idem_key', '=', 'slow-1').executeTakeFirst();
      if (row?.state === 'running') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    let busy: Answer | undefined;
    for (let i = 0; i < 100; i++) {
      busy = await upload(s, m, s.tenants.a.token, 'slow-1').answer;
      if (busy.status === 409) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(busy!.status, 409, busy!.text);
    assert.equal(busy!.headers['retry-after'], '1');
    assert.match(busy!.body.error.message, /still being processed/);
    first.resume();
    const done = await first.answer;
    assert.equal(done.status, 201, done.text);
    const later = await upload(s, m, s.tenants.a.token, 'slow-1').answer;
    assert.equal(later.text, done.text);
    assert.equal(later.headers['idempotent-replayed'], 'true');
  });

  test('an upload refused before its body ended (413 on the free plan) is not remembered: its body cannot be compared, so the key stays free', { timeout: 30_000 }, async () => {
    const m = multipart([{ name: 'file', value: sized('image/png', 30_000_000), filename: 'over.png', type: 'image/png' }]);
    // The client stops sending 2 MB past the free plan's 10 MB and never goes on: the answer can
    // only come if the server refuses before the body ends (a server waiting for all 30 MB hangs
    // here until the test's timeout). Counting bytes sent when the answer arrived instead failed
    // on a loaded machine, where the client wrote all 30 MB before it saw the answer.
    const refused = await upload(s, m, s.tenants.b.token, 'over-1', { holdAfter: 12_000_000 }).answer;
    assert.equal(refused.status, 413, refused.text);
    assert.equal(refused.body.error.code, 'file_too_large');
    assert.ok(refused.sentWhenAnswered < m.body.length, 'answered before the whole body was sent');
    const rows = await s.server.ctx.metadata.db.selectFrom('idempotency_keys').select(['state']).where('idem_key', '=', 'over-1').execute();
    assert.deepEqual(rows.map((r) => r.state), ['failed']);
    // The same key with a body that fits runs.
    const fits = multipart([{ name: 'file', value: sized('image/png', 1_000), filename: 'fits.png', type: 'image/png' }]);
    const ok = await upload(s, fits, s.tenants.b.token, 'over-1').answer;
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.headers['idempotent-replayed'], undefined);
  });

  test('a client that goes away mid-upload leaves the key free: the retry with the same key uploads', async () => {
    const m = multipart([{ name: 'file', value: sized('image/png', 1_000_000), filename: 'gone.png', type: 'image/png' }]);
    const req = http.request(`${s.baseUrl}/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.tenants.a.token}`, 'content-type': m.contentType, 'content-length': m.body.length, 'idempotency-key': 'gone-1' },
    });
    req.on('error', () => {});
    req.write(m.body.subarray(0, 300_000));
    const state = async () => (await s.server.ctx.metadata.db.selectFrom('idempotency_keys').select('state').where('idem_key', '=', 'gone-1').executeTakeFirst())?.state;
    for (let i = 0; i < 100 && (await state()) !== 'running'; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await state(), 'running');
    req.destroy();
    for (let i = 0; i < 100 && (await state()) === 'running'; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await state(), 'failed', 'released once the request ended');
    const retry = await upload(s, m, s.tenants.a.token, 'gone-1').answer;
    assert.equal(retry.status, 201, retry.text);
  });

  test('a refusal after the whole body arrived (415: the bytes are not the declared type) is remembered with the body it judged', async () => {
    const m = multipart([{ name: 'file', value: sized('image/png', 2_000), filename: 'lie.gif', type: 'image/gif' }]);
    const refused = await upload(s, m, s.tenants.a.token, 'lie-1').answer;
    assert.equal(refused.status, 415, refused.text);
    const again = await upload(s, m, s.tenants.a.token, 'lie-1').answer;
    assert.equal(again.text, refused.text);
    assert.equal(again.headers['idempotent-replayed'], 'true');
  });
});
