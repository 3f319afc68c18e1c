import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { generateToken, hashToken } from './token-secret.js';
import { createContext } from '../app/context.js';
import { systemClock } from '../shared/clock.js';
import { legs } from '../test-support/ci.js';


describe('authentication and scopes', () => {
  let s: TestServer;
  let membersPath: string;
  before(async () => {
    s = await startTestServer();
    membersPath = `/orgs/${s.tenants.a.orgId}/members`;
  });
  after(() => s.close());

  const assertUnauthorized = (res: Awaited<ReturnType<TestServer['request']>>) => {
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'unauthorized');
    assert.equal(res.headers.get('www-authenticate'), 'Bearer');
    assert.equal(res.body.error.request_id, res.headers.get('x-request-id'));
  };

  test('no Authorization header → 401 unauthorized with WWW-Authenticate: Bearer', async () => {
    assertUnauthorized(await s.request('GET', membersPath, { token: null }));
  });

  test('a malformed header, an unknown token and a wrong scheme → 401', async () => {
    assertUnauthorized(await s.request('GET', membersPath, { token: 'nonsense' }));
    assertUnauthorized(await s.request('GET', membersPath, { token: generateToken('live') }));
    assertUnauthorized(await s.request('GET', membersPath, { token: null, headers: { authorization: `Basic ${s.tenants.a.token}` } }));
  });

  test('an expired token → 401', async () => {
    const token = await s.token(s.tenants.a, 'all', { expiresAt: new Date(s.clock.now() + 60_000).toISOString() });
    assert.equal((await s.request('GET', membersPath, { token })).status, 200);
    s.clock.advance(61_000);
    try {
      const res = await s.request('GET', membersPath, { token });
      assertUnauthorized(res);
      assert.match(res.body.error.message, /expired/);
    } finally {
      s.clock.advance(-61_000);
    }
  });

  test('a revoked token → 401', async () => {
    const token = await s.token(s.tenants.a, ['tokens:write']);
    const list = await s.request('GET', '/tokens', { token });
    const me = list.body.tokens.find((t: { last_four: string }) => t.last_four === token.slice(-4));
    assert.equal((await s.request('DELETE', `/tokens/${me.id}`, { token })).status, 200);
    assertUnauthorized(await s.request('GET', '/tokens', { token }));
  });

  // DECISIONS §3/§4: opsctl acts on the running server and a revoked token is unauthorized. On
  // SQLite the token cache is checked against the commit counter, so another process's change is
  // seen by the very next request (PostgreSQL keeps the OPS_AUTH_CACHE_MS delay: opsctl.test.ts).
  // SQLite only: on PostgreSQL another process's change waits for OPS_AUTH_CACHE_MS (or NATS).
  legs.sqlite().test('a token revoked or re-planned by another process: the very next request sees it (SQLite)', async () => {
    const token = await s.token(s.tenants.a, ['members:read', 'usage:read', 'logs:read']);
    // Used twice: the second answer comes from the token cache.
    assert.equal((await s.request('GET', membersPath, { token })).status, 200);
    // A query writes its quota counter: this server's own write, which leaves the token cached
    // (database.ts, unstampedTables); another process's writes below are still seen at once.
    assert.equal((await s.request('POST', '/query', { token, json: { q: '' } })).status, 200);
    assert.equal((await s.request('GET', '/usage', { token })).body.plan, 'pro');
    const cli = await createContext(s.server.ctx.config, systemClock);
    try {
      await cli.orgs.setPlan(s.tenants.a.orgId, 'starter');
      assert.equal((await s.request('GET', '/usage', { token })).body.plan, 'starter');
      await cli.orgs.setPlan(s.tenants.a.orgId, 'pro');
      assert.equal((await s.request('GET', '/usage', { token })).body.plan, 'pro');
      assert.equal((await s.request('POST', '/query', { token, json: { q: '' } })).status, 200);
      const row = await cli.metadata.db.selectFrom('api_tokens').select('id').where('token_hash', '=', hashToken(token)).executeTakeFirstOrThrow();
      await cli.tokens.revokeById(row.id);
    } finally {
      await cli.close();
    }
    const res = await s.request('POST', '/query', { token, json: { q: '' } });
    assertUnauthorized(res);
    assert.match(res.body.error.message, /revoked/);
    assertUnauthorized(await s.request('GET', membersPath, { token }));
  });

  test('a token without the scope → 403 forbidden naming required_scope', async () => {
    const token = await s.token(s.tenants.a, ['media:read']);
    const res = await s.request('GET', membersPath, { token });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'forbidden');
    assert.equal(res.body.error.required_scope, 'members:read');
  });

  test('the token is checked before the body is read: a bad token with bad JSON is 401, not 400', async () => {
    const res = await s.request('POST', '/tokens', { token: 'nope', body: '{bad', headers: { 'content-type': 'application/json' } });
    assertUnauthorized(res);
  });

  test('token secrets are stored only as SHA-256 hashes', async () => {
    const rows = await s.server.ctx.metadata.db.selectFrom('api_tokens').selectAll().execute();
    const everything = JSON.stringify(rows);
    for (const tenant of Object.values(s.tenants)) {
      assert.ok(!everything.includes(tenant.token), 'a token was stored in plain text');
      assert.ok(!everything.includes(tenant.token.slice(9)), 'a token secret was stored in plain text');
    }
    assert.ok(rows.every((r) => /^[0-9a-f]{64}$/.test(r.token_hash)));
  });

  test('tokens never appear in the logs', async () => {
    await s.request('GET', membersPath);
    await s.request('GET', `${membersPath}?cursor=x`);
    await s.request('POST', '/tokens', { json: { name: 'logged?', scopes: ['media:read'] } });
    assert.ok(s.logs.length > 0, 'the server logged nothing');
    const all = s.logs.join('\n');
    for (const tenant of Object.values(s.tenants)) assert.ok(!all.includes(tenant.token.slice(9)), 'a token appears in the logs');
    assert.ok(!/ops_(live|test)_[0-9A-Za-z]{20,}/.test(all));
  });
});

describe('rate limit per token', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ env: { OPS_RATE_LIMIT_PER_SECOND: '1', OPS_RATE_LIMIT_BURST: '5' } });
  });
  after(() => s.close());

  test('past the burst → 429 rate_limited with Retry-After and RateLimit-* headers; other tokens unaffected', async () => {
    const path = `/orgs/${s.tenants.a.orgId}/members`;
    const answers = await Promise.all(Array.from({ length: 8 }, () => s.request('GET', path)));
    const limited = answers.filter((r) => r.status === 429);
    assert.ok(limited.length >= 2, `expected some 429s, got ${answers.map((r) => r.status)}`);
    const res = limited[0]!;
    assert.equal(res.body.error.code, 'rate_limited');
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
    assert.equal(res.headers.get('ratelimit-limit'), '5');
    assert.equal(res.headers.get('ratelimit-remaining'), '0');
    const ok = answers.find((r) => r.status === 200)!;
    assert.ok(Number(ok.headers.get('ratelimit-remaining')) < 5);
    assert.equal((await s.request('GET', `/orgs/${s.tenants.b.orgId}/members`, { token: s.tenants.b.token })).status, 200);
  });
});
