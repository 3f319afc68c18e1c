import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import protobuf from 'protobufjs';
import snappy from 'snappy';
import { startTestServer, type TestServer } from '../../test-support/test-server.js';
import { TailClient } from '../../test-support/tail/test-client.js';
import { query } from '../../test-support/ingest/test-queries.js';
import { pushProto } from './push-proto.js';

/**
 * The fixture's encoder: protobufjs reading Loki's push.proto text on its own (a root of its
 * own, not the route's decoder), then snappy's block format, as Promtail and Alloy send.
 */
const fixtureRoot = protobuf.parse(pushProto, { keepCase: true }).root;
fixtureRoot.add(protobuf.Root.fromJSON(protobuf.common.get('google/protobuf/timestamp.proto')!).lookup('google')!);
const FixturePushRequest = fixtureRoot.lookupType('logproto.PushRequest');

interface FixtureStream {
  labels: string;
  entries: Array<{ timestamp?: { seconds: number; nanos: number }; line: string; structuredMetadata?: Array<{ name: string; value: string }> }>;
}
const encodePush = (streams: FixtureStream[]) => snappy.compressSync(Buffer.from(FixturePushRequest.encode(FixturePushRequest.fromObject({ streams })).finish()));

const at = Date.parse('2026-11-21T17:19:00.123Z');
const seconds = Math.floor(at / 1000);

describe('POST /v1/loki/api/v1/push: the protocol, bad input and the write path', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ env: { OPS_TAIL_HEARTBEAT_MS: '60000', OPS_TAIL_POLL_MS: '200' } });
  });
  after(() => s.close());

  const push = (body: Buffer | string, headers: Record<string, string> = {}, token: string | null = s.tenants.a.token) =>
    s.request('POST', '/loki/api/v1/push', { body: typeof body === 'string' ? Buffer.from(body) : body, headers: { 'content-type': 'application/x-protobuf', ...headers }, token });
  const json = (streams: unknown, headers: Record<string, string> = {}, token?: string) =>
    push(JSON.stringify({ streams }), { 'content-type': 'application/json', ...headers }, token);

  test("a logproto.PushRequest fixture (protobufjs from Loki's push.proto, snappy): labels with escapes, nanosecond timestamps, structured metadata; seen on live tail", async () => {
    assert.equal((await s.request('POST', '/datasets', { json: { name: 'promtail' } })).status, 201);
    const opened = await TailClient.open(s.baseUrl, s.tenants.a.token, 'dataset:promtail');
    assert.equal(opened.status, 200);
    const tail = (opened as { client: TailClient }).client;
    const r = await push(
      encodePush([
        {
          labels: '{job="promtail", filename="/var/log/game \\"eu\\".log", level="warn"}',
          entries: [
            { timestamp: { seconds, nanos: 123_456_789 }, line: 'plain text line', structuredMetadata: [{ name: 'trace_id', value: 'abc' }] },
            { timestamp: { seconds, nanos: 124_000_000 }, line: '{"msg":"json line","level":"error","player":{"id":7}}' },
          ],
        },
        { labels: '{}', entries: [{ line: 'no labels, no timestamp' }] },
      ]),
    );
    assert.equal(r.status, 204, r.text);
    assert.equal(r.text, '');
    const events = (await query(s, 'dataset:promtail')).events.sort((a, b) => String(a.ts).localeCompare(String(b.ts)));
    assert.deepEqual(
      events.map((e) => [e.ts, e.severity, e.message, e.payload]),
      [
        ['2026-11-21T17:19:00.123Z', 'warn', 'plain text line', { labels: { filename: '/var/log/game "eu".log', level: 'warn', trace_id: 'abc' } }],
        ['2026-11-21T17:19:00.124Z', 'error', 'json line', { player: { id: 7 }, labels: { filename: '/var/log/game "eu".log', level: 'warn' } }],
      ],
    );
    const [unlabelled] = (await query(s, 'dataset:loki')).events;
    assert.equal(unlabelled?.message, 'no labels, no timestamp');
    assert.ok(Math.abs(Date.parse(String(unlabelled?.ts)) - s.clock.now()) < 60_000, 'no timestamp: the time of arrival');
    await tail.until((c) => c.events.length >= 2, 5_000, 'the two promtail lines on the tail');
    await tail.close();
  });

  test('JSON with gzip; the dataset label wins over service_name and job; the JSON line message and severity', async () => {
    const body = zlib.gzipSync(
      JSON.stringify({
        streams: [
          { stream: { dataset: 'gz', service_name: 'svc', job: 'j' }, values: [[`${at}000000`, '{"message":"m1","level":30,"n":1}'], [`${at + 1}000000`, 'line 2', { user: 'u1' }]] },
          { stream: { service_name: 'svc', job: 'j' }, values: [[`${at}000000`, 'to svc']] },
        ],
      }),
    );
    const r = await push(body, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    assert.equal(r.status, 204, r.text);
    const gz = (await query(s, 'dataset:gz')).events.sort((a, b) => String(a.ts).localeCompare(String(b.ts)));
    assert.deepEqual(gz.map((e) => [e.message, e.severity, e.payload]), [
      ['m1', 'info', { n: 1, labels: { service_name: 'svc', job: 'j' } }],
      ['line 2', 'info', { labels: { service_name: 'svc', job: 'j', user: 'u1' } }],
    ]);
    assert.deepEqual((await query(s, 'dataset:svc')).events.map((e) => [e.message, e.payload]), [['to svc', { labels: { job: 'j' } }]]);
  });

  test('a line that breaks a limit or a field rule of native ingest is refused alone: 400 in plain text naming it, the others stored', async () => {
    const r = await json([
      { stream: { job: 'partial' }, values: [[`${at}000000`, 'kept'], [`${at}000000`, 'x'.repeat(300_000)], [`${at}000000`, 'kept too'], [`${at}000000`, '{"severity":30}']] },
      { stream: { job: 'Not.A.Dataset' }, values: [[`${at}000000`, 'refused']] },
    ]);
    assert.equal(r.status, 400);
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(r.text, /^3 of 5 log lines were rejected \(the others are stored\): line 1: an event may be at most 256000 bytes; line 3: unknown severity 30; .*; line 4: "Not\.A\.Dataset" is not a dataset name/);
    assert.match(r.text, /bad_request, request id req_/);
    assert.deepEqual((await query(s, 'dataset:partial')).events.map((e) => e.message).sort(), ['kept', 'kept too']);
  });

  test('without a Content-Type the body is read as protobuf + snappy, as Loki does', async () => {
    const body = encodePush([{ labels: '{job="untyped"}', entries: [{ line: 'no content type' }] }]);
    const r = await s.request('POST', '/loki/api/v1/push', { body });
    assert.equal(r.status, 204, r.text);
    assert.deepEqual((await query(s, 'dataset:untyped')).events.map((e) => e.message), ['no content type']);
  });

  test('bad bodies are 400 in plain text and store nothing: not snappy, not protobuf, bad labels, bad JSON shapes', async () => {
    const cases: Array<[string, Buffer | string, string, RegExp]> = [
      ['not snappy', Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), 'application/x-protobuf', /not snappy-compressed/],
      ['snappy of garbage', snappy.compressSync(Buffer.from([0x0a, 0xff, 0xff, 0x01])), 'application/x-protobuf', /not a protobuf logproto\.PushRequest/],
      ['bad labels', encodePush([{ labels: '{job=unquoted}', entries: [{ line: 'x' }] }]), 'application/x-protobuf', /not in label syntax/],
      ['invalid JSON', '{"streams": [', 'application/json', /not valid JSON/],
      ['no streams', '{"stream": {}}', 'application/json', /must be a JSON object \{"streams"/],
      ['a number timestamp', JSON.stringify({ streams: [{ stream: {}, values: [[1.5, 'x']] }] }), 'application/json', /nanoseconds/],
      ['a label value not a string', JSON.stringify({ streams: [{ stream: { a: 1 }, values: [] }] }), 'application/json', /streams\[0\]\.stream\.a must be a string/],
    ];
    for (const [what, body, type, message] of cases) {
      const r = await push(body, { 'content-type': type });
      assert.equal(r.status, 400, `${what}: ${r.text}`);
      assert.match(r.text, message, what);
      assert.match(r.headers.get('content-type') ?? '', /^text\/plain/, what);
    }
    const other = await push('x', { 'content-type': 'text/csv' });
    assert.deepEqual([other.status, /application\/x-protobuf/.test(other.text)], [415, true]);
  });

  test('past the limits: 413 in plain text (over 10 MB inflated, a gzip bomb, more than 10,000 lines)', async () => {
    const big = Buffer.alloc(10_000_001, 'a');
    const snappyBig = await push(snappy.compressSync(big));
    assert.equal(snappyBig.status, 413, snappyBig.text);
    assert.match(snappyBig.text, /at most 10000000 bytes after decompression \(too_large/);
    const bomb = await push(zlib.gzipSync(big), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    assert.equal(bomb.status, 413);
    const lines = Array.from({ length: 10_001 }, (_, i) => ({ line: `l${i}` }));
    const many = await push(encodePush([{ labels: '{job="many"}', entries: lines }]));
    assert.equal(many.status, 413, many.text);
    assert.match(many.text, /at most 10000 log lines/);
    const manyJson = await json([{ stream: { job: 'many' }, values: lines.map((l) => [`${at}000000`, l.line]) }]);
    assert.equal(manyJson.status, 413);
    const datasets = (await s.request('GET', '/datasets')).body.datasets as Array<{ name: string }>;
    assert.equal(datasets.some((d) => d.name === 'many'), false, 'nothing stored, not even the dataset');
  });

  test('a wrong token is 401 (plain text, WWW-Authenticate), in each scheme; a token without logs:write is 403', async () => {
    const body = encodePush([{ labels: '{job="auth"}', entries: [{ line: 'x' }] }]);
    const wrong = 'ops_live_00000000000000000000000000000000000000000';
    for (const authorization of [`Bearer ${wrong}`, `Basic ${Buffer.from(`u:${wrong}`).toString('base64')}`, 'Basic bm9wZQ==']) {
      const r = await push(body, { authorization }, null);
      assert.equal(r.status, 401, authorization);
      assert.equal(r.headers.get('www-authenticate'), 'Bearer');
      assert.match(r.text, /unauthorized, request id/);
    }
    const readOnly = await s.token(s.tenants.a, ['logs:read']);
    const r = await push(body, {}, readOnly);
    assert.equal(r.status, 403);
    assert.match(r.text, /logs:write/);
  });

  test("tenancy: another tenant's lines are never visible", async () => {
    for (const [tenant, line] of [['b', 'from b'], ['aTest', 'from a test'], ['aOther', 'from a other']] as const) {
      assert.equal((await json([{ stream: { job: 'tenancy' }, values: [[`${at}000000`, line]] }], {}, s.tenants[tenant].token)).status, 204);
    }
    // Tenant A has no such dataset: its query is refused as for any unknown dataset.
    assert.equal((await s.request('POST', '/query', { json: { q: 'dataset:tenancy' } })).status, 404);
    assert.deepEqual((await query(s, 'dataset:tenancy', s.tenants.b.token)).events.map((e) => e.message), ['from b']);
  });

  test('Idempotency-Key: a retried push is answered again and stored once', async () => {
    const body = encodePush([{ labels: '{job="keyed"}', entries: [{ line: 'once' }, { line: 'twice?' }] }]);
    const first = await push(body, { 'idempotency-key': 'push-1' });
    const again = await push(body, { 'idempotency-key': 'push-1' });
    assert.deepEqual([first.status, again.status, again.headers.get('idempotent-replayed')], [204, 204, 'true']);
    assert.deepEqual((await query(s, 'dataset:keyed')).events.map((e) => e.message).sort(), ['once', 'twice?']);
  });
});
