import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { startTestServer, type TestServer } from '../../test-support/test-server.js';
import { matchAll } from '../../engine/event-store.js';
import { severities } from '../../shared/event-record.js';

const ndjson = (events: unknown[]) => events.map((e) => JSON.stringify(e)).join('\n');
const ndHeaders = { 'content-type': 'application/x-ndjson' };

describe('ingest', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  const all = async (tenant = s.tenants.a) => {
    const { store } = s.server.events;
    return (await store.query(tenant, { filter: matchAll, limit: 1000 })).events;
  };

  test('a lone surrogate in a payload is stored as U+FFFD, so payload queries over it keep working', async () => {
    const body = '{"event":"lone","payload":{"a":"x\\ud800y","\\udc00k":1,"esc":"\\\\ud800"}}';
    let r = await s.request('POST', '/datasets/surrogates/ingest', { body, headers: { 'content-type': 'application/json' } });
    assert.equal(r.status, 200, r.text);
    r = await s.request('POST', '/query', { json: { q: 'dataset:surrogates AND payload.a exists' } });
    assert.equal(r.status, 200, r.text);
    const [event] = (r.body as { events: Array<{ payload: Record<string, unknown> }> }).events;
    assert.deepEqual(event!.payload, { a: 'x\ufffdy', '\ufffdk': 1, esc: '\\ud800' });
    r = await s.request('POST', '/query', { json: { q: 'dataset:surrogates group by payload.a' } });
    assert.equal(r.status, 200, r.text);
  });

  test('JSON array, single object, NDJSON and gzip NDJSON are all accepted', async () => {
    let r = await s.request('POST', '/datasets/forms/ingest', { json: [{ event: 'a', message: 'one' }, { event: 'b' }] });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { ingested: 2, failed: 0, failures: [] });
    r = await s.request('POST', '/datasets/forms/ingest', { json: { event: 'c', payload: { k: 1 } } });
    assert.deepEqual(r.body, { ingested: 1, failed: 0, failures: [] });
    r = await s.request('POST', '/datasets/forms/ingest', { body: ndjson([{ event: 'd' }, { event: 'e' }]) + '\n', headers: ndHeaders });
    assert.deepEqual(r.body, { ingested: 2, failed: 0, failures: [] });
    const gz = zlib.gzipSync(ndjson([{ event: 'f' }, { event: 'g' }, { event: 'h' }]));
    r = await s.request('POST', '/datasets/forms/ingest', { body: gz, headers: { ...ndHeaders, 'content-encoding': 'gzip' } });
    assert.deepEqual(r.body, { ingested: 3, failed: 0, failures: [] });
    const gzJson = zlib.gzipSync(JSON.stringify([{ event: 'i' }]));
    r = await s.request('POST', '/datasets/forms/ingest', { body: gzJson, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
    assert.deepEqual(r.body, { ingested: 1, failed: 0, failures: [] });
    const names = (await all()).filter((e) => e.dataset === 'forms').map((e) => e.event).sort();
    assert.deepEqual(names, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']);
  });

  test('normalisation: ts forms, extra keys into payload, bytes_raw, UUIDv7 ids, defaults', async () => {
    const line = JSON.stringify({ ts: '2026-01-02T03:04:05.678Z', event: 'norm1', actor: 'p1', source: 'srv', message: 'hi', payload: { a: { b: 2 } }, region: 'eu', level: 3 });
    const line2 = JSON.stringify({ ts: 1767323045678, event: 'norm2' });
    const before = s.server.ctx.clock.now();
    const r = await s.request('POST', '/datasets/norm/ingest', { body: `${line}\n${line2}\n${JSON.stringify({ event: 'norm3' })}`, headers: ndHeaders });
    assert.equal(r.body.ingested, 3);
    const events = (await all()).filter((e) => e.dataset === 'norm');
    const e1 = events.find((e) => e.event === 'norm1')!;
    assert.equal(e1.ts, Date.parse('2026-01-02T03:04:05.678Z'));
    assert.deepEqual(JSON.parse(e1.payloadJson), { region: 'eu', level: 3, a: { b: 2 } });
    assert.equal(e1.actor, 'p1');
    assert.equal(e1.source, 'srv');
    assert.equal(e1.message, 'hi');
    assert.equal(e1.bytes_raw, Buffer.byteLength(line));
    assert.equal(e1.severity, severities.indexOf('info'));
    assert.match(e1.event_id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const e2 = events.find((e) => e.event === 'norm2')!;
    assert.equal(e2.ts, 1767323045678);
    assert.deepEqual(JSON.parse(e2.payloadJson), {});
    assert.equal(e2.actor, null);
    assert.equal(e2.message, '');
    const e3 = events.find((e) => e.event === 'norm3')!;
    assert.ok(e3.ts >= before && e3.ts <= s.server.ctx.clock.now(), 'missing ts defaults to now');
    assert.ok(e3.ingested_at >= before);
  });

  test("every severity alias (DECISIONS §9, and §21's syslog and winston names), any case, and OpenTelemetry numbers", async () => {
    const cases: Array<[unknown, string]> = [
      ['debug', 'debug'], ['TRACE', 'debug'], ['info', 'info'], ['Information', 'info'], ['warn', 'warn'], ['WARNING', 'warn'],
      ['error', 'error'], ['Err', 'error'], ['fatal', 'fatal'], ['critical', 'fatal'], ['CRIT', 'fatal'], ['panic', 'fatal'],
      ['emergency', 'fatal'], [1, 'debug'], [4, 'debug'], [5, 'debug'], [8, 'debug'], [9, 'info'], [12, 'info'], [13, 'warn'],
      [16, 'warn'], [17, 'error'], [20, 'error'], [21, 'fatal'], [24, 'fatal'], ['INFO2', 'info'],
      ['notice', 'info'], ['Alert', 'fatal'], ['emerg', 'fatal'], ['verbose', 'debug'], ['silly', 'debug'], ['http', 'info'],
    ];
    const r = await s.request('POST', '/datasets/sev/ingest', { json: cases.map(([severity], i) => ({ event: `sev${i}`, severity })) });
    assert.deepEqual(r.body, { ingested: cases.length, failed: 0, failures: [] });
    const events = (await all()).filter((e) => e.dataset === 'sev');
    for (const [i, [, expected]] of cases.entries()) {
      assert.equal(severities[events.find((e) => e.event === `sev${i}`)!.severity], expected, `case ${i}`);
    }
    // 30 is pino's info under `level`, not under `severity` (OpenTelemetry's numbers end at 24).
    const bad = await s.request('POST', '/datasets/sev/ingest', { json: [{ severity: 'loud' }, { severity: 25 }, { severity: true }, { severity: 30 }, { severity: 'constructor' }, { severity: 'toString' }] });
    assert.deepEqual(bad.body.failures.map((f: { index: number }) => f.index), [0, 1, 2, 3, 4, 5]);
  });

  test('missing severity takes the dataset default_severity', async () => {
    assert.equal((await s.request('POST', '/datasets', { json: { name: 'defsev', default_severity: 'warn' } })).status, 201);
    await s.request('POST', '/datasets/defsev/ingest', { json: [{ event: 'x' }] });
    const [e] = (await all()).filter((x) => x.dataset === 'defsev');
    assert.equal(severities[e!.severity], 'warn');
  });

  test('each bad event fails alone with its index', async () => {
    const big = { event: 'big', payload: { blob: 'x'.repeat(260_000) } };
    const r = await s.request('POST', '/datasets/bad/ingest', {
      json: [{ event: 'ok1' }, { ts: 'yesterday' }, { severity: 'nope' }, { payload: [1, 2] }, { payload: 'str' }, big, 42, { event: 7 }, { event_id: 'x' }, { event: 'ok2' }],
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.ingested, 2);
    assert.equal(r.body.failed, 8);
    assert.deepEqual(r.body.failures.map((f: { index: number }) => f.index), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.equal(r.body.failures[4].error.code, 'too_large');
    assert.equal(r.body.failures[0].error.code, 'bad_request');
    assert.match(r.body.failures[0].error.message, /ts/);
  });

  test('a malformed NDJSON line fails alone; a body that is not JSON is 400', async () => {
    const body = [JSON.stringify({ event: 'l0' }), '{"event": "broken', JSON.stringify({ event: 'l2' })].join('\n');
    const r = await s.request('POST', '/datasets/lines/ingest', { body, headers: ndHeaders });
    assert.equal(r.body.ingested, 2);
    assert.deepEqual(r.body.failures.map((f: { index: number }) => f.index), [1]);
    for (const [text, headers] of [['not json at all', { 'content-type': 'application/json' }], ['not json\nat all', ndHeaders], ['{"a":', { 'content-type': 'application/json' }]] as const) {
      const bad = await s.request('POST', '/datasets/lines/ingest', { body: text, headers });
      assert.equal(bad.status, 400, text);
      assert.equal(bad.body.error.code, 'bad_request');
    }
    const corrupt = await s.request('POST', '/datasets/lines/ingest', { body: 'xx', headers: { ...ndHeaders, 'content-encoding': 'gzip' } });
    assert.equal(corrupt.status, 400);
    const wrongType = await s.request('POST', '/datasets/lines/ingest', { body: 'a', headers: { 'content-type': 'text/csv' } });
    assert.equal(wrongType.status, 415);
  });

  test('over the limits: 413 too_large with the limit', async () => {
    const many = Array.from({ length: 10_001 }, () => '{}').join('\n');
    let r = await s.request('POST', '/datasets/limits/ingest', { body: many, headers: ndHeaders });
    assert.equal(r.status, 413);
    assert.equal(r.body.error.code, 'too_large');
    const huge = 'x'.repeat(10_000_001);
    r = await s.request('POST', '/datasets/limits/ingest', { body: huge, headers: ndHeaders });
    assert.equal(r.status, 413);
    assert.equal(r.body.error.limit, 10_000_000);
    const bomb = zlib.gzipSync(Buffer.alloc(12_000_000, 0x20));
    r = await s.request('POST', '/datasets/limits/ingest', { body: bomb, headers: { ...ndHeaders, 'content-encoding': 'gzip' } });
    assert.equal(r.status, 413);
    assert.equal(r.body.error.code, 'too_large');
    const exactly = Array.from({ length: 10_000 }, (_, i) => JSON.stringify({ event: `n${i}` })).join('\n');
    r = await s.request('POST', '/datasets/limits/ingest', { body: exactly, headers: ndHeaders });
    assert.equal(r.body.ingested, 10_000);
  });

  test('a client event_id is stored once, also when retried', async () => {
    const id = '0190b1d2-1111-7000-8000-00000000abcd';
    const events = [{ event_id: id.toUpperCase(), event: 'once' }, { event_id: id, event: 'once' }];
    assert.equal((await s.request('POST', '/datasets/idem/ingest', { json: events })).body.ingested, 2);
    assert.equal((await s.request('POST', '/datasets/idem/ingest', { json: events })).body.ingested, 2);
    const stored = (await all()).filter((e) => e.dataset === 'idem');
    assert.equal(stored.length, 1);
    assert.equal(stored[0]!.event_id, id);
    // the same id in another mode is another event
    await s.request('POST', '/datasets/idem/ingest', { json: events, token: s.tenants.aTest.token });
    assert.equal((await all(s.tenants.aTest)).filter((e) => e.dataset === 'idem').length, 1);
  });

  test('events_month quota: 402 and nothing stored', async () => {
    const t = await startTestServer({ plan: 'free' });
    try {
      const usedBefore = (await t.server.ctx.quotas.usage(t.tenants.a.orgId, 'free')).find((q) => q.metric === 'events_month')!;
      await t.server.ctx.quotas.consume(t.tenants.a.orgId, 'free', 'events_month', 1_000_000 - usedBefore.used - 1);
      const r = await t.request('POST', '/datasets/q/ingest', { json: [{ event: 'a' }, { event: 'b' }] });
      assert.equal(r.status, 402);
      assert.equal(r.body.error.code, 'quota_exceeded');
      assert.equal(r.body.error.metric, 'events_month');
      assert.equal((await t.request('POST', '/datasets/q/ingest', { json: [{ event: 'a' }] })).status, 200);
    } finally {
      await t.close();
    }
  });

  test('scopes: logs:read cannot ingest; no token is 401', async () => {
    const reader = await s.token(s.tenants.a, ['logs:read']);
    const r = await s.request('POST', '/datasets/x/ingest', { json: [{}], token: reader });
    assert.equal(r.status, 403);
    assert.equal(r.body.error.required_scope, 'logs:write');
    assert.equal((await s.request('POST', '/datasets/x/ingest', { json: [{}], token: null })).status, 401);
    assert.equal((await s.request('POST', '/datasets/Bad_Name/ingest', { json: [{}] })).status, 400);
  });

  test('concurrent requests are all stored (group commit)', async () => {
    const requests = Array.from({ length: 20 }, (_, i) =>
      s.request('POST', '/datasets/burst/ingest', { body: ndjson(Array.from({ length: 50 }, (_, j) => ({ event: `b${i}-${j}` }))), headers: ndHeaders }),
    );
    const answers = await Promise.all(requests);
    assert.ok(answers.every((a) => a.status === 200 && a.body.ingested === 50));
    assert.equal((await all()).filter((e) => e.dataset === 'burst').length, 1000);
  });
});
