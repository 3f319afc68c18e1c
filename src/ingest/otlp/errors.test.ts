import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { startTestServer, type TestServer } from '../../test-support/test-server.js';
import { matchAll } from '../../engine/event-store.js';
import { anyValueOf, decodeResponse, decodeStatus, logsRequest, postLogs, toProtobuf, type JsonValue, type OtlpAnswer } from '../../test-support/ingest/otlp-test-requests.js';

const one = (message: string) => logsRequest({ records: [{ body: { stringValue: message } }] });
/** A kvlist nested `depth` levels: a record attribute of it sits `depth + 1` levels into the payload. */
const nested = (depth: number): JsonValue => (depth === 0 ? 'leaf' : { k: nested(depth - 1) });

/** The answer is OTLP's error for a protobuf request: google.rpc.Status carrying our code. */
function assertStatus(r: OtlpAnswer, status: number, code: string, grpcCode: number) {
  assert.equal(r.status, status, r.bytes.toString());
  assert.equal(r.headers.get('content-type'), 'application/x-protobuf');
  const body = decodeStatus(r.bytes);
  assert.deepEqual([body.code, body.reason], [grpcCode, code], JSON.stringify(body));
  assert.equal(body.metadata.request_id, r.headers.get('x-request-id'));
  return body;
}

function assertJsonError(r: OtlpAnswer, status: number, code: string) {
  assert.equal(r.status, status, r.bytes.toString());
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(r.json.error.code, code, r.bytes.toString());
  return r.json.error as Record<string, unknown>;
}

describe('POST /v1/otlp/v1/logs: encodings, limits and refusals', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());
  const post = (body: object | Buffer, options?: Parameters<typeof postLogs>[3], token: string | null = s.tenants.a.token) => postLogs(s.baseUrl, token, body, options);
  const messages = async (dataset: string) =>
    (await s.server.events.store.query(s.tenants.a, { filter: matchAll, limit: 1000 })).events.filter((e) => e.dataset === dataset).map((e) => e.message).sort();

  test('gzip bodies in both encodings; an empty request is a success that stores nothing', async () => {
    assert.deepEqual((await post(one('json gz'), { gzip: true, headers: { 'x-ops-dataset': 'gz' } })).json, {});
    const proto = await post(toProtobuf(one('proto gz')), { gzip: true, headers: { 'x-ops-dataset': 'gz' } });
    assert.deepEqual([proto.status, proto.headers.get('content-type'), proto.bytes.length], [200, 'application/x-protobuf', 0]);
    assert.deepEqual(await messages('gz'), ['json gz', 'proto gz']);
    assert.deepEqual((await post({}, { headers: { 'x-ops-dataset': 'empty' } })).json, {});
    assert.deepEqual([(await post(Buffer.alloc(0))).status, (await post({ resourceLogs: [{ scopeLogs: [{ logRecords: [] }] }] })).status], [200, 200]);
    assert.equal((await s.request('GET', '/datasets')).body.datasets.some((d: { name: string }) => d.name === 'empty'), false);
  });

  test('partial_success: a record that breaks a limit is rejected alone, counted, and named in error_message', async () => {
    const request = logsRequest({
      records: [
        { body: { stringValue: 'ok 1' } },
        { body: { stringValue: 'x'.repeat(260_000) } },
        { body: { stringValue: 'too deep' }, attributes: [{ key: 'deep', value: anyValueOf(nested(40)) }] },
        { body: { stringValue: 'wide' }, attributes: Array.from({ length: 1001 }, (_, i) => ({ key: `k${i}`, value: { intValue: i } })) },
        { body: { stringValue: 'unknown severity' }, severityText: 'loud' },
        { body: { stringValue: 'ok 2' }, attributes: [{ key: 'deep enough', value: anyValueOf(nested(30)) }] },
      ],
    });
    const json = await post(request, { headers: { 'x-ops-dataset': 'partial' } });
    assert.equal(json.status, 200);
    assert.equal(json.json.partialSuccess.rejectedLogRecords, '4');
    const message = json.json.partialSuccess.errorMessage as string;
    assert.match(message, /^4 of 6 log records were rejected: resourceLogs\[0\]\.scopeLogs\[0\]\.logRecords\[1\]: an event may be at most 256000 bytes; /);
    assert.match(message, /logRecords\[2\]: the payload nests objects and arrays more than 32 levels deep/);
    assert.match(message, /logRecords\[3\]: the payload has more than 1000 keys/);
    assert.match(message, /logRecords\[4\]: unknown severity "loud"/);
    const proto = decodeResponse((await post(toProtobuf(request), { headers: { 'x-ops-dataset': 'partial' } })).bytes);
    assert.deepEqual(proto, { rejected: 4, errorMessage: message });
    assert.deepEqual(await messages('partial'), ['ok 1', 'ok 1', 'ok 2', 'ok 2']);
  });

  test('bad data is 400: malformed protobuf (a google.rpc.Status), malformed or mistyped OTLP/JSON (the error body)', async () => {
    const truncated = toProtobuf(one('cut')).subarray(0, 10);
    assert.match(assertStatus(await post(truncated), 400, 'bad_request', 3).message, /not a protobuf ExportLogsServiceRequest/);
    assertStatus(await post(Buffer.from([0x0f, 0xff, 0xff])), 400, 'bad_request', 3);
    let deep: unknown = { stringValue: 'x' };
    for (let i = 0; i < 200; i++) deep = { arrayValue: { values: [deep] } };
    assert.match(assertStatus(await post(toProtobuf(logsRequest({ records: [{ body: deep }] }))), 400, 'bad_request', 3).message, /nests messages more than 128 deep/);

    assert.match(String(assertJsonError(await post(Buffer.from('{"resourceLogs": ['), { contentType: 'application/json' }), 400, 'bad_request').message), /not valid JSON/);
    assertJsonError(await post(Buffer.from('[1]'), { contentType: 'application/json' }), 400, 'bad_request');
    const cases: Array<[object, RegExp]> = [
      [{ resourceLogs: 5 }, /resourceLogs must be an array/],
      [logsRequest({ records: [{ traceId: 'xyz' }] }), /logRecords\[0\]\.traceId must be a hex string/],
      [logsRequest({ records: [{ spanId: 'abcd' }] }), /spanId must be 8 bytes/],
      [logsRequest({ records: [{ severityNumber: 'SEVERITY_NUMBER_WARN' }] }), /severityNumber must be an integer/],
      [logsRequest({ records: [{ timeUnixNano: '-1' }] }), /timeUnixNano is out of range/],
      [logsRequest({ records: [{ body: { intValue: 1.5 } }] }), /body\.intValue must be an integer/],
      [logsRequest({ records: [{ attributes: [{ key: 'b', value: { bytesValue: '*' } }] }] }), /attributes\[0\]\.value\.bytesValue must be a base64 string/],
    ];
    for (const [body, pattern] of cases) assert.match(String(assertJsonError(await post(body), 400, 'bad_request').message), pattern);
    assert.equal((await post(Buffer.from('\x1f\x8b garbage'), { headers: { 'content-encoding': 'gzip' } })).status, 400);
    assertJsonError(await post(Buffer.from('x'), { contentType: 'text/plain' }), 415, 'unsupported_type');
  });

  test('401 without a valid token, 403 without logs:write (required_scope), in the error form of the encoding', async () => {
    const noToken = await post(toProtobuf(one('x')), {}, null);
    assertStatus(noToken, 401, 'unauthorized', 16);
    assert.equal(noToken.headers.get('www-authenticate'), 'Bearer');
    assertJsonError(await post(one('x'), {}, 'ops_live_not-a-token'), 401, 'unauthorized');
    const reader = await s.token(s.tenants.a, ['logs:read']);
    assert.equal(assertJsonError(await post(one('x'), {}, reader), 403, 'forbidden').required_scope, 'logs:write');
    assert.equal(assertStatus(await post(toProtobuf(one('x')), {}, reader), 403, 'forbidden', 7).metadata.required_scope, 'logs:write');
  });

  test('too large (413): over 10 MB, a gzip bomb, over 10,000 records', async () => {
    const huge = Buffer.alloc(10_000_001, 0x20);
    assert.equal(assertJsonError(await post(huge, { contentType: 'application/json' }), 413, 'too_large').limit, 10_000_000);
    const bomb = zlib.gzipSync(Buffer.alloc(12_000_000));
    assert.equal(assertStatus(await post(bomb, { headers: { 'content-encoding': 'gzip' } }), 413, 'too_large', 8).metadata.limit, '10000000');
    assertJsonError(await post(Buffer.from(' '.repeat(12_000_000)), { contentType: 'application/json', gzip: true }), 413, 'too_large');
    const many = logsRequest({ records: Array.from({ length: 10_001 }, () => ({})) });
    assert.match(String(assertJsonError(await post(many), 413, 'too_large').message), /at most 10000 log records/);
    assert.match(assertStatus(await post(toProtobuf(many)), 413, 'too_large', 8).message, /at most 10000 log records/);
    const exactly = logsRequest({ records: Array.from({ length: 10_000 }, () => ({ body: { stringValue: 'n' } })) });
    assert.deepEqual((await post(toProtobuf(exactly), { headers: { 'x-ops-dataset': 'exactly' } })).bytes.length, 0);
  });

  test('503 storage_error with Retry-After when the event store fails; nothing is acknowledged', async () => {
    const store = s.server.events.store;
    const append = store.append;
    store.append = () => Promise.reject(new Error('disk on fire'));
    try {
      const proto = assertStatus(await post(toProtobuf(one('lost'))), 503, 'storage_error', 14);
      assert.doesNotMatch(proto.message, /fire/);
      assert.ok(Number((await post(one('lost'))).headers.get('retry-after')) > 0);
    } finally {
      store.append = append;
    }
  });

  test('the operation is in the OpenAPI document with both encodings; other routes still parse JSON', async () => {
    const doc = (await s.request('GET', '/openapi.json', { token: null })).body;
    const op = doc.paths['/v1/otlp/v1/logs'].post;
    assert.equal(op.operationId, 'exportOtlpLogs');
    assert.deepEqual(Object.keys(op.requestBody.content).sort(), ['application/json', 'application/x-protobuf']);
    assert.deepEqual(Object.keys(op.responses['200'].content).sort(), ['application/json', 'application/x-protobuf']);
    assert.ok(op.parameters.some((p: { name: string }) => p.name === 'X-Ops-Dataset'));
    assert.equal((await s.request('POST', '/query', { json: { q: '' } })).status, 200);
  });
});

describe('POST /v1/otlp/v1/logs: plan quota and rate limit', () => {
  test('events_month exhausted: 402 quota_exceeded and nothing stored; over the rate limit: 429 with Retry-After', async () => {
    const t = await startTestServer({ plan: 'free', env: { OPS_RATE_LIMIT_PER_SECOND: '1', OPS_RATE_LIMIT_BURST: '3' } });
    try {
      const { orgId } = t.tenants.a;
      const used = (await t.server.ctx.quotas.usage(orgId, 'free')).find((q) => q.metric === 'events_month')!.used;
      await t.server.ctx.quotas.consume(orgId, 'free', 'events_month', 1_000_000 - used - 1);
      const two = logsRequest({ records: [{ body: { stringValue: 'a' } }, { body: { stringValue: 'b' } }] });
      const json = await postLogs(t.baseUrl, t.tenants.a.token, two, { headers: { 'x-ops-dataset': 'q' } });
      assert.deepEqual([json.status, json.json.error.code, json.json.error.metric], [402, 'quota_exceeded', 'events_month']);
      const proto = await postLogs(t.baseUrl, t.tenants.a.token, toProtobuf(two), { headers: { 'x-ops-dataset': 'q' } });
      assertStatus(proto, 402, 'quota_exceeded', 8);
      assert.equal((await t.server.events.store.query(t.tenants.a, { filter: matchAll, limit: 10 })).events.length, 0);
      let limited = proto;
      for (let i = 0; i < 5 && limited.status !== 429; i++) limited = await postLogs(t.baseUrl, t.tenants.a.token, toProtobuf(two));
      assertStatus(limited, 429, 'rate_limited', 8);
      assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    } finally {
      await t.close();
    }
  });

  test('Idempotency-Key: a retried export (protobuf) gets the first answer byte for byte and stores nothing twice; another body is 409', async () => {
    const t = await startTestServer();
    try {
      const body = toProtobuf(logsRequest({ records: [{ body: { stringValue: 'once' } }, { body: { stringValue: 'twice?' } }, { severityNumber: 99 }] }));
      const headers = { 'x-ops-dataset': 'keyed', 'idempotency-key': 'export-1' };
      const first = await postLogs(t.baseUrl, t.tenants.a.token, body, { headers });
      assert.equal(first.status, 200);
      assert.deepEqual(decodeResponse(first.bytes)?.rejected, 1);
      const again = await postLogs(t.baseUrl, t.tenants.a.token, body, { headers });
      assert.equal(again.status, 200);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(again.bytes, first.bytes);
      const stored = (await t.server.events.store.query(t.tenants.a, { filter: matchAll, limit: 10 })).events.map((e) => e.message).sort();
      assert.deepEqual(stored, ['once', 'twice?']);
      const other = await postLogs(t.baseUrl, t.tenants.a.token, toProtobuf(one('else')), { headers });
      assertStatus(other, 409, 'conflict', 9);
    } finally {
      await t.close();
    }
  });
});
