import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';

describe('tokens', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test('POST /tokens → 201 with the token shown once; it works for its scopes only', async () => {
    const res = await s.request('POST', '/tokens', { json: { name: 'ci', scopes: ['usage:read'] } });
    assert.equal(res.status, 201);
    assert.match(res.body.token, /^ops_live_[0-9A-Za-z]{43}$/);
    assert.match(res.body.id, /^tok_[0-9A-Z]{26}$/);
    assert.equal(res.body.last_four, res.body.token.slice(-4));
    assert.deepEqual(res.body.scopes, ['usage:read']);
    assert.equal((await s.request('GET', '/usage', { token: res.body.token })).status, 200);
    assert.equal((await s.request('GET', '/billing', { token: res.body.token })).status, 403);
    const list = await s.request('GET', '/tokens');
    const listed = list.body.tokens.find((t: { id: string }) => t.id === res.body.id);
    assert.ok(listed);
    assert.equal('token' in listed, false);
    assert.ok(!list.text.includes(res.body.token));
  });

  test('a token cannot grant a scope it does not hold (403); a test token cannot create live tokens', async () => {
    const limited = await s.token(s.tenants.a, ['tokens:write', 'media:read']);
    const res = await s.request('POST', '/tokens', { token: limited, json: { name: 'x', scopes: ['media:read', 'members:write'] } });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'forbidden');
    assert.equal((await s.request('POST', '/tokens', { token: limited, json: { name: 'x', scopes: ['media:read'] } })).status, 201);
    const escalate = await s.request('POST', '/tokens', { token: s.tenants.aTest.token, json: { name: 'x', scopes: ['media:read'], mode: 'live' } });
    assert.equal(escalate.status, 403);
    const testToken = await s.request('POST', '/tokens', { json: { name: 'x', scopes: ['media:read'], mode: 'test' } });
    assert.match(testToken.body.token, /^ops_test_/);
  });

  test('expires_at in the past → 400; in the future → the token expires then', async () => {
    const past = await s.request('POST', '/tokens', { json: { name: 'x', scopes: ['usage:read'], expires_at: '2000-01-01T00:00:00Z' } });
    assert.equal(past.status, 400);
    const soon = new Date(s.clock.now() + 3_600_000).toISOString();
    const res = await s.request('POST', '/tokens', { json: { name: 'x', scopes: ['usage:read'], expires_at: soon } });
    assert.equal(res.body.expires_at, soon);
  });

  test('tenant matrix: another project, mode or organisation neither lists nor revokes a token', async () => {
    const mine = await s.request('POST', '/tokens', { json: { name: 'mine', scopes: ['usage:read'] } });
    for (const other of [s.tenants.aOther, s.tenants.aTest, s.tenants.b]) {
      const list = await s.request('GET', '/tokens?limit=100', { token: other.token });
      assert.ok(!list.body.tokens.some((t: { id: string }) => t.id === mine.body.id));
      const revoke = await s.request('DELETE', `/tokens/${mine.body.id}`, { token: other.token });
      assert.equal(revoke.status, 404);
      assert.equal(revoke.body.error.code, 'not_found');
    }
    assert.equal((await s.request('GET', '/usage', { token: mine.body.token })).status, 200);
  });

  test('pagination: pages are disjoint and complete; a foreign or edited cursor → 400', async () => {
    for (let i = 0; i < 4; i++) await s.request('POST', '/tokens', { json: { name: `p${i}`, scopes: ['usage:read'] } });
    const all = (await s.request('GET', '/tokens?limit=100')).body.tokens.map((t: { id: string }) => t.id);
    const seen: string[] = [];
    let cursor = '';
    do {
      const res = await s.request('GET', `/tokens?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...res.body.tokens.map((t: { id: string }) => t.id));
      assert.equal(res.body.has_more, res.body.next_cursor !== '');
      cursor = res.body.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, all);
    const first = await s.request('GET', '/tokens?limit=1');
    for (const other of [s.tenants.aOther, s.tenants.aTest, s.tenants.b]) {
      const res = await s.request('GET', `/tokens?cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: other.token });
      assert.equal(res.status, 400);
    }
    const edited = first.body.next_cursor.slice(0, -2) + (first.body.next_cursor.endsWith('AA') ? 'BB' : 'AA');
    assert.equal((await s.request('GET', `/tokens?cursor=${encodeURIComponent(edited)}`)).status, 400);
  });

  test('a token and its audit entry are written together: when either cannot be, neither is', async () => {
    // One transaction (MetadataStore.writeAtomically) on SQLite and PostgreSQL alike.
    const { db } = s.server.ctx.metadata;
    const tokenCount = async () => Number((await db.selectFrom('api_tokens').select((e) => e.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const entryCount = async () => Number((await db.selectFrom('audit_entries').select((e) => e.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const [tokens, entries] = [await tokenCount(), await entryCount()];
    const tenant = { orgId: s.tenants.a.orgId, projectId: s.tenants.a.projectId, mode: 'live' as const };
    const origin = { actor: { type: 'token' as const, id: 'tok_x', name: 'x' }, requestId: 'req_x', ip: '127.0.0.1', userAgent: 'test' };
    const create = (t: typeof tenant & { origin: typeof origin }) => s.server.ctx.tokens.create({ tenant: t, name: 'x', scopes: ['usage:read'], expiresAt: null });

    // The entry cannot be written (its actor's name is required): no token either.
    const nameless = { ...origin, actor: { ...origin.actor, name: null as unknown as string } };
    await assert.rejects(create({ ...tenant, origin: nameless }));
    // The token cannot be written (no such organisation): no entry either.
    await assert.rejects(create({ ...tenant, orgId: 'no-such-org', origin }));
    assert.deepEqual([await tokenCount(), await entryCount()], [tokens, entries]);

    // And when both can, one of each, the entry at the token's creation time.
    const created = await create({ ...tenant, origin });
    assert.deepEqual([await tokenCount(), await entryCount()], [tokens + 1, entries + 1]);
    const entry = await db.selectFrom('audit_entries').selectAll().where('target_id', '=', created.id).executeTakeFirstOrThrow();
    assert.deepEqual(
      [entry.org_id, entry.project_id, entry.mode, entry.action, entry.target_type, entry.actor_id, entry.request_id, entry.outcome],
      [tenant.orgId, tenant.projectId, 'live', 'token.create', 'token', 'tok_x', 'req_x', 'success'],
    );
    assert.ok(entry.ts >= created.created_at);
  });

  test('revoking twice → 404', async () => {
    const mine = await s.request('POST', '/tokens', { json: { name: 'once', scopes: ['usage:read'] } });
    assert.equal((await s.request('DELETE', `/tokens/${mine.body.id}`)).status, 200);
    assert.equal((await s.request('DELETE', `/tokens/${mine.body.id}`)).status, 404);
  });
});
