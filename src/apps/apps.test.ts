import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestTenant } from '../test-support/test-server.js';

describe('apps (OPS_FEATURES=apps)', () => {
  let s: TestServer;
  let others: Array<[string, TestTenant]>;
  before(async () => {
    s = await startTestServer({ env: { OPS_FEATURES: 'logs,cases,apps' } });
    others = [
      ['test mode', s.tenants.aTest],
      ['other project', s.tenants.aOther],
      ['other org', s.tenants.b],
    ];
  });
  after(() => s.close());

  const create = (json: unknown, token = s.tenants.a.token) => s.request('POST', '/apps', { token, json });

  test('POST /apps: 201 with every field of the App shape; GET /apps/{id} returns it', async () => {
    const r = await create({ name: 'Anti-cheat', description: 'server plugin' });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(Object.keys(r.body).sort(), ['created_at', 'description', 'id', 'name']);
    assert.match(r.body.id, /^app_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(r.body.name, 'Anti-cheat');
    assert.equal(r.body.description, 'server plugin');
    assert.match(r.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const got = await s.request('GET', `/apps/${r.body.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, r.body);
    const bare = await create({ name: 'No description' });
    assert.equal(bare.body.description, '');
  });

  test('name: 1 to 100 characters, required; 400 bad_request otherwise', async () => {
    assert.equal((await create({ name: 'x'.repeat(100) })).status, 201);
    assert.equal((await create({ name: 'é'.repeat(100) })).status, 201, '100 characters, not bytes');
    for (const json of [{}, { name: '' }, { name: '  ' }, { name: 'x'.repeat(101) }, { name: null }, { name: 'ok', description: {} }, []]) {
      const r = await create(json);
      assert.equal(r.status, 400, JSON.stringify(json));
      assert.equal(r.body.error.code, 'bad_request');
    }
  });

  test('name is unique per project: 409 conflict; the same name in another project, mode or org is fine', async () => {
    assert.equal((await create({ name: 'Unique' })).status, 201);
    const again = await create({ name: 'Unique', description: 'other' });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'conflict');
    const both = await Promise.all([create({ name: 'Race' }), create({ name: 'Race' })]);
    assert.deepEqual(both.map((r) => r.status).sort(), [201, 409]);
    for (const [what, tenant] of others) assert.equal((await create({ name: 'Unique' }, tenant.token)).status, 201, what);
  });

  test('GET /apps: newest first, limit and cursor; 400 for a bad limit or cursor', async () => {
    const token = await s.token(s.tenants.aOther, 'all', { mode: 'test' }); // a tenant of its own
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.push((await create({ name: `app ${i}` }, token)).body.id);
      s.clock.advance(1);
    }
    const seen: string[] = [];
    let cursor = '';
    do {
      const r = await s.request('GET', `/apps?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(Object.keys(r.body).sort(), ['apps', 'has_more', 'next_cursor']);
      assert.equal(r.body.has_more, r.body.next_cursor !== '');
      seen.push(...r.body.apps.map((a: { id: string }) => a.id));
      cursor = r.body.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, [...made].reverse());
    for (const q of ['limit=0', 'limit=101', 'limit=1.5', 'cursor=abc']) {
      const r = await s.request('GET', `/apps?${q}`, { token });
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error.code, 'bad_request');
    }
  });

  test('tenant matrix: another org, project or mode sees none of the apps and cannot use their cursors', async () => {
    const { body: app } = await create({ name: 'Private app' });
    await create({ name: 'Private app 2' });
    const first = await s.request('GET', '/apps?limit=1');
    assert.ok(first.body.next_cursor);
    for (const [what, tenant] of others) {
      const got = await s.request('GET', `/apps/${app.id}`, { token: tenant.token });
      assert.equal(got.status, 404, what);
      assert.equal(got.body.error.code, 'not_found');
      const list = await s.request('GET', '/apps?limit=100', { token: tenant.token });
      assert.ok(!list.body.apps.some((a: { id: string }) => a.id === app.id), what);
      assert.equal((await s.request('GET', `/apps?cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: tenant.token })).status, 400, what);
    }
    assert.equal((await s.request('GET', '/apps/app_01J00000000000000000000000')).status, 404);
  });

  test('scopes: apps:write to submit, apps:read to read; 401 without a token', async () => {
    const { body: app } = await create({ name: 'Scoped' });
    const readOnly = await s.token(s.tenants.a, ['apps:read']);
    const writeOnly = await s.token(s.tenants.a, ['apps:write']);
    const post = await create({ name: 'nope' }, readOnly);
    assert.equal(post.status, 403);
    assert.equal(post.body.error.required_scope, 'apps:write');
    for (const path of ['/apps', `/apps/${app.id}`]) {
      const r = await s.request('GET', path, { token: writeOnly });
      assert.equal(r.status, 403);
      assert.equal(r.body.error.required_scope, 'apps:read');
      assert.equal((await s.request('GET', path, { token: readOnly })).status, 200);
      assert.equal((await s.request('GET', path, { token: null })).status, 401);
    }
    assert.equal((await s.request('POST', '/apps', { token: null, json: { name: 'x' } })).status, 401);
  });
});
