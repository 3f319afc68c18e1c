import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';

const search = { name: 'errors in eu', q: 'severity >= error and region:eu', range: { last: '24h' } };

describe('saved searches', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test('POST → 201; GET, list, PATCH (range swapped, then removed), DELETE', async () => {
    const created = await s.request('POST', '/searches', { json: search });
    assert.equal(created.status, 201, created.text);
    assert.match(created.body.id, /^ss_[0-9A-Z]{26}$/);
    assert.deepEqual({ name: created.body.name, q: created.body.q, range: created.body.range }, search);
    const id = created.body.id;
    assert.deepEqual((await s.request('GET', `/searches/${id}`)).body, created.body);
    const list = await s.request('GET', '/searches');
    assert.equal(list.status, 200);
    assert.ok(list.body.searches.some((x: { id: string }) => x.id === id));

    const absolute = await s.request('PATCH', `/searches/${id}`, { json: { range: { from: '2026-11-21T17:19:00+01:00', to: '2026-11-21T18:00:00Z' } } });
    assert.equal(absolute.status, 200, absolute.text);
    assert.deepEqual(absolute.body.range, { from: '2026-11-21T16:19:00.000Z', to: '2026-11-21T18:00:00.000Z' }, 'normalised to UTC with milliseconds');
    assert.equal(absolute.body.name, search.name, 'fields not in the patch are kept');
    const renamed = await s.request('PATCH', `/searches/${id}`, { json: { name: 'renamed', q: 'event:login' } });
    assert.deepEqual([renamed.body.name, renamed.body.q, renamed.body.range.to], ['renamed', 'event:login', '2026-11-21T18:00:00.000Z']);
    const cleared = await s.request('PATCH', `/searches/${id}`, { json: { range: null } });
    assert.equal(cleared.body.range, null);
    assert.deepEqual((await s.request('GET', `/searches/${id}`)).body, cleared.body);

    assert.deepEqual((await s.request('DELETE', `/searches/${id}`)).body, { id, deleted: true });
    assert.equal((await s.request('GET', `/searches/${id}`)).status, 404);
    assert.equal((await s.request('PATCH', `/searches/${id}`, { json: { name: 'x' } })).status, 404);
    assert.equal((await s.request('DELETE', `/searches/${id}`)).status, 404);
  });

  test('without a range, and with an empty q (every event)', async () => {
    const created = await s.request('POST', '/searches', { json: { name: 'everything', q: '' } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.range, null);
    await s.request('DELETE', `/searches/${created.body.id}`);
  });

  test('names are unique per project and mode: 409 conflict (create and rename); the same name elsewhere is fine', async () => {
    const first = await s.request('POST', '/searches', { json: { ...search, name: 'dup' } });
    assert.equal(first.status, 201);
    const again = await s.request('POST', '/searches', { json: { ...search, name: 'dup' } });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'conflict');
    const other = await s.request('POST', '/searches', { json: { ...search, name: 'other' } });
    const rename = await s.request('PATCH', `/searches/${other.body.id}`, { json: { name: 'dup' } });
    assert.equal(rename.status, 409);
    assert.equal((await s.request('PATCH', `/searches/${first.body.id}`, { json: { name: 'dup', q: 'event:x' } })).status, 200, 'keeping its own name is no conflict');
    for (const tenant of [s.tenants.aTest, s.tenants.aOther, s.tenants.b]) {
      const elsewhere = await s.request('POST', '/searches', { token: tenant.token, json: { ...search, name: 'dup' } });
      assert.equal(elsewhere.status, 201, elsewhere.text);
    }
    await s.request('DELETE', `/searches/${first.body.id}`);
    assert.equal((await s.request('POST', '/searches', { json: { ...search, name: 'dup' } })).status, 201, 'a deleted search frees its name');
  });

  test("tenancy: another tenant's search is not found (get, patch, delete) and not listed", async () => {
    const created = await s.request('POST', '/searches', { json: { ...search, name: 'mine' } });
    const id = created.body.id;
    for (const tenant of [s.tenants.b, s.tenants.aTest, s.tenants.aOther]) {
      for (const [method, json] of [['GET', undefined], ['PATCH', { name: 'stolen' }], ['DELETE', undefined]] as const) {
        const res = await s.request(method, `/searches/${id}`, { token: tenant.token, json });
        assert.equal(res.status, 404, `${method}: ${res.text}`);
        assert.equal(res.body.error.code, 'not_found');
      }
      const list = await s.request('GET', '/searches', { token: tenant.token });
      assert.ok(!list.body.searches.some((x: { id: string }) => x.id === id));
    }
    assert.equal((await s.request('GET', `/searches/${id}`)).body.name, 'mine', 'untouched');
  });

  test('logs:read reads but cannot write (403 naming logs:write); without logs:read nothing', async () => {
    const reader = await s.token(s.tenants.a, ['logs:read']);
    assert.equal((await s.request('GET', '/searches', { token: reader })).status, 200);
    const { body } = await s.request('POST', '/searches', { json: { ...search, name: 'scoped' } });
    assert.equal((await s.request('GET', `/searches/${body.id}`, { token: reader })).status, 200);
    for (const [method, path, json] of [
      ['POST', '/searches', { ...search, name: 'nope' }],
      ['PATCH', `/searches/${body.id}`, { name: 'nope' }],
      ['DELETE', `/searches/${body.id}`, undefined],
    ] as const) {
      const refused = await s.request(method, path, { token: reader, json });
      assert.equal(refused.status, 403, `${method} ${path}`);
      assert.equal(refused.body.error.required_scope, 'logs:write');
    }
    const none = await s.token(s.tenants.a, ['media:read']);
    assert.equal((await s.request('GET', '/searches', { token: none })).status, 403);
  });

  test('bad input: each a 400 naming its field; q a soql_parse_error with its position', async () => {
    const post = (json: object) => s.request('POST', '/searches', { json: { ...search, name: `bad ${Math.random()}`, ...json } });
    const syntax = await post({ q: 'severity >= ' });
    assert.equal(syntax.status, 400);
    assert.equal(syntax.body.error.code, 'soql_parse_error');
    assert.equal(typeof syntax.body.error.position, 'number');
    const cases: [string, object][] = [
      ['name', { name: '' }],
      ['name', { name: 'x'.repeat(101) }],
      ['name', { name: '   ' }],
      ['q', { q: 42 }],
      ['range.last', { range: { last: '14m' } }],
      ['range.last', { range: { last: '31d' } }],
      ['range.last', { range: { last: '5w' } }],
      ['range.last', { range: { last: 'yesterday' } }],
      ['range.last', { range: { last: '1y' } }],
      ['range', { range: { last: '1h', from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' } }],
      ['range.from', { range: { to: '2026-01-02T00:00:00Z' } }],
      ['range.to', { range: { from: '2026-01-02T00:00:00Z' } }],
      ['range.from', { range: { from: '2026-01-01', to: '2026-01-02T00:00:00Z' } }],
      ['range.from', { range: { from: '2026-01-01T00:00:00', to: '2026-01-02T00:00:00Z' } }],
      ['range.to', { range: { from: '2026-01-01T00:00:00Z', to: 'tomorrow' } }],
      ['range.to', { range: { from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' } }],
      ['range.to', { range: { from: '2026-01-01T00:00:00Z', to: '2026-01-01T00:00:00.000Z' } }],
      ['range.until', { range: { until: '1h' } }],
      ['colour', { colour: 'red' }],
    ];
    for (const [field, json] of cases) {
      const res = await post(json);
      assert.equal(res.status, 400, `${JSON.stringify(json)}: ${res.text}`);
      assert.equal(res.body.error.code, 'bad_request');
      assert.ok(res.body.error.field === field || res.body.error.message.includes(`"${field}"`), `${JSON.stringify(json)} should name ${field}: ${res.text}`);
    }
    for (const last of ['15m', '900s', '24h', '30d', '4w']) assert.equal((await post({ range: { last } })).status, 201, last);
    const { body } = await s.request('POST', '/searches', { json: { ...search, name: 'patch me' } });
    const patched = await s.request('PATCH', `/searches/${body.id}`, { json: { q: 'a = ' } });
    assert.equal(patched.body.error.code, 'soql_parse_error');
    assert.equal((await s.request('PATCH', `/searches/${body.id}`, { json: { range: { last: '1d', to: '2026-01-01T00:00:00Z' } } })).body.error.field, 'range');
  });
});

describe('saved searches: pages', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test('cursor pages, newest first; a cursor of another tenant or another list is a 400', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await s.request('POST', '/searches', { json: { name: `s${i}`, q: `event:e${i}` } })).body.id);
    const seen: string[] = [];
    let cursor = '';
    let pages = 0;
    do {
      const res = await s.request('GET', `/searches?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(res.status, 200, res.text);
      seen.push(...res.body.searches.map((x: { id: string }) => x.id));
      assert.equal(res.body.has_more, res.body.next_cursor !== '');
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.deepEqual(seen, [...ids].reverse());

    const first = await s.request('GET', '/searches?limit=2');
    const foreign = await s.request('GET', `/searches?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: s.tenants.aTest.token });
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.error.code, 'bad_request');
    for (let i = 0; i < 3; i++) await s.request('POST', '/monitors', { json: { name: `m${i}`, kind: 'match', q: 'event:x', channel_ids: [] } });
    const monitors = await s.request('GET', '/monitors?limit=1');
    assert.equal((await s.request('GET', `/searches?cursor=${encodeURIComponent(monitors.body.next_cursor)}`)).status, 400, "the monitors list's cursor");
    assert.equal((await s.request('GET', '/searches?limit=0')).status, 400);
    assert.equal((await s.request('GET', '/searches?limit=101')).status, 400);
  });

  test('OpenAPI lists the five operations with their scopes', async () => {
    const doc = (await s.request('GET', '/openapi.json', { token: null })).body;
    const paths = doc.paths as Record<string, Record<string, { 'x-required-scope'?: string }>>;
    const scopes = {
      post: paths['/v1/searches']?.post?.['x-required-scope'],
      list: paths['/v1/searches']?.get?.['x-required-scope'],
      get: paths['/v1/searches/{id}']?.get?.['x-required-scope'],
      patch: paths['/v1/searches/{id}']?.patch?.['x-required-scope'],
      delete: paths['/v1/searches/{id}']?.delete?.['x-required-scope'],
    };
    assert.deepEqual(scopes, { post: 'logs:write', list: 'logs:read', get: 'logs:read', patch: 'logs:write', delete: 'logs:write' });
    assert.ok(doc.components.schemas.SavedSearch, 'the SavedSearch schema');
  });
});
