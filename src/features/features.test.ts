import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import type { Scope } from '../auth/scopes.js';

/** Every endpoint of the announced resources, with a body that would be valid. */
const endpoints: Array<{ method: string; path: string; openapi: string; scope: Scope; json?: unknown }> = [
  { method: 'POST', path: '/logs', openapi: '/v1/logs', scope: 'logs:write', json: { level: 'info', message: 'm' } },
  { method: 'GET', path: '/logs', openapi: '/v1/logs', scope: 'logs:read' },
  { method: 'GET', path: '/logs/log_01J00000000000000000000000', openapi: '/v1/logs/{id}', scope: 'logs:read' },
  { method: 'POST', path: '/cases', openapi: '/v1/cases', scope: 'cases:write', json: { title: 't' } },
  { method: 'GET', path: '/cases', openapi: '/v1/cases', scope: 'cases:read' },
  { method: 'GET', path: '/cases/cas_01J00000000000000000000000', openapi: '/v1/cases/{id}', scope: 'cases:read' },
  { method: 'PATCH', path: '/cases/cas_01J00000000000000000000000', openapi: '/v1/cases/{id}', scope: 'cases:write', json: { status: 'closed' } },
  { method: 'POST', path: '/cases/cas_01J00000000000000000000000/attachments', openapi: '/v1/cases/{id}/attachments', scope: 'cases:write', json: { file_id: 'f_x' } },
  { method: 'POST', path: '/apps', openapi: '/v1/apps', scope: 'apps:write', json: { name: 'n' } },
  { method: 'GET', path: '/apps', openapi: '/v1/apps', scope: 'apps:read' },
  { method: 'GET', path: '/apps/app_01J00000000000000000000000', openapi: '/v1/apps/{id}', scope: 'apps:read' },
];

describe('announced resources switched off (default OPS_FEATURES)', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test('every endpoint answers 501 not_implemented after authentication, even with a bad body', async () => {
    for (const e of endpoints) {
      const r = await s.request(e.method, e.path, { json: e.json });
      assert.equal(r.status, 501, `${e.method} ${e.path}`);
      assert.equal(r.body.error.code, 'not_implemented');
      assert.equal(r.body.error.request_id, r.headers.get('x-request-id'));
      if (e.json !== undefined) {
        const bad = await s.request(e.method, e.path, { json: { nonsense: true } });
        assert.equal(bad.status, 501, `${e.method} ${e.path} with a bad body`);
      }
    }
  });

  test('401 without a token and 403 without the scope come first', async () => {
    const none = await s.token(s.tenants.a, ['usage:read']);
    for (const e of endpoints) {
      const anonymous = await s.request(e.method, e.path, { token: null, json: e.json });
      assert.equal(anonymous.status, 401, `${e.method} ${e.path}`);
      assert.equal(anonymous.body.error.code, 'unauthorized');
      const forbidden = await s.request(e.method, e.path, { token: none, json: e.json });
      assert.equal(forbidden.status, 403, `${e.method} ${e.path}`);
      assert.equal(forbidden.body.error.code, 'forbidden');
      assert.equal(forbidden.body.error.required_scope, e.scope);
    }
  });

  test('the OpenAPI document lists every endpoint with its scope', async () => {
    const doc = (await s.request('GET', '/openapi.json', { token: null })).body;
    for (const e of endpoints) {
      const op = doc.paths[e.openapi]?.[e.method.toLowerCase()];
      assert.ok(op, `${e.method} ${e.openapi} is documented`);
      assert.equal(op['x-required-scope'], e.scope);
      assert.deepEqual(op.security, [{ bearerAuth: [] }]);
    }
  });
});

describe('one feature on leaves the others off', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ env: { OPS_FEATURES: 'apps' } });
  });
  after(() => s.close());

  test('OPS_FEATURES=apps: apps served, cases and logs 501', async () => {
    assert.equal((await s.request('POST', '/apps', { json: { name: 'on' } })).status, 201);
    assert.equal((await s.request('GET', '/apps')).status, 200);
    assert.equal((await s.request('GET', '/cases')).status, 501);
    assert.equal((await s.request('POST', '/logs', { json: { level: 'info', message: 'm' } })).status, 501);
  });
});
