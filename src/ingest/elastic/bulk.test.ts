import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { startTestServer, type TestServer } from '../../test-support/test-server.js';
import { query } from '../../test-support/ingest/test-queries.js';

const ndjson = (...lines: unknown[]) => `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`;

describe('/v1/elastic: the bulk API, bad input and the start-up calls', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  const bulk = (body: string | Buffer, path = '/elastic/_bulk', headers: Record<string, string> = {}, token?: string | null) =>
    s.request('POST', path, { body: typeof body === 'string' ? Buffer.from(body) : body, headers: { 'content-type': 'application/x-ndjson', ...headers }, token });

  test('one bad item fails alone with the Elasticsearch error shape; the others land (malformed lines, unknown and unsupported actions, no index, a bad index name, a bad ts)', async () => {
    const r = await bulk(
      ndjson(
        { index: { _index: 'items' } }, { message: 'first', level: 'warn' },
        { index: { _index: 'items' } }, '{"message": "broken',
        { frobnicate: { _index: 'items' } }, { message: 'unknown action' },
        '{not json', { message: 'after a bad action line' },
        { update: { _index: 'items', _id: '1' } }, { doc: { a: 1 } },
        { delete: { _index: 'items', _id: '1' } },
        { index: {} }, { message: 'no index' },
        { index: { _index: 'Bad.Index' } }, { message: 'bad name' },
        { create: { _index: 'items' } }, { message: 'bad ts', ts: 'yesterday' },
        { create: { _index: 'items', _id: 'last' } }, { message: 'last', '@timestamp': '2026-11-21T17:19:00.123456Z', log: { level: 'error', logger: 'x' } },
      ),
    );
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-elastic-product'), 'Elasticsearch');
    assert.equal(r.body.errors, true);
    const summary = (r.body.items as Array<Record<string, { status: number; error?: { type: string; reason: string } }>>).map((item) => {
      const [action, result] = Object.entries(item)[0]!;
      return [action, result.status, result.error?.type];
    });
    assert.deepEqual(summary, [
      ['index', 201, undefined],
      ['index', 400, 'document_parsing_exception'],
      ['frobnicate', 400, 'illegal_argument_exception'],
      ['index', 400, 'illegal_argument_exception'],
      ['update', 400, 'illegal_argument_exception'],
      ['delete', 400, 'illegal_argument_exception'],
      ['index', 400, 'action_request_validation_exception'],
      ['index', 400, 'invalid_index_name_exception'],
      ['create', 400, 'document_parsing_exception'],
      ['create', 201, undefined],
    ]);
    assert.match(r.body.items[2].frobnicate.error.reason, /unknown action \[frobnicate\]/);
    assert.match(r.body.items[8].create.error.reason, /ts must be/);
    assert.equal(r.body.items[9].create._id, 'last');
    assert.match(r.body.items[0].index._id, /^[0-9a-f-]{36}$/, 'a generated _id is the event id');
    const events = (await query(s, 'dataset:items')).events.sort((a, b) => String(a.message).localeCompare(String(b.message)));
    assert.deepEqual(events.map((e) => [e.message, e.severity]), [['first', 'warn'], ['last', 'error']]);
    assert.equal(events[1]?.ts, '2026-11-21T17:19:00.123Z');
    assert.deepEqual(events[1]?.payload, { log: { logger: 'x' } });
    assert.equal(events[0]?.event_id, r.body.items[0].index._id);
  });

  test('POST /{index}/_bulk: the URL names the index an action leaves out; gzip bodies; Idempotency-Key', async () => {
    const body = zlib.gzipSync(ndjson({ index: {} }, { msg: 'from the url', severity: 'notice' }, { index: { _index: 'other' } }, { message: 'named' }));
    const r = await bulk(body, '/elastic/url-index/_bulk', { 'content-encoding': 'gzip', 'idempotency-key': 'bulk-1' });
    assert.equal(r.body.errors, false, r.text);
    const again = await bulk(body, '/elastic/url-index/_bulk', { 'content-encoding': 'gzip', 'idempotency-key': 'bulk-1' });
    assert.deepEqual([again.status, again.headers.get('idempotent-replayed'), again.text], [200, 'true', r.text]);
    assert.deepEqual((await query(s, 'dataset:url-index')).events.map((e) => [e.message, e.severity]), [['from the url', 'info']]);
    assert.deepEqual((await query(s, 'dataset:other')).events.map((e) => e.message), ['named']);
  });

  test('a retried bulk with the same _ids is stored once, also across index and create', async () => {
    const body = ndjson({ index: { _index: 'retried', _id: 'a' } }, { message: 'a' }, { create: { _index: 'retried', _id: 'b' } }, { message: 'b' });
    for (let i = 0; i < 3; i++) assert.equal((await bulk(body)).body.errors, false);
    assert.equal((await bulk(ndjson({ create: { _index: 'retried', _id: 'a' } }, { message: 'a' }))).body.errors, false);
    assert.deepEqual((await query(s, 'dataset:retried')).events.map((e) => e.message).sort(), ['a', 'b']);
  });

  test('refusals of the whole request in the Elasticsearch error shape: 413 past the limits, 401 for a wrong token in every scheme, 403 without logs:write, 400 for an empty body', async () => {
    const assertError = (r: Awaited<ReturnType<typeof bulk>>, status: number, type: string) => {
      assert.equal(r.status, status, r.text);
      assert.equal(r.headers.get('x-elastic-product'), 'Elasticsearch');
      assert.equal(r.body.status, status);
      assert.equal(r.body.error.type, type);
      assert.deepEqual(r.body.error.root_cause, [{ type, reason: r.body.error.reason }]);
      assert.match(r.body.error.request_id, /^req_/);
    };
    assertError(await bulk(Buffer.alloc(10_000_001, ' ')), 413, 'content_too_long_exception');
    assertError(await bulk(zlib.gzipSync(Buffer.alloc(10_000_001, ' ')), '/elastic/_bulk', { 'content-encoding': 'gzip' }), 413, 'content_too_long_exception');
    const many = ndjson(...Array.from({ length: 10_001 }, () => [{ index: { _index: 'many' } }, { m: 1 }]).flat());
    assertError(await bulk(many), 413, 'content_too_long_exception');
    const wrong = 'ops_live_00000000000000000000000000000000000000000';
    for (const authorization of [`Bearer ${wrong}`, `ApiKey ${wrong}`, `ApiKey ${Buffer.from(`id:${wrong}`).toString('base64')}`, `Basic ${Buffer.from(`elastic:${wrong}`).toString('base64')}`]) {
      const r = await bulk(ndjson({ index: { _index: 'x' } }, { m: 1 }), '/elastic/_bulk', { authorization }, null);
      assertError(r, 401, 'security_exception');
      assert.ok(r.headers.get('www-authenticate'));
    }
    assertError(await s.request('GET', '/elastic/', { token: null }), 401, 'security_exception');
    assertError(await bulk(ndjson({ index: { _index: 'x' } }, { m: 1 }), '/elastic/_bulk', {}, await s.token(s.tenants.a, ['logs:read'])), 403, 'security_exception');
    assertError(await bulk('\n\n'), 400, 'parse_exception');
    const datasets = (await s.request('GET', '/datasets')).body.datasets as Array<{ name: string }>;
    assert.deepEqual(datasets.filter((d) => ['many', 'x'].includes(d.name)), []);
  });

  test("tenancy: another tenant's documents are never visible, even under the same index and _id", async () => {
    const body = ndjson({ index: { _index: 'shared', _id: 'same' } }, { message: 'mine' });
    for (const tenant of ['b', 'aTest', 'aOther'] as const) assert.equal((await bulk(body, undefined, {}, s.tenants[tenant].token)).body.errors, false);
    assert.equal((await s.request('POST', '/query', { json: { q: 'dataset:shared' } })).status, 404);
    assert.equal((await bulk(body)).body.errors, false);
    assert.deepEqual((await query(s, 'dataset:shared')).events.map((e) => e.message), ['mine'], 'the same _id in another tenant is another event');
    assert.deepEqual((await query(s, 'dataset:shared', s.tenants.b.token)).events.length, 1);
  });

  test('GET and HEAD / answer as Elasticsearch 8; the start-up calls of shippers proceed; anything else is 404 in its shape', async () => {
    const info = await s.request('GET', '/elastic/');
    assert.equal(info.status, 200);
    assert.match(info.body.version.number, /^8\./);
    assert.equal(info.headers.get('x-elastic-product'), 'Elasticsearch');
    const head = await s.request('HEAD', '/elastic/');
    assert.deepEqual([head.status, head.headers.get('x-elastic-product')], [200, 'Elasticsearch']);
    for (const [method, path] of [
      ['GET', '/elastic/_license'],
      ['GET', '/elastic/_xpack'],
      ['GET', '/elastic/_nodes/_local/ingest'],
      ['GET', '/elastic/_cluster/health'],
      ['HEAD', '/elastic/_index_template/filebeat-8.17.0'],
      ['PUT', '/elastic/_index_template/filebeat-8.17.0'],
      ['GET', '/elastic/_template/logstash'],
      ['PUT', '/elastic/_ilm/policy/logs'],
      ['PUT', '/elastic/games'],
      ['POST', '/elastic/games/_refresh'],
    ] as const) {
      const r = await s.request(method, path, method === 'PUT' ? { json: {} } : {});
      assert.deepEqual([r.status, r.headers.get('x-elastic-product')], [200, 'Elasticsearch'], `${method} ${path}: ${r.text}`);
    }
    const unknown = await s.request('GET', '/elastic/games/_search');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.headers.get('x-elastic-product'), 'Elasticsearch');
    assert.equal(unknown.body.error.type, 'resource_not_found_exception');
  });
});
