import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import snappy from 'snappy';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { query } from '../test-support/ingest/test-queries.js';
import { pushProto } from './loki/push-proto.js';

// DECISIONS §21: the same JSON event sent natively, through Loki (JSON and protobuf) or through
// the bulk API is stored as the same row, Loki's labels aside (payload.labels). Each route's
// lines go to a tenant of their own, so an event_id is stored on every route (de-duplication is
// per tenant).

const fixtureRoot = protobuf.parse(pushProto, { keepCase: true }).root;
fixtureRoot.add(protobuf.Root.fromJSON(protobuf.common.get('google/protobuf/timestamp.proto')!).lookup('google')!);
const FixturePushRequest = fixtureRoot.lookupType('logproto.PushRequest');

const id = '0190A3B2-0000-7000-8000-00000000ABCD';

/** Every field native ingest knows under each of its names, nested payloads, unknown keys, odd ts forms, numeric levels: the exact lines each route sends. */
const lines = [
  '{"ts":"2025-06-01T10:00:00.123Z","severity":"warn","event":"kill","actor":"p1","source":"eu-1","message":"all fields","payload":{"map":"dust2","round":{"n":3}},"region":"eu"}',
  '{"@timestamp":"2025-06-01T12:00:01.5+02:00","level":"error","msg":"pino names","event":"e2","extra":{"a":[1,2]}}',
  '{"timestamp":1748772002000,"log.level":"notice","message":"dotted log.level, epoch ms"}',
  '{"time":"2025-06-01T10:00:03Z","log":{"level":"WARNING","logger":"net"},"message":"nested log.level"}',
  '{"time":1748772004123,"level":30,"msg":"pino numeric level","pid":42,"hostname":"h"}',
  '{"ts":1748772005000.9,"level":60,"severity":"debug","message":"severity over level"}',
  '{"ts":"2025-06-01 10:00:06Z","level":5,"event":"level_up","message":"a game level stays"}',
  '{"@timestamp":"yesterday","timestamp":"2025-06-01T10:00:07.000000001Z","level":"loud","log.level":"crit","message":"the first usable alias"}',
  `{"ts":"2025-06-01T10:00:08Z","event_id":"${id}","message":"with an event id"}`,
  '{"ts":"2025-06-01T10:00:09Z","message":"payload merge","payload":{"k":"from payload","n":{"deep":[{"x":1}]}},"k":"top-level","other":null}',
  '{"message":"no ts at all","severity":13}',
  '{"ts":"2025-06-01T10:00:10z","severity":"alert","message":"syslog alert","actor":null,"source":null}',
  '{"ts":"2025-06-01T10:00:11+00:00","message":"non-ASCII é ☃","payload":{"ключ":"значение"}}',
  '{"ts":"2025-06-01T10:00:12Z","time":"2025-01-01T00:00:00Z","msg":"ts over time, message over msg","message":"the message"}',
  '{"ts":"2025-06-01T10:00:13Z","level":"verbose","msg":42,"message":null,"Level":"INFO"}',
];
/** Refused on every route, for native ingest's reasons. */
const refused = ['{"ts":"nope","message":"bad ts"}', '{"severity":"loud","message":"bad severity"}', '{"message":5}', '{"payload":[1],"message":"bad payload"}', '{"event_id":"x","message":"bad id"}'];
const all = [...lines, ...refused];

describe('the same JSON event natively, through Loki JSON, Loki protobuf and bulk: the same row', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test('every route stores the same rows (dataset and payload.labels aside) and refuses the same lines', async () => {
    const started = s.clock.now();
    const native = await s.request('POST', '/datasets/same-native/ingest', { body: Buffer.from(all.join('\n')), headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(native.status, 200, native.text);
    assert.deepEqual(
      native.body.failures.map((f: { index: number }) => f.index),
      refused.map((_, i) => lines.length + i),
    );

    // Loki's entries without a timestamp ("0"): the time of arrival, as native ingest's default.
    const lokiJson = await s.request('POST', '/loki/api/v1/push', {
      token: s.tenants.b.token,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ streams: [{ stream: { dataset: 'same-loki-json', host: 'h1' }, values: all.map((l) => ['0', l]) }] })),
    });
    const lokiProtobuf = await s.request('POST', '/loki/api/v1/push', {
      token: s.tenants.aTest.token,
      headers: { 'content-type': 'application/x-protobuf' },
      body: snappy.compressSync(Buffer.from(FixturePushRequest.encode(FixturePushRequest.fromObject({ streams: [{ labels: '{dataset="same-loki-proto", host="h1"}', entries: all.map((line) => ({ line })) }] })).finish())),
    });
    for (const r of [lokiJson, lokiProtobuf]) {
      assert.equal(r.status, 400, r.text);
      assert.match(r.text, new RegExp(`^${refused.length} of ${all.length} log lines were rejected \\(the others are stored\\): ${refused.map((_, i) => `line ${lines.length + i}: `).join('.*')}`));
    }

    const bulk = await s.request('POST', '/elastic/same-bulk/_bulk', {
      token: s.tenants.aOther.token,
      headers: { 'content-type': 'application/x-ndjson' },
      body: Buffer.from(all.map((l) => `{"create":{}}\n${l}\n`).join('')),
    });
    assert.equal(bulk.status, 200, bulk.text);
    const statuses = (bulk.body.items as Array<{ create: { status: number; error?: { reason: string } } }>).map((i) => i.create.status);
    assert.deepEqual(statuses, all.map((_, i) => (i < lines.length ? 201 : 400)));
    const ended = s.clock.now();

    // The tenant's and the arrival's fields aside; ts "now" (the events without one) as a mark; the rows in one order.
    const rows = async (dataset: string, token: string) => {
      const { events } = await query(s, `dataset:${dataset}`, token);
      return events
        .map(({ dataset: _dataset, ingested_at: _ingested, org_id: _org, project_id: _project, ...row }): Record<string, unknown> => {
          const ms = Date.parse(String(row.ts));
          return { ...row, ts: ms >= started && ms <= ended ? 'now' : row.ts, event_id: row.event_id === id.toLowerCase() ? row.event_id : 'generated' };
        })
        .sort((a, b) => String(a.message).localeCompare(String(b.message)) || String(a.ts).localeCompare(String(b.ts)));
    };
    const withoutLabels = (events: Array<Record<string, unknown>>) =>
      events.map((e) => {
        const { labels, ...payload } = e.payload as Record<string, unknown>;
        assert.deepEqual(labels, { host: 'h1' });
        return { ...e, payload };
      });
    const expected = await rows('same-native', s.tenants.a.token);
    assert.equal(expected.length, lines.length);
    assert.deepEqual(withoutLabels(await rows('same-loki-json', s.tenants.b.token)), expected, 'Loki JSON');
    assert.deepEqual(withoutLabels(await rows('same-loki-proto', s.tenants.aTest.token)), expected, 'Loki protobuf');
    assert.deepEqual(await rows('same-bulk', s.tenants.aOther.token), expected, 'bulk');

    // And the rows are what DECISIONS §9 and §21 say.
    const byMessage = new Map(expected.map((e) => [e.message, e]));
    const pick = (message: string) => {
      const e = byMessage.get(message);
      assert.ok(e, message);
      return [e.ts, e.severity, e.event, e.actor ?? null, e.source ?? null, e.payload, e.bytes_raw];
    };
    const bytes = (i: number) => Buffer.byteLength(lines[i]!);
    assert.deepEqual(pick('all fields'), ['2025-06-01T10:00:00.123Z', 'warn', 'kill', 'p1', 'eu-1', { region: 'eu', map: 'dust2', round: { n: 3 } }, bytes(0)]);
    assert.deepEqual(pick('pino names'), ['2025-06-01T10:00:01.500Z', 'error', 'e2', null, null, { extra: { a: [1, 2] } }, bytes(1)]);
    assert.deepEqual(pick('dotted log.level, epoch ms'), ['2025-06-01T10:00:02.000Z', 'info', '', null, null, {}, bytes(2)]);
    assert.deepEqual(pick('nested log.level'), ['2025-06-01T10:00:03.000Z', 'warn', '', null, null, { log: { logger: 'net' } }, bytes(3)]);
    assert.deepEqual(pick('pino numeric level'), ['2025-06-01T10:00:04.123Z', 'info', '', null, null, { pid: 42, hostname: 'h' }, bytes(4)]);
    assert.deepEqual(pick('severity over level'), ['2025-06-01T10:00:05.000Z', 'debug', '', null, null, { level: 60 }, bytes(5)]);
    assert.deepEqual(pick('a game level stays'), ['2025-06-01T10:00:06.000Z', 'info', 'level_up', null, null, { level: 5 }, bytes(6)]);
    assert.deepEqual(pick('the first usable alias'), ['2025-06-01T10:00:07.000Z', 'fatal', '', null, null, { '@timestamp': 'yesterday', level: 'loud' }, bytes(7)]);
    assert.equal(byMessage.get('with an event id')?.event_id, id.toLowerCase());
    assert.deepEqual(pick('payload merge'), ['2025-06-01T10:00:09.000Z', 'info', '', null, null, { k: 'from payload', n: { deep: [{ x: 1 }] }, other: null }, bytes(9)]);
    assert.deepEqual(pick('no ts at all'), ['now', 'warn', '', null, null, {}, bytes(10)]);
    assert.deepEqual(pick('syslog alert'), ['2025-06-01T10:00:10.000Z', 'fatal', '', null, null, {}, bytes(11)]);
    assert.deepEqual(pick('non-ASCII é ☃'), ['2025-06-01T10:00:11.000Z', 'info', '', null, null, { ключ: 'значение' }, bytes(12)]);
    assert.deepEqual(pick('the message'), ['2025-06-01T10:00:12.000Z', 'info', '', null, null, { time: '2025-01-01T00:00:00Z', msg: 'ts over time, message over msg' }, bytes(13)]);
    assert.deepEqual(pick(''), ['2025-06-01T10:00:13.000Z', 'debug', '', null, null, { msg: 42, Level: 'INFO' }, bytes(14)]);
  });
});
