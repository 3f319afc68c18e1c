import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { loadConfig } from '../config/config.js';
import { createContext } from '../app/context.js';
import { buildApi } from '../app/build-api.js';
import { createLogger } from '../kernel/logger.js';
import { PublicUrls } from '../kernel/public-urls.js';
import { systemClock } from '../shared/clock.js';
import { IdempotencyStore } from '../idempotency/index.js';
import { legs } from '../test-support/ci.js';

/** Sends raw bytes and reads until the server closes or `ms` pass; returns status and body. */
function raw(apiUrl: string, bytes: string | Buffer, ms = 3000): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(apiUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(bytes));
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (data += chunk));
    const done = () => {
      clearTimeout(timer);
      const [head = '', body = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head, body });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      done();
    }, ms);
    socket.on('close', done);
    socket.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? done() : reject(error)));
  });
}

function assertEnvelope(body: string, code: string): { code: string; message: string; request_id: string } {
  const parsed = JSON.parse(body) as { error: { code: string; message: string; request_id: string } };
  assert.deepEqual(Object.keys(parsed), ['error'], body);
  assert.equal(parsed.error.code, code, body);
  assert.equal(typeof parsed.error.message, 'string');
  assert.match(parsed.error.request_id, /^req_/);
  return parsed.error;
}

const leakedToken = 'ops_live_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';

describe('every error is the envelope, from any layer', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ plan: 'pro' });
  });
  after(() => s.close());

  test('a request line over 16 KB is 413 too_large in the envelope, not Fastify\'s raw 431', async () => {
    const res = await raw(s.apiUrl, `GET /v1/orgs?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.equal(res.status, 413, res.headers);
    assert.match(res.headers, /content-type: application\/json/i);
    const error = assertEnvelope(res.body, 'too_large');
    assert.match(error.message, /16384 bytes/);
    assert.equal((JSON.parse(res.body) as { error: { limit: number } }).error.limit, 16384);
  });

  test('bytes that are not HTTP get a 400 envelope', async () => {
    const res = await raw(s.apiUrl, 'HELLO THERE\r\n\r\n');
    assert.equal(res.status, 400, res.headers);
    assertEnvelope(res.body, 'bad_request');
  });

  test('a malformed %-escape in the path is a 400 envelope with the X-Request-Id', async () => {
    const res = await raw(s.apiUrl, 'GET /v1/datasets/%zz/schema HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.equal(res.status, 400, res.headers);
    const error = assertEnvelope(res.body, 'bad_request');
    assert.match(res.headers, new RegExp(`x-request-id: ${error.request_id}`, 'i'));
  });

  test('the delivery listener answers its errors in the envelope too', async () => {
    const missing = await fetch(`${s.cdnUrl}/fedcba9876543210fedcba9876543210/missing.png`);
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('cache-control'), 'no-store');
    const error = assertEnvelope(await missing.text(), 'not_found');
    assert.equal(error.request_id, missing.headers.get('x-request-id'));
    const unknown = await fetch(`${s.cdnUrl}/nothing`);
    assert.equal(unknown.status, 404);
    assertEnvelope(await unknown.text(), 'not_found');
    const overflow = await raw(s.cdnUrl, `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.equal(overflow.status, 413, overflow.headers);
    assertEnvelope(overflow.body, 'too_large');
  });

  test('a token in the URL is never logged nor echoed in an error body', async () => {
    const inQuery = await s.request('GET', `/nothing?token=${leakedToken}`, { token: null });
    assert.equal(inQuery.status, 404);
    const inPath = await s.request('GET', `/tokens/${leakedToken}/x`);
    assert.equal(inPath.status, 404);
    assert.doesNotMatch(inPath.text, /0123456789abcdef/);
    assert.match(inPath.body.error.message, /ops_live_\[redacted\]/);
    const asOrg = await s.request('GET', `/orgs/${leakedToken}/members`);
    assert.doesNotMatch(asOrg.text, /0123456789abcdef/);
    const logged = s.logs.join('\n');
    assert.match(logged, /ops_live_\[redacted\]/, 'the request was logged, with the token redacted');
    assert.doesNotMatch(logged, /0123456789abcdef/);
  });

  test('JSON bodies are not type-coerced: a wrong type is 400 naming the field', async () => {
    const q = await s.request('POST', '/query', { json: { q: 5 } });
    assert.equal(q.status, 400, q.text);
    assert.equal(q.body.error.code, 'bad_request');
    assert.match(q.body.error.message, /field "q" must be string/);

    const numeric = await s.request('POST', '/datasets', { json: { name: 123 } });
    assert.equal(numeric.status, 400, numeric.text);
    assert.match(numeric.body.error.message, /field "name"/);
    const array = await s.request('POST', '/datasets', { json: { name: ['x'] } });
    assert.equal(array.status, 400, array.text);
    const list = await s.request('GET', '/datasets');
    assert.deepEqual(list.body.datasets.map((d: { name: string }) => d.name).filter((n: string) => n === '123' || n === 'x'), []);

    const scopes = await s.request('POST', '/tokens', { json: { name: 'ci', scopes: 'media:read' } });
    assert.equal(scopes.status, 400, scopes.text);
    assert.match(scopes.body.error.message, /field "scopes" must be array/);
    const days = await s.request('POST', '/datasets', { json: { name: 'typed', retention_days: '3' } });
    assert.equal(days.status, 400, days.text);
    assert.match(days.body.error.message, /field "retention_days"/);
    const missing = await s.request('POST', '/datasets', { json: {} });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error.message, /field "name" is required/);
    assert.equal(missing.body.error.field, 'name');
    assert.equal(q.body.error.field, 'q');
  });

  test('a value outside a list of allowed ones is answered with the list, naming the field', async () => {
    // A union of literals (the monitor condition's op) and an enum-like union (a token's mode).
    const op = await s.request('POST', '/monitors', { json: { name: 'm', kind: 'threshold', q: 'stats count()', channel_ids: [], window: '5m', condition: { op: '!=', value: 1 } } });
    assert.equal(op.status, 400, op.text);
    assert.equal(op.body.error.field, 'condition.op');
    assert.match(op.body.error.message, /field "condition\.op" must be one of ">", ">=", .*"<="/);
    assert.doesNotMatch(op.body.error.message, /constant/);
    const kind = await s.request('POST', '/monitors', { json: { name: 'm', kind: 'sometimes', q: 'event:x', channel_ids: [] } });
    assert.equal(kind.status, 400, kind.text);
    assert.match(kind.body.error.message, /"threshold"|"match"/);
  });

  test('query strings still parse numbers', async () => {
    const res = await s.request('GET', '/datasets?limit=2');
    assert.equal(res.status, 200, res.text);
  });

  test('a 415 names the content types the endpoint takes; NDJSON sent as JSON is told its type', async () => {
    const query = await s.request('POST', '/query', { body: 'severity >= warn', headers: { 'content-type': 'text/plain' } });
    assert.equal(query.status, 415, query.text);
    assert.equal(query.body.error.code, 'unsupported_type');
    assert.match(query.body.error.message, /"text\/plain".*application\/json/);
    const media = await s.request('POST', '/media', { body: 'hello', headers: { 'content-type': 'text/plain' } });
    assert.equal(media.status, 415, media.text);
    assert.match(media.body.error.message, /multipart\/form-data/);
    const mediaJson = await s.request('POST', '/media', { json: { data: 'aGVsbG8=' } });
    assert.equal(mediaJson.status, 415, mediaJson.text);
    assert.match(mediaJson.body.error.message, /multipart\/form-data/);
    assert.match(mediaJson.body.error.message, /\/media\/base64/);
    // NDJSON sent as application/json: told the type that takes it.
    const ndjson = await s.request('POST', '/datasets/hint/ingest', { body: '{"event":"a"}\n{"event":"b"}\n', headers: { 'content-type': 'application/json' } });
    assert.equal(ndjson.status, 400, ndjson.text);
    assert.match(ndjson.body.error.message, /Content-Type: application\/x-ndjson/);
    const broken = await s.request('POST', '/datasets/hint/ingest', { body: '{"event":', headers: { 'content-type': 'application/json' } });
    assert.equal(broken.status, 400);
    assert.equal(broken.body.error.message, 'the request body is not valid JSON');
  });

  test('an announced endpoint\'s 501 is logged as one info line, not an error with a stack', async () => {
    const before = s.logs.length;
    const res = await s.request('GET', '/cases');
    assert.equal(res.status, 501, res.text);
    const lines = s.logs.slice(before).map((l) => JSON.parse(l) as { level: number; err?: unknown });
    assert.equal(lines.filter((l) => l.level >= 40).length, 0, lines.map((l) => JSON.stringify(l)).join('\n'));
    assert.equal(lines.filter((l) => l.err).length, 0);
  });

  test('a client that disconnects mid-body is logged below error level', async () => {
    const before = s.logs.length;
    const { hostname, port } = new URL(s.apiUrl);
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    for (const target of ['/v1/datasets/gone/ingest', '/v1/media', '/v1/media/base64', '/v1/query']) {
      const multipart = target === '/v1/media';
      await new Promise<void>((resolve) => {
        const socket = net.connect(Number(port), hostname, () => {
          socket.write(
            `POST ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.tenants.a.token}\r\n` +
              `Content-Type: ${multipart ? 'multipart/form-data; boundary=xyz' : 'application/json'}\r\nContent-Length: 100000\r\n\r\n`,
          );
          socket.write(
            multipart
              ? Buffer.concat([Buffer.from('--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n'), png, Buffer.alloc(5000)])
              : '[{"data":"aaaa',
          );
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 400);
        });
      });
    }
    await new Promise((r) => setTimeout(r, 1000));
    const lines = s.logs.slice(before).map((l) => JSON.parse(l) as { level: number; msg: string; err?: { message: string } });
    assert.deepEqual(lines.filter((l) => l.level >= 50 || l.err).map((l) => `${l.msg} ${l.err?.message ?? ''}`), []);
  });
});

describe('a reply that fails to serialise still renders the envelope', () => {
  test('500 internal with request_id, not FST_ERR_FAILED_ERROR_SERIALIZATION', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-envelope-'));
    const config = loadConfig({ OPS_PORT: '0', OPS_HOST: '127.0.0.1', OPS_DATA_DIR: dataDir });
    const ctx = await createContext(config, systemClock);
    const logs: string[] = [];
    const stream = new Writable({ write: (chunk: Buffer, _e, done) => (logs.push(chunk.toString()), done()) });
    const api = await buildApi(ctx, {
      logger: createLogger({ level: 'info', stream }),
      urls: new PublicUrls(config),
      idempotency: new IdempotencyStore(ctx.metadata.db, ctx.clock),
      routes: [
        (v1) => {
          // A handler whose answer does not fit its declared response: the serializer throws.
          // Shaped like POST /query's (a union of two results, the error body for 4xx/5xx), the
          // route where a group value of an unexpected type once answered outside the envelope.
          const response = {
            200: Type.Union([
              Type.Object({ events: Type.Array(Type.String()) }, { additionalProperties: false }),
              Type.Object(
                { field: Type.String(), groups: Type.Array(Type.Object({ value: Type.Union([Type.String(), Type.Number(), Type.Null()]) }, { additionalProperties: false })) },
                { additionalProperties: false },
              ),
            ]),
            '4xx': Type.Ref('ErrorBody'),
            '5xx': Type.Ref('ErrorBody'),
          };
          v1.get('/broken', { config: { public: true }, schema: { response } }, async (_request, reply) => {
            // As POST /query does: a reply serializer chosen by the handler for its branch.
            reply.serializer(reply.compileSerializationSchema(response[200].anyOf[1]));
            return { field: 'payload.a', groups: [{ value: { a: 1 } }] } as never;
          });
        },
      ],
    });
    try {
      const url = await api.listen({ port: 0, host: '127.0.0.1' });
      const res = await fetch(`${url}/v1/broken`);
      assert.equal(res.status, 500);
      const error = assertEnvelope(await res.text(), 'internal');
      assert.equal(error.request_id, res.headers.get('x-request-id'));
      assert.equal(error.message, 'an unexpected error occurred');
    } finally {
      await api.close();
      await ctx.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the data directory is private', () => {
  legs.sqlite().test('created 0700 with metadata and key files 0600; an existing 0755 directory is tightened', async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-modes-'));
    const dataDir = path.join(parent, 'data');
    const config = loadConfig({ OPS_PORT: '0', OPS_HOST: '127.0.0.1', OPS_DATA_DIR: dataDir });
    const umask = process.umask();
    try {
      const ctx = await createContext(config, systemClock);
      await ctx.close();
      const mode = (p: string) => (fs.statSync(p).mode & 0o777).toString(8);
      assert.equal(mode(dataDir), '700');
      assert.equal(mode(path.join(dataDir, 'metadata.sqlite')), '600');
      assert.equal(mode(path.join(dataDir, 'secret.key')), '600');
      fs.chmodSync(dataDir, 0o755);
      fs.chmodSync(path.join(dataDir, 'metadata.sqlite'), 0o644);
      const again = await createContext(config, systemClock);
      await again.close();
      assert.equal(mode(dataDir), '700');
      assert.equal(mode(path.join(dataDir, 'metadata.sqlite')), '600');
    } finally {
      process.umask(umask);
      fs.rmSync(parent, { recursive: true, force: true });
    }
  });
});
