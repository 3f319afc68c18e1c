import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestServer, type TestServer } from '../test-support/test-server.js';

describe('error model, health and OpenAPI', () => {
  let s: TestServer;
  before(async () => {
    // Every route's validators and serializers compiled at start, as `opsctl serve` does: a
    // schema Ajv or fast-json-stringify refuses fails here, whichever routes the tests call.
    s = await startTestServer({ env: { OPS_CORS_ORIGINS: 'https://console.example' }, compileSchemasAtStart: true });
  });
  after(() => s.close());

  const assertError = (res: Awaited<ReturnType<TestServer['request']>>, status: number, code: string) => {
    assert.equal(res.status, status, res.text);
    assert.equal(res.body.error.code, code);
    assert.equal(typeof res.body.error.message, 'string');
    assert.ok(res.body.error.message.length > 0);
    assert.equal(res.body.error.request_id, res.headers.get('x-request-id'));
    assert.deepEqual(Object.keys(res.body), ['error']);
  };

  test('every response carries X-Request-Id', async () => {
    for (const path of ['/healthz', '/readyz', '/v1/openapi.json', '/v1/nope']) {
      const res = await s.request('GET', `${s.apiUrl}${path}`);
      assert.match(res.headers.get('x-request-id') ?? '', /^req_[0-9a-z]{24,}$/);
    }
  });

  test('GET /healthz and /readyz answer without a token', async () => {
    assert.deepEqual((await s.request('GET', `${s.apiUrl}/healthz`, { token: null })).body, { ok: true });
    const ready = await s.request('GET', `${s.apiUrl}/readyz`, { token: null });
    assert.equal(ready.status, 200);
    assert.equal(ready.body.ok, true);
  });

  test('an unknown route under /v1 → 404 not_found in our shape', async () => {
    assertError(await s.request('GET', '/nothing/here'), 404, 'not_found');
    assertError(await s.request('DELETE', '/orgs'), 404, 'not_found');
  });

  test('invalid JSON → 400 bad_request', async () => {
    assertError(await s.request('POST', '/tokens', { body: '{"name": ', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
  });

  test('an empty JSON body → 400 bad_request', async () => {
    assertError(await s.request('POST', '/tokens', { body: '', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
  });

  test('a missing required field and an unknown enum value → 400 bad_request', async () => {
    assertError(await s.request('POST', '/tokens', { json: { scopes: ['media:read'] } }), 400, 'bad_request');
    assertError(await s.request('POST', '/tokens', { json: { name: 'x', scopes: ['media:fly'] } }), 400, 'bad_request');
    assertError(await s.request('POST', '/tokens', { json: { name: 'x', scopes: ['media:read'], mode: 'staging' } }), 400, 'bad_request');
  });

  test('an unknown body field → 400 bad_request naming it, and nothing is changed', async () => {
    const res = await s.request('POST', '/tokens', { json: { name: 'x', scopes: ['media:read'], expires: null } });
    assertError(res, 400, 'bad_request');
    assert.match(res.body.error.message, /unknown field "expires"/);
    const tokens = (await s.request('GET', '/tokens?limit=100')).body.tokens as Array<{ name: string }>;
    assert.ok(!tokens.some((t) => t.name === 'x'));
    // Routes whose body schema says nothing of other fields are strict too (members PATCH).
    const me = s.tenants.a;
    const patch = await s.request('PATCH', `/orgs/${me.orgId}/members/${me.userId}`, { json: { roleId: 'rol_x', role: 'Viewer' } });
    assertError(patch, 400, 'bad_request');
    assert.match(patch.body.error.message, /unknown field "role"/);
    // Free-form objects stay free-form: only the top level is checked.
    const spec = (await s.request('GET', `${s.apiUrl}/v1/openapi.json`)).body;
    const body = spec.paths['/v1/orgs/{orgId}/members/{userId}'].patch.requestBody.content['application/json'].schema;
    assert.equal(body.additionalProperties, false);
  });

  test('a body over the limit → 413 too_large with the limit in bytes', async () => {
    const res = await s.request('POST', '/tokens', { body: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }), headers: { 'content-type': 'application/json' } });
    assertError(res, 413, 'too_large');
    assert.equal(res.body.error.limit, 1024 * 1024);
  });

  test('a body of a type the endpoint does not take → 415 unsupported_type', async () => {
    assertError(await s.request('POST', '/tokens', { body: 'name=x', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_type');
  });

  test('invalid limit values are refused, never clamped', async () => {
    const path = `/orgs/${s.tenants.a.orgId}/members`;
    for (const limit of ['0', '101', '-1', '1.5', 'ten', '']) {
      const res = await s.request('GET', `${path}?limit=${limit}`);
      assertError(res, 400, 'bad_request');
    }
    assert.equal((await s.request('GET', `${path}?limit=100`)).status, 200);
    assert.equal((await s.request('GET', `${path}?limit=1`)).status, 200);
  });

  test('CORS: preflight answers only the configured origins and exposes our headers', async () => {
    const allowed = await fetch(`${s.baseUrl}/tokens`, {
      method: 'OPTIONS',
      headers: { origin: 'https://console.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    });
    assert.equal(allowed.headers.get('access-control-allow-origin'), 'https://console.example');
    const get = await fetch(`${s.apiUrl}/healthz`, { headers: { origin: 'https://console.example' } });
    assert.match(get.headers.get('access-control-expose-headers') ?? '', /X-Request-Id/);
    const denied = await fetch(`${s.baseUrl}/tokens`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(denied.headers.get('access-control-allow-origin'), null);
  });

  test('GET /v1/openapi.json is a valid OpenAPI 3.1 document with every route and its scope', async () => {
    const res = await s.request('GET', '/openapi.json', { token: null });
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, '3.1.0');
    const validator = new Validator();
    const result = await validator.validate(res.body);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    const paths = res.body.paths as Record<string, Record<string, { 'x-required-scope'?: string; security?: unknown }>>;
    for (const path of ['/v1/orgs/{orgId}/members', '/v1/orgs/{orgId}/members/{userId}', '/v1/tokens', '/v1/tokens/{id}', '/v1/usage', '/v1/billing']) {
      assert.ok(paths[path], `missing ${path}`);
      for (const operation of Object.values(paths[path]!)) {
        assert.ok(operation['x-required-scope'], `${path} documents no scope`);
        assert.deepEqual(operation.security, [{ bearerAuth: [] }]);
      }
    }
  });
});
